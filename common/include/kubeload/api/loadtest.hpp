#pragma once
// The LoadTest object (kubeload.dev/v1alpha1) as typed values: its metadata,
// its spec as given (parsed by kubeload/spec.hpp) and its status, field by
// field as crds/kubeload.dev_loadtests.yaml declares it. Each type has exactly
// one to_json and one from_json (nlohmann's ADL hooks, so `json j = status;`
// and `j.get<LoadTestStatus>()` both work); no other code reads a status
// field by its key. tests/unit/common/crd_test.cpp checks the schema against
// these types: a field added here and not there (or there and not here) fails.
//
// Reading is lenient, as the API server already checked the types against
// the schema: a member that is missing or of another type reads as unset.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/status.hpp"

namespace kubeload::api {

// metav1.Time: RFC 3339 in UTC with whole seconds.
using Time = std::chrono::system_clock::time_point;
// `time` to the whole second metav1.Time keeps, so a value decided in this
// pass equals the one read back from the status in the next.
Time whole_seconds(Time time);

// ---- metadata (metav1.ObjectMeta, the fields the operator reads)

struct ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::optional<Time> creation_timestamp;
  bool deleting = false;  // deletionTimestamp is set
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  // The prefix the API server named it from ("checkout-" of "checkout-x7k2p"),
  // when it was created so. Last, so that an aggregate initialisation of the
  // fields above keeps its meaning.
  std::string generate_name;
  bool operator==(const ObjectMeta&) const = default;
};

// ---- status

// metav1.Condition. The type is kept as spelled, so a condition of another
// operator version survives a rewrite.
struct Condition {
  std::string type;
  ConditionStatus status = ConditionStatus::Unknown;
  std::string reason;
  std::string message;
  Time last_transition_time;
  int64_t observed_generation = 0;
  bool operator==(const Condition&) const = default;
};
// The condition of `type` in `conditions`, or nullptr.
const Condition* find_condition(const std::vector<Condition>& conditions, ConditionType type);

// What the workers used of their CPU over the measured run
// (status.workers.cpu), as far as they said: the busiest of them tells
// whether the generator was the bottleneck (the GeneratorSaturated
// condition).
struct WorkersCpuStatus {
  uint64_t measured = 0;  // workers that reported their CPU use
  double seconds = 0;     // the CPU seconds they used together
  uint32_t busiest_worker = 0;
  double max_utilization = 0;  // the busiest one's fraction of the CPU it may use
  // The busiest one's CPU limit in cores; unset: it had none (its
  // utilization is then of the CPUs its node lets it use).
  std::optional<double> limit_cores;
  bool operator==(const WorkersCpuStatus&) const = default;
};

struct WorkerCounts {
  uint64_t desired = 0;
  uint64_t ready = 0;
  uint64_t succeeded = 0;
  uint64_t failed = 0;
  // max - min of the workers' start times, once every worker started.
  std::optional<int64_t> start_skew_ms;
  // Last, so that an aggregate initialisation of the counts keeps its meaning.
  std::optional<WorkersCpuStatus> cpu = std::nullopt;
  bool operator==(const WorkerCounts&) const = default;
};

// One row of status.thresholds: a threshold of spec.thresholds, judged.
struct ThresholdRow {
  std::string expression;
  std::string observed;         // as shown ("12.3ms")
  std::optional<double> value;  // the observed number, when there is one
  bool passed = false;
  bool operator==(const ThresholdRow&) const = default;
};

struct BaselineCheck {
  std::string metric;
  std::optional<double> observed;  // unset: not measured in this run or the baseline
  std::optional<double> baseline;
  std::string delta;  // "+3.5%", "+inf%", "n/a"
  double max_regression_percent = 0;
  bool passed = false;
  bool operator==(const BaselineCheck&) const = default;
};

struct BaselineOutcome {
  std::optional<std::string> load_test_name;  // the run compared with, when one was found
  std::optional<std::string> result_name;     // its LoadTestResult record
  // With baseline.window > 1: every record whose median was compared with,
  // newest first (result_name is the first).
  std::vector<std::string> results;
  std::map<std::string, std::string> deltas;  // metric -> delta
  std::vector<BaselineCheck> checks;
  bool passed = false;
  std::optional<std::string> message;  // why nothing was compared
  bool operator==(const BaselineOutcome&) const = default;
};

struct UsageWindowStatus {
  Time start;
  Time end;
  bool includes_warmup = false;
  bool operator==(const UsageWindowStatus&) const = default;
};

// The target pods' resource use over a window, as Prometheus measured it.
struct UsageFigures {
  std::optional<double> cpu_cores_mean;
  std::optional<double> cpu_cores_max;
  std::optional<int64_t> memory_bytes_max;
  std::optional<uint64_t> restarts;
  bool operator==(const UsageFigures&) const = default;
};

struct TargetStageUsage {
  uint64_t index = 0;
  UsageWindowStatus window;
  UsageFigures usage;
  bool operator==(const TargetStageUsage&) const = default;
};

// Another LoadTest that loaded the same target pods during this run's
// window (status.target.sharedWith).
struct SharedRun {
  std::string namespace_;
  std::string name;
  bool operator==(const SharedRun&) const = default;
};
// "namespace/name", as the TargetShared condition and the reports name it.
std::string to_string(const SharedRun& run);

struct TargetUsageStatus {
  std::string namespace_;
  std::string selector;
  uint64_t pods = 0;
  UsageWindowStatus window;
  UsageFigures usage;
  std::vector<TargetStageUsage> stages;
  // Where the run's load went, recorded when its workers were created (the
  // target Service's cluster IPs and endpoints, a pod's or the url's
  // address, the Service's DNS name): what tells a shared target through
  // another name, namespace or Service. Last, with sharedWith, so that an
  // aggregate initialisation of the fields above keeps its meaning.
  std::vector<std::string> addresses;
  // The other runs that loaded any of those addresses during this run's
  // window, decided when it ended (the TargetShared condition).
  std::vector<SharedRun> shared_with;
  // The resource use was read (namespace, selector, pods, window and the
  // figures are written): a measurement always names the pods' namespace.
  bool measured() const { return !namespace_.empty(); }
  bool operator==(const TargetUsageStatus&) const = default;
};

// status.experiment (a LoadTest with spec.variants, docs/experiments.md).
// Metrics are keyed by their spelling in comparisons (kubeload/comparison.hpp:
// "rps", "p99", "errorRate", "cpuPerRequest", ...), in that header's units.
struct ExperimentRun {  // one variant's LoadTest in one round
  uint64_t round = 0;   // 1-based
  std::string variant;
  std::string load_test;
  std::optional<Phase> phase;
  std::map<std::string, double> metrics;
  bool operator==(const ExperimentRun&) const = default;
};
struct VariantOutcome {  // one variant over all its rounds
  std::string name;
  std::string target;  // "service web-canary:80" or the URL, for people
  uint64_t rounds = 0;
  // Its rounds' results merged exactly, in the result encoding without
  // histograms (status.result's row).
  std::optional<nlohmann::json> result;
  std::map<std::string, double> metrics;
  UsageFigures usage;  // the target's: CPU mean over the rounds, memory max
  bool operator==(const VariantOutcome&) const = default;
};
struct MetricDifference {  // variant - reference, per round, its mean and 95% interval
  std::string variant;
  std::string reference;
  std::string metric;
  double mean = 0;
  double low = 0;
  double high = 0;
  std::optional<double> relative_percent;  // mean / the reference's mean
  bool operator==(const MetricDifference&) const = default;
};
struct ComparisonRow {  // one spec.experiment.comparisons gate
  std::string expression;
  std::string outcome;         // Pass, Fail or Inconclusive (kubeload/comparison.hpp)
  std::optional<double> mean;  // of left - (right * factor + offset) per round
  std::optional<double> low;
  std::optional<double> high;
  std::optional<uint64_t> rounds_needed;  // Inconclusive: rounds that would likely decide
  std::string message;
  bool operator==(const ComparisonRow&) const = default;
};
struct ExperimentStatus {
  uint64_t rounds = 0;            // planned
  uint64_t completed_rounds = 0;  // rounds whose every variant finished
  std::vector<ExperimentRun> runs;
  std::vector<VariantOutcome> variants;
  std::vector<MetricDifference> differences;
  std::vector<ComparisonRow> comparisons;
  bool operator==(const ExperimentStatus&) const = default;
};

// status.search (a LoadTest with spec.search, docs/experiments.md "Capacity
// search"): every step in the order it ran, and the bracket found. Values are
// requests/s (over "rate") or connections (over "connections").
struct SearchStep {
  uint64_t step = 0;  // 1-based
  double value = 0;
  std::string load_test;
  std::optional<Phase> phase;
  std::optional<Verdict> verdict;
  // As status.experiment.runs[].metrics (rps, p50 ... errorRate, cpuPerRequest).
  std::map<std::string, double> metrics;
  std::optional<double> cpu_cores;  // the target's CPU, mean over the step
  // The thresholds it failed: "p99 < 100ms (observed 240ms)".
  std::vector<std::string> failed;
  bool operator==(const SearchStep&) const = default;
};
struct SearchStatus {
  std::string over;  // "rate" or "connections"
  std::vector<SearchStep> steps;
  std::optional<double> highest_passing;
  std::optional<double> first_failing;
  // The value no step goes above (spec.search's max or the operator's
  // ceiling), and which of the two it is ("spec.search.rate.max", "--max-rate").
  std::optional<double> limit;
  std::string limit_by;
  bool operator==(const SearchStatus&) const = default;
};

struct LoadTestStatus {
  int64_t observed_generation = 0;
  std::optional<Phase> phase;  // unset: not decided yet (or a spelling this version does not know)
  std::optional<Verdict> verdict;
  std::string reason;
  std::string message;
  std::optional<Time> start_time;
  std::optional<Time> completion_time;
  std::optional<std::string> progress;  // "42%"
  std::optional<double> error_percent;
  std::optional<WorkerCounts> workers;
  // The merged result in the result encoding of kubeload/result.hpp (with
  // its histograms), and its stage, named-request and scenario rows as
  // numbers only. Opaque to the schema (x-kubernetes-preserve-unknown-fields):
  // kept as written; ResultFigures reads what decisions need of them.
  std::optional<nlohmann::json> result;
  std::optional<nlohmann::json> stages;
  std::optional<nlohmann::json> request_results;
  std::optional<nlohmann::json> scenario_results;
  std::optional<TargetUsageStatus> target;
  std::vector<ThresholdRow> thresholds;
  std::optional<BaselineOutcome> baseline;
  std::optional<ExperimentStatus> experiment;
  std::optional<SearchStatus> search;
  // The run's LoadTestResult record, once written.
  std::optional<std::string> result_record;
  std::vector<Condition> conditions;

  bool final() const { return phase && is_final(*phase); }
  bool operator==(const LoadTestStatus&) const = default;
};

// What decisions read of status.result and status.stages: the figures a
// baseline compares and the run's timing.
struct ResultFigures {
  std::optional<double> rps;
  std::optional<double> error_rate;
  std::map<std::string, double> latency_ms;  // "p99" -> 12.5, "mean", "max", ...
  std::optional<double> duration_seconds;
  std::optional<uint64_t> requests;
  // Each stage's planned duration, in order; an unreadable one is unset.
  std::vector<std::optional<double>> stage_planned_seconds;
  std::optional<uint64_t> failures;
  // Responses that completed (the sum of statusCodes): without one, the
  // latencies are unknown, not 0.
  uint64_t complete_responses = 0;
  // A baseline metric ("rps", "errorRate", "p99", "mean"...), when measured.
  std::optional<double> metric(const std::string& name) const;
};
ResultFigures result_figures(const LoadTestStatus& status);

// One row in the result encoding: status.result, a row of status.stages or
// of status.requestResults. Its counters and histograms are read by
// kubeload/result.hpp's result_from_json (which checks them) from `encoded`;
// what identifies the row and the summaries the operator computed from the
// merged histograms (a stage's or request's row keeps no histogram) are read
// here. A stage's or request's fields are unset on the other kinds of row.
struct ResultRow {
  nlohmann::json encoded;           // the row as written
  bool histograms = false;          // it holds its histograms (the whole run's row does)
  uint64_t complete_responses = 0;  // the sum of its statusCodes
  // "p99" -> 12.5, "mean", "min", "stddev", ...: the summaries as numbers.
  std::map<std::string, double> latency_ms, waiting_ms, connect_ms;
  // a stage's row
  uint64_t index = 0;
  std::optional<uint64_t> connections;  // closed model (0 when not a count)
  std::optional<double> target_rate;    // open model
  double planned_duration_seconds = 0;
  // a named request's row
  std::string name;
};
// status.result; nullopt when the status has none.
std::optional<ResultRow> result_row(const LoadTestStatus& status);
// Every item of status.stages and status.requestResults, in order (an item
// that is not an object too: result_from_json says what is wrong with it).
std::vector<ResultRow> stage_rows(const LoadTestStatus& status);
std::vector<ResultRow> request_rows(const LoadTestStatus& status);

// One item of status.scenarioResults (a ScenarioResult as numbers only:
// kubeload/result.hpp's scenario_results_json without histograms). A field
// that is missing or not a number reads as 0 (a duration figure as absent).
struct ScenarioResultRow {
  std::string name;
  uint64_t iterations = 0;
  uint64_t failed_iterations = 0;
  std::map<std::string, double> duration_ms;  // "p95" -> 2040.5, "max", ...
};
std::vector<ScenarioResultRow> scenario_rows(const LoadTestStatus& status);

// A client (kubectl kubeload, the reports) shows the phase and verdict as the
// status spells them: one of a newer operator reads as unset in
// LoadTestStatus (decisions treat it as unknown), and is still shown as
// written. "" when the status has none.
struct StatusSpelling {
  std::string phase;
  std::string verdict;
};
StatusSpelling status_spelling(const nlohmann::json& loadtest);

// ---- the object

struct LoadTest {
  ObjectMeta metadata;
  // The spec as given, for parse_loadtest (kubeload/spec.hpp: the typed spec
  // and its field errors) and the worker pod template passed through as is.
  nlohmann::json spec;
  LoadTestStatus status;
};

void to_json(nlohmann::json& out, const ObjectMeta& value);
void from_json(const nlohmann::json& in, ObjectMeta& value);
void to_json(nlohmann::json& out, const Condition& value);
void from_json(const nlohmann::json& in, Condition& value);
void to_json(nlohmann::json& out, const LoadTestStatus& value);
void from_json(const nlohmann::json& in, LoadTestStatus& value);
void to_json(nlohmann::json& out, const LoadTest& value);
void from_json(const nlohmann::json& in, LoadTest& value);

}  // namespace kubeload::api
