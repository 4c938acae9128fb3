#include "operator/views.hpp"

#include <charconv>
#include <system_error>

#include "kubeload/json_access.hpp"
#include "kubeload/text.hpp"
#include "operator/labels.hpp"
#include "operator/timestamp.hpp"

namespace kubeload::controller {
namespace {

using json_access::count_or_zero;
using json_access::find_condition;
using json_access::member;
using json_access::text;
using nlohmann::json;

bool condition_true(const json& conditions, std::string_view type) {
  const json* c = find_condition(conditions, type);
  return c != nullptr && text(member(*c, "status")) == "True";
}

std::optional<uint32_t> decimal(const std::string& value) {
  uint32_t number = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return number;
}

std::string termination_detail(const json& pod) {
  const json& status = member(pod, "status");
  const json& containers = member(status, "containerStatuses");
  if (containers.is_array()) {
    for (const json& container : containers) {
      const json& terminated = member(member(container, "state"), "terminated");
      if (!terminated.is_object()) continue;
      std::string detail = text(member(terminated, "reason"));
      if (member(terminated, "exitCode").is_number_integer()) {
        if (!detail.empty()) detail += ", ";
        detail += "exit code " + std::to_string(member(terminated, "exitCode").get<int64_t>());
      }
      // What the worker wrote to its termination log (policy File: never a
      // log tail), e.g. why it refused its target; the first line says it.
      std::string message = text(member(terminated, "message"));
      message = message.substr(0, message.find('\n'));
      if (message.size() > kMaxPodDetail)
        message = std::string(utf8_head(message, kMaxPodDetail)) + "...";
      if (!message.empty()) detail += (detail.empty() ? "" : ": ") + message;
      if (!detail.empty()) return detail;
    }
  }
  // Evictions and node loss leave no container state, only the pod's reason.
  std::string detail = text(member(status, "reason"));
  const std::string message = text(member(status, "message"));
  if (!message.empty()) detail += (detail.empty() ? "" : ": ") + message;
  return detail;
}

std::string waiting_detail(const json& pod) {
  const json& status = member(pod, "status");
  const json& containers = member(status, "containerStatuses");
  if (containers.is_array()) {
    for (const json& container : containers) {
      const std::string reason =
          text(member(member(member(container, "state"), "waiting"), "reason"));
      if (!reason.empty() && reason != "ContainerCreating") return reason;
    }
  }
  const json* scheduled = find_condition(member(status, "conditions"), "PodScheduled");
  if (scheduled != nullptr && text(member(*scheduled, "status")) == "False") {
    const std::string reason = text(member(*scheduled, "reason"));
    return reason.empty() ? "not scheduled" : reason;
  }
  return "";
}

}  // namespace

std::string controller_uid(const json& object) {
  const json& owners = member(member(object, "metadata"), "ownerReferences");
  if (!owners.is_array()) return "";
  for (const json& owner : owners) {
    if (member(owner, "controller") == json(true)) return text(member(owner, "uid"));
  }
  return "";
}

PodView pod_view(const json& pod) {
  return pod_view(std::make_shared<const json>(pod));
}

PodView pod_view(std::shared_ptr<const json> shared) {
  PodView view;
  view.object = std::move(shared);
  const json& pod = *view.object;
  const json& metadata = member(pod, "metadata");
  const json& status = member(pod, "status");
  view.name = text(member(metadata, "name"));
  view.ip = text(member(status, "podIP"));
  view.phase = text(member(status, "phase"));
  for (const char* where : {"annotations", "labels"}) {
    view.index = decimal(text(member(member(metadata, where), kCompletionIndexKey)));
    if (view.index) break;
  }
  view.ready = view.phase == "Running" && !view.ip.empty() &&
               condition_true(member(status, "conditions"), "Ready");
  view.deleting = !member(metadata, "deletionTimestamp").is_null();
  view.loadtest_uid = text(member(member(metadata, "labels"), kLoadTestUidLabel));
  view.controller_uid = controller_uid(pod);
  const json& containers = member(status, "containerStatuses");
  if (containers.is_array()) {
    for (const json& container : containers) {
      if (text(member(container, "name")) != kContainerName) continue;
      view.termination_log =
          text(member(member(member(container, "state"), "terminated"), "message"));
    }
  }
  if (view.phase == "Failed") view.failure = termination_detail(pod);
  if (!view.ready) view.waiting = waiting_detail(pod);
  return view;
}

JobView job_view(const json& job) {
  JobView view;
  view.object = job;
  const json& metadata = member(job, "metadata");
  view.name = text(member(metadata, "name"));
  view.uid = text(member(metadata, "uid"));
  view.resource_version = text(member(metadata, "resourceVersion"));
  view.owner_uid = controller_uid(job);
  view.managed_by_us = text(member(member(metadata, "labels"), kManagedByLabel)) == kManagedBy;
  view.deleting = !member(metadata, "deletionTimestamp").is_null();
  view.created = parse_time(text(member(metadata, "creationTimestamp")));
  const std::string start_at = text(member(member(metadata, "annotations"), kStartAtAnnotation));
  if (!start_at.empty()) {
    int64_t ms = 0;
    const auto [end, ec] = std::from_chars(start_at.data(), start_at.data() + start_at.size(), ms);
    if (ec == std::errc() && end == start_at.data() + start_at.size() && ms > 0) {
      view.start_at = Timestamp(std::chrono::milliseconds(ms));
    } else {
      view.start_at_malformed = true;
    }
  }
  const json& conditions = member(member(job, "status"), "conditions");
  view.failed = condition_true(conditions, "Failed");
  if (view.failed)
    view.failed_reason = text(member(*find_condition(conditions, "Failed"), "reason"));
  view.complete = condition_true(conditions, "Complete");
  view.pods_succeeded = count_or_zero(member(member(job, "status"), "succeeded"));
  view.pods_failed = count_or_zero(member(member(job, "status"), "failed"));
  return view;
}

ConfigMapView config_map_view(const json& config_map) {
  ConfigMapView view;
  view.name = text(member(member(config_map, "metadata"), "name"));
  view.resource_version = text(member(member(config_map, "metadata"), "resourceVersion"));
  view.controller_uid = controller_uid(config_map);
  if (const json& data = member(config_map, "data"); data.is_object()) view.data = data;
  return view;
}

}  // namespace kubeload::controller
