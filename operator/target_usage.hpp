#pragma once
// The target's side of a run: its pods' CPU, resident memory and restarts
// over the run's window (and each stage's), read from Prometheus after the
// run and written to status.target beside the result, the way the posts in
// the seeds print `sar` and `free` next to ab's report.
//
// Everything here is pure: the windows from the final status, the PromQL,
// the status and its TargetMetrics condition from what was measured, and
// when to measure. The controller resolves the pods and asks Prometheus
// (prometheus_client.hpp).
//
// The series are cAdvisor's, as the kubelet exports them at
// /metrics/cadvisor: container_cpu_usage_seconds_total, container_memory_rss
// and container_start_time_seconds, labelled namespace, pod and container
// (container="" is a pod-level cgroup, never counted; the sandbox has no
// container label on current kubelets and "POD" on older ones).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/status.hpp"
#include "kubeload/spec.hpp"
#include "operator/config.hpp"
#include "operator/views.hpp"

namespace kubeload::controller {

// The condition that says whether status.target is there, and why not.
inline constexpr std::string_view kTargetMetricsCondition =
    api::to_string(api::ConditionType::TargetMetrics);

struct UsageWindow {
  Timestamp start;
  Timestamp end;
  bool operator==(const UsageWindow&) const = default;
};

struct RunWindows {
  UsageWindow run;
  std::vector<UsageWindow> stages;  // by stage index, back to back inside `run`
  // warmupRequests: the warm-up's length is not known, so `run` starts at
  // the start barrier and holds the warm-up too.
  bool includes_warmup = false;
};

// The measured windows of a finished run, from its status (startTime, the
// barrier, to the second; result.durationSeconds; stages[].plannedDurationSeconds)
// and the spec's time-bounded warm-up. Unset when the run measured nothing.
std::optional<RunWindows> run_windows(const api::LoadTestStatus& status, const LoadTestSpec& spec);

// ---- PromQL -------------------------------------------------------------------------

// The matcher of the target's real containers: namespace, the pods by
// name (regex-escaped, anchored by PromQL), container set and not "POD".
std::string container_matcher(const std::string& namespace_, const std::vector<std::string>& pods);

struct UsageQueries {
  Timestamp at;            // every query is evaluated at the window's end
  std::string cpu_mean;    // cores, averaged over the window
  std::string cpu_max;     // cores, the highest rate over rate_window inside it
  std::string memory_max;  // bytes, the highest sum of RSS inside it
  std::string restarts;    // containers (re)started inside it
};

// The queries for one window. rate_window = 4 scrape intervals (Grafana's
// $__rate_interval); the maximum only looks at rates whose whole range lies
// inside the window, so a busier stage before never leaks into this one.
UsageQueries usage_queries(const std::string& matcher, const UsageWindow& window,
                           std::chrono::seconds scrape_interval);

// ---- what was measured ----------------------------------------------------------------

struct Usage {
  std::optional<double> cpu_mean;  // unset: no samples in the window
  std::optional<double> cpu_max;   // unset: the window is shorter than a rate window and a step
  std::optional<double> memory_max_bytes;
  std::optional<uint64_t> restarts;
  bool operator==(const Usage&) const = default;
};

struct TargetMeasurement {
  // Empty when measured; else the TargetMetrics reason and message.
  std::string reason;
  std::string message;
  // A failure worth another try (Prometheus did not answer).
  bool transient = false;
  std::string namespace_;
  std::string selector;  // the pods' label selector, as the API takes it
  std::vector<std::string> pods;
  Usage run;
  std::vector<Usage> stages;
};

// What the controller needs to measure: where the pods are and how they are
// selected (from the Service's selector when `selector` is empty), and the windows.
struct TargetRequest {
  std::string namespace_;
  std::string service;   // the target Service (same namespace), when no podSelector
  std::string selector;  // spec.target.podSelector, in the API's syntax
  RunWindows windows;
};

// ---- the measurement, step by step --------------------------------------------------

// What the controller has read for a TargetRequest so far, each read in the
// order judge_target asks for it. HTTP statuses are 0 until read; a read that
// failed otherwise (not 200, 403 or 404) is the controller's to retry.
struct TargetFindings {
  int service_status = 0;  // GET the target Service (a request without a selector)
  std::string service_error;
  std::map<std::string, std::string> service_selector;  // its spec.selector
  int pods_status = 0;                                  // LIST the pods by the selector
  std::string pods_error;
  std::vector<std::string> pods;
  bool usage_read = false;  // Prometheus, over the run's window (and the stages')
  Usage run;
  std::vector<Usage> stages;
  std::string prometheus_error;  // non-empty: the query failed
  bool prometheus_transient = false;
};

enum class TargetRead { Service, Pods, Usage };

// Either the next read, or the measurement (measured, or the reason it is not).
struct TargetStep {
  std::optional<TargetRead> read;
  TargetMeasurement measurement;
};

// Every reason a measurement can end with (Forbidden, TargetNotFound,
// NoPodSelector, NoTargetPods, NoSamples, TooFewSamples, PrometheusUnavailable,
// PrometheusQueryFailed), decided from the findings alone.
TargetStep judge_target(const TargetRequest& request, const TargetFindings& found,
                        const std::string& prometheus_url);

// The pods' label selector: the request's, else the Service's (empty until
// the Service was read, or when it selects by no label).
std::string target_selector(const TargetRequest& request, const TargetFindings& found);

// ---- the decision -------------------------------------------------------------------

struct TargetUsageStep {
  std::optional<TargetRequest> measure;  // due now: observe() reads it (lookups_for)
  std::optional<std::chrono::milliseconds> requeue_after;
};

// For a final status (Succeeded or Failed): sets status.target and the
// TargetMetrics condition from the current status (kept once True or
// False), this pass's measurement, or why there is none; and says whether
// to measure now or when to look again. Prometheus is asked once the
// window's end is 3 scrape intervals (at least 15 s) behind, so its last
// samples are in; a Prometheus that does not answer is asked again until
// kTargetMetricsGiveUp after the window. A status that is not final is left alone.
TargetUsageStep plan_target_usage(const api::LoadTestStatus& current, api::LoadTestStatus& status,
                                  const ParsedLoadTest& parsed, const OperatorConfig& config,
                                  const std::optional<TargetMeasurement>& measured, Timestamp now);

// Whether a final run's target measurement is still to come (TargetMetrics
// Unknown: Prometheus's last scrapes are not in yet, or it is asked again):
// an experiment or a search that sums up its runs' target usage waits for
// it, at most kTargetMetricsGiveUp after the run's window.
bool target_usage_pending(const api::LoadTestStatus& status);

inline constexpr std::chrono::minutes kTargetMetricsGiveUp{10};
inline constexpr std::chrono::seconds kTargetMetricsRetry{30};

// status.target for a measurement (its `reason` empty).
api::TargetUsageStatus target_status(const TargetMeasurement& measured, const RunWindows& windows);

}  // namespace kubeload::controller
