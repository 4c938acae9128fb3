// The LoadTest parser against arbitrary YAML/JSON: it never throws, never
// crashes, and either accepts the manifest or says what is wrong.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kubeload/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const kubeload::ParsedLoadTest parsed = kubeload::parse_loadtest(text);
  for (const auto& error : parsed.errors) {
    if (error.to_string().empty()) std::abort();
  }
  return 0;
}
