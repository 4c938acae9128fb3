#pragma once
// The operator's Prometheus metrics (names in api.md): each LoadTest's phase,
// verdict and headline results, and the controller's own health.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kubeload::controller {

class OperatorMetrics {
 public:
  OperatorMetrics();
  ~OperatorMetrics();
  OperatorMetrics(const OperatorMetrics&) = delete;
  OperatorMetrics& operator=(const OperatorMetrics&) = delete;

  // From a LoadTest and the status just computed for it.
  void observe_loadtest(const nlohmann::json& loadtest, const nlohmann::json& status);
  void forget_loadtest(const std::string& namespace_, const std::string& name);
  void observe_reconcile(const std::string& result, double seconds);
  void set_queue_depth(double depth);
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> families_;
  std::mutex mutex_;
  std::map<std::string, std::map<std::string, std::string>> labels_of_;  // key -> labels
};

}  // namespace kubeload::controller
