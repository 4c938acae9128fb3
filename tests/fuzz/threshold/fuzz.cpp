// The threshold grammar against arbitrary expressions: a threshold or a
// message, and an accepted expression parses again to the same threshold.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "kubeload/threshold.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = kubeload::parse_threshold(text);
  if (const auto* message = std::get_if<std::string>(&parsed)) {
    if (message->empty()) std::abort();
    return 0;
  }
  const auto& threshold = std::get<kubeload::Threshold>(parsed);
  if (!(threshold.value >= 0)) std::abort();  // never negative, never NaN
  const auto again = kubeload::parse_threshold(threshold.expression);
  const auto* same = std::get_if<kubeload::Threshold>(&again);
  if (same == nullptr || same->metric != threshold.metric || same->op != threshold.op ||
      same->scope != threshold.scope || same->request != threshold.request ||
      same->value != threshold.value) {
    std::abort();
  }
  return 0;
}
