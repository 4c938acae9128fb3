#include "operator/event_filter.hpp"

#include "operator/kube/list_watch.hpp"

namespace kubeload::controller {
namespace {

nlohmann::json what_counts(const nlohmann::json& object) {
  const nlohmann::json metadata = object.value("metadata", nlohmann::json::object());
  return {{"uid", metadata.value("uid", "")},
          {"generation", metadata.value("generation", nlohmann::json())},
          {"labels", metadata.value("labels", nlohmann::json())},
          {"annotations", metadata.value("annotations", nlohmann::json())},
          {"deletionTimestamp", metadata.value("deletionTimestamp", nlohmann::json())}};
}

}  // namespace

bool LoadTestEventFilter::should_reconcile(kube::WatchEventType type,
                                           const nlohmann::json& object) {
  const std::string key = kube::object_key(object);
  std::lock_guard lock(mutex_);
  switch (type) {
    case kube::WatchEventType::Deleted:
      seen_.erase(key);
      return true;
    case kube::WatchEventType::Added:
    case kube::WatchEventType::Modified: {
      nlohmann::json now = what_counts(object);
      const auto it = seen_.find(key);
      const bool changed = it == seen_.end() || it->second != now;
      seen_[key] = std::move(now);
      return changed || type == kube::WatchEventType::Added;
    }
    case kube::WatchEventType::Bookmark:
    case kube::WatchEventType::Error:
      break;
  }
  return false;
}

}  // namespace kubeload::controller
