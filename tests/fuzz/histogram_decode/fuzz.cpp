// The HdrHistogram decoder against arbitrary text (what a worker's /result
// carries): it throws std::invalid_argument or returns a histogram whose
// encoding decodes to an equal histogram; percentiles of it are defined.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "kubeload/histogram.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto histogram = kubeload::Histogram::decode_base64(text);
    const auto again = kubeload::Histogram::decode_base64(histogram.encode_base64());
    if (!(again == histogram)) std::abort();
    (void)histogram.value_at_percentile(99.9);
    (void)histogram.mean();
    (void)histogram.stddev();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
