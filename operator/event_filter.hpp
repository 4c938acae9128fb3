#pragma once
// Which LoadTest watch events call for a reconcile, as controller-runtime's
// GenerationChangedPredicate: a new object, a deleted one, a new generation
// (the spec), labels, annotations or a deletion under way. A change of the
// status alone does not: the operator writes the status itself, and a pass
// per own write turned one running LoadTest into 20-40 passes a second.
// The LoadTest's own requeues, its Job's and pods' events and the resync
// bring every other pass.

#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "operator/kube/watch_event_parser.hpp"

namespace kubeload::controller {

class LoadTestEventFilter {
 public:
  bool should_reconcile(kube::WatchEventType type, const nlohmann::json& object);

 private:
  std::mutex mutex_;
  std::map<std::string, nlohmann::json> seen_;  // key -> what counts as a change
};

}  // namespace kubeload::controller
