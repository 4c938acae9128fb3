// The HdrHistogram decoder against arbitrary text (what a worker's /result
// carries): it throws std::invalid_argument or returns a histogram whose
// encoding decodes to an equal histogram; percentiles of it are defined. A
// decoder kept from input to input (as one result's dozens of histograms
// share one) answers each exactly as a fresh one does, whatever came before.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kubeload/histogram.hpp"

namespace {

// What a decode gives: the histogram, or the error's text.
struct Outcome {
  std::optional<kubeload::Histogram> histogram;
  std::string error;
};

template <typename Decode>
Outcome outcome_of(const Decode& decode) {
  Outcome outcome;
  try {
    outcome.histogram = decode();
  } catch (const std::invalid_argument& e) {
    outcome.error = e.what();
  }
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kubeload::HistogramDecoder kept;  // carries its state from one input to the next
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Outcome fresh = outcome_of([&] { return kubeload::Histogram::decode_base64(text); });
  const Outcome reused = outcome_of([&] { return kept.decode_base64(text); });
  if (fresh.histogram.has_value() != reused.histogram.has_value() || fresh.error != reused.error) {
    std::abort();
  }
  if (!fresh.histogram) return 0;
  const kubeload::Histogram& histogram = *fresh.histogram;
  if (!(*reused.histogram == histogram) || reused.histogram->max() != histogram.max() ||
      reused.histogram->min() != histogram.min()) {
    std::abort();
  }
  const auto again = kubeload::Histogram::decode_base64(histogram.encode_base64());
  if (!(again == histogram)) std::abort();
  (void)histogram.value_at_percentile(99.9);
  (void)histogram.mean();
  (void)histogram.stddev();
  return 0;
}
