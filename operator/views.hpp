#pragma once
// Typed views of the Kubernetes objects a reconcile reads, parsed once from
// the JSON the API server returns. Every fact the decisions use ("ready",
// "the worker index", "ours") is defined here and nowhere else.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "operator/labels.hpp"
#include "operator/timestamp.hpp"

namespace kubeload::controller {

struct PodView {
  // As the pod cache holds it (metadata and status; status.cpp reads container
  // details), shared with the cache rather than copied: a pass over 1,000
  // workers holds no second copy of their pods.
  std::shared_ptr<const nlohmann::json> object;
  std::string name;
  std::string ip;
  std::string phase;  // Pending, Running, Succeeded, Failed, Unknown
  // batch.kubernetes.io/job-completion-index, from the annotation or the
  // label; unset when neither is a plain decimal number.
  std::optional<uint32_t> index;
  // Running, Ready=True and an IP: the operator can reach it. The one
  // definition of "ready" for both the start barrier and the status.
  bool ready = false;
  bool deleting = false;        // metadata.deletionTimestamp is set
  std::string loadtest_uid;     // the kubeload.dev/loadtest-uid label
  std::string controller_uid;   // the controlling owner's uid (the Job)
  std::string termination_log;  // the loadgen container's termination message, if any
  // Failed: why ("OOMKilled, exit code 137: <its message's first line>").
  std::string failure;
  // Not ready: what it waits for ("ImagePullBackOff", "Unschedulable"), if
  // it says.
  std::string waiting;
};
// Characters of a crashed container's message kept in PodView::failure.
inline constexpr std::size_t kMaxPodDetail = 200;

struct JobView {
  nlohmann::json object;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string owner_uid;  // the controlling LoadTest's uid
  bool managed_by_us = false;
  bool deleting = false;
  std::optional<Timestamp> created;
  std::optional<Timestamp> start_at;  // kubeload.dev/start-at
  bool start_at_malformed = false;
  bool failed = false;  // condition Failed=True
  std::string failed_reason;
  bool complete = false;        // condition Complete=True
  uint64_t pods_succeeded = 0;  // status.succeeded
  uint64_t pods_failed = 0;     // status.failed
};

// A ConfigMap as a reconcile reads it: the resourceVersion (the precondition
// of the next write) and the data (string values; api/kept_results.hpp
// decodes the results ConfigMap's).
struct ConfigMapView {
  std::string name;
  std::string resource_version;
  std::string controller_uid;  // the controlling owner's uid: whose it is
  nlohmann::json data = nlohmann::json::object();
};

PodView pod_view(std::shared_ptr<const nlohmann::json> pod);
PodView pod_view(const nlohmann::json& pod);  // a copy of `pod` (tables in tests)
JobView job_view(const nlohmann::json& job);
ConfigMapView config_map_view(const nlohmann::json& config_map);

// The uid of the controlling owner reference (controller: true), "" if none.
std::string controller_uid(const nlohmann::json& object);

}  // namespace kubeload::controller
