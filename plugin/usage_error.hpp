#pragma once
// A bad command line: the plugin prints it with the usage and exits 2.

#include <stdexcept>

namespace kubeload::plugin {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kubeload::plugin
