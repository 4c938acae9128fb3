// The kubeconfig parser against arbitrary YAML: a configuration or a
// ConfigError, nothing else. Relative file references resolve under a
// directory that does not exist.
#include <cstddef>
#include <cstdint>
#include <string>

#include "operator/kube/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)kubeload::kube::parse_kubeconfig(text, "fuzz", "/nonexistent-kubeload-fuzz");
  } catch (const kubeload::kube::ConfigError&) {
  }
  return 0;
}
