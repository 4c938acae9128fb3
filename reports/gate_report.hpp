#pragma once
// The reports a CI gate reads: JUnit XML (test tabs), Markdown (a pull-request
// comment or job summary) and a self-contained HTML page. One model, built
// either from a LoadTest object (its spec and status, as `kubectl kubeload`
// reads it) or from a local `loadgen run`; the writers read only the model.

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/status.hpp"
#include "kubeload/generator_cpu.hpp"
#include "kubeload/histogram.hpp"
#include "kubeload/result.hpp"
#include "kubeload/threshold.hpp"
#include "reports/run_info.hpp"
#include "reports/scenario_row.hpp"
#include "reports/trend.hpp"

namespace kubeload::loadgen {

// The numbers of one row: the whole run, a stage or a named request.
struct SummaryRow {
  std::string label;  // "stage 0 (10 conns)", a request name; empty for the run
  uint64_t requests = 0;
  uint64_t failures = 0;
  double error_rate = 0;  // ratio
  double rps = 0;
  double duration_seconds = 0;
  // False when nothing completed: latencies are then unknown, not zero.
  bool latency_measured = false;
  LatencySummary latency_ms;
};

struct ThresholdRow {
  std::string expression;  // as written: "p99 < 200ms"
  std::string observed;    // "184.0ms", "n/a"
  std::string limit;       // the expression's right side with its operator: "< 200ms"
  bool passed = false;
};

struct BaselineCheck {
  std::string metric;  // "p99"
  std::string delta;   // "+3.2%" as the status shows it, "n/a" when not measured
  std::optional<double> max_regression_percent;
  bool passed = false;
};

struct BaselineReport {
  std::string load_test_name;  // the run compared with; empty when none was found
  bool passed = false;
  std::string message;
  std::vector<BaselineCheck> checks;
};

// One variant of an experiment (status.experiment.variants[]): its rounds
// merged, as one column of the side-by-side table.
struct VariantColumn {
  std::string name;
  std::string target;  // as the status says it: "service web-a:80" or the URL
  uint64_t rounds = 0;
  bool has_result = false;                // no round of it finished yet: no numbers
  SummaryRow row;                         // its merged result (summaries only, no histograms)
  api::UsageFigures usage;                // the target's: CPU mean over the rounds, memory max
  std::optional<double> cpu_per_request;  // core-seconds per request (cpuPerRequest)
};

// status.experiment as the reports show it: the variants side by side, each
// one's differences from the first with their intervals, and the
// comparisons with their outcomes (as the operator decided them).
struct ExperimentReport {
  uint64_t rounds = 0;  // planned
  uint64_t completed_rounds = 0;
  std::vector<VariantColumn> variants;
  std::vector<api::MetricDifference> differences;
  std::vector<api::ComparisonRow> comparisons;
};

struct GateReport {
  std::string title;       // "shop/checkout-x7k2p" or the manifest's name
  std::string test;        // the kubeload.dev/test label, if any
  std::string target;      // URL, or service://name.namespace:port
  std::string phase;       // Succeeded | Failed | Pending | Starting | Running
  std::string verdict;     // Pass | Fail | None
  std::string reason;      // machine reason from the status
  std::string message;     // the status message
  std::string started;     // RFC 3339, "" when unknown
  std::string completed;   // RFC 3339, "" when unfinished
  std::string run_name;    // the LoadTest's metadata.name ("checkout-x7k2p"); "" for a local run
  std::string namespace_;  // the LoadTest's namespace; "" for a local run
  // The name CI systems track the test by across runs (test_identity):
  // "checkout" for every run of it, however each run is named.
  std::string identity;
  bool has_result = false;
  SummaryRow run;
  std::map<int, uint64_t> status_codes;
  ErrorCounts errors;
  std::optional<Histogram> latency_us;  // for the percentile curve, when the source holds it
  std::vector<SummaryRow> stages;
  std::vector<SummaryRow> requests;  // named requests, or a scenario run's steps
  std::vector<ScenarioRow> scenarios;
  std::vector<ThresholdRow> thresholds;
  std::optional<BaselineReport> baseline;
  // The other runs that loaded the same target during this one
  // ("namespace/name", status.target.sharedWith): its latency and the
  // target's CPU and memory include their load.
  std::vector<std::string> shared_with;
  // Why the generator, not the target, set the pace: the GeneratorSaturated
  // condition's message when it is True, or a local run's own warning
  // (generator_saturation_warning); "" when it was not saturated.
  std::string generator_saturated;
  // A LoadTest with spec.variants (docs/experiments.md): its variants take the
  // place of the one result.
  std::optional<ExperimentReport> experiment;
  // A LoadTest with spec.search (docs/experiments.md "Capacity search"):
  // its sweep table takes the place of the one result.
  std::optional<api::SearchStatus> search;
  // The test's last runs (html only); unset: not asked for.
  std::optional<Trend> trend;

  // phase and verdict hold what the status said (a newer operator's spelling
  // included); these read them as the API's values.
  bool finished() const { return api::is_final_phase(phase); }
  bool failed() const { return api::parse_phase(phase) == api::Phase::Failed; }
  std::optional<api::Verdict> verdict_value() const { return api::parse_verdict(verdict); }
};

// A LoadTest as the API returns it, or its LoadTestResult record (read as the
// LoadTest it records, reports/recorded_run.hpp). Throws
// std::invalid_argument naming the field when the status holds something
// that is not a result.
GateReport gate_report_from_loadtest(const nlohmann::json& loadtest);
// A local run: the manifest's name and kubeload.dev/test label (either may be
// empty), the report facts, the result and the evaluated thresholds (no
// thresholds: verdict None).
// `cpu`: what loadgen used of its CPU over the measured run (RunOutcome::cpu),
// for the warning when it was saturated.
GateReport gate_report_from_run(const std::string& name, const std::string& test,
                                const RunInfo& info, const RunResult& run,
                                const std::vector<ThresholdOutcome>& gates,
                                const std::optional<GeneratorCpu>& cpu = std::nullopt);

// The identity of a test, the same for every run of it, so that CI systems
// (GitLab's test report, Jenkins' test history) can follow a gate across
// runs: the kubeload.dev/test label; without it the generateName stem
// ("checkout" of "checkout-"), shared by the runs `kubectl create` makes of
// one manifest; else the object's name (a manifest applied under a fixed
// name, or `loadgen run` of one); else the target URL (`loadgen URL`).
std::string test_identity(const std::string& test_label, const std::string& generate_name,
                          const std::string& name, const std::string& target);

// The line the gate reports and `kubectl kubeload run` show of a shared
// target ("Target shared with ns/other during this run: ..."), for
// GateReport::shared_with; "" when it was not shared.
std::string shared_target_note(const std::vector<std::string>& shared_with);

// The line the gate reports and `kubectl kubeload run` show of a saturated
// generator ("Generator saturated: worker 0 used 97% of its 100m CPU limit:
// ..."), for GateReport::generator_saturated; "" when it was not.
std::string generator_saturated_note(const std::string& generator_saturated);

// What `loadgen` (run or a URL, not a worker) says of a run in which it used
// more than kSaturatedUtilization of its CPU ("loadgen used 97% of the 2
// CPUs it may use during the measured run: ..."); "" when it did not.
std::string generator_saturation_warning(const GeneratorCpu& cpu);

// A value in a compared metric's units (kubeload/comparison.hpp's
// kComparedMetrics), signed: "+10.01 ms", "-12.5/s", "+0.12 pp" (errorRate,
// percentage points), "+0.210 ms CPU" (cpuPerRequest). An unknown metric's
// value is a bare number.
std::string signed_metric_text(const std::string& metric, double value);
// A mean and its 95% interval in the metric's units: "+10.01 ms [+7.41, +12.60]".
std::string interval_text(const std::string& metric, double mean, double low, double high);
// A difference as the reports and `kubectl kubeload compare` show it, its
// relative change last when known: "+10.01 ms [+7.41, +12.60] (+93.0%)".
std::string difference_text(const api::MetricDifference& difference);
// The margin of a comparison: "+9.47 ms [+6.80, +12.13]"; "no interval" when
// fewer than 2 rounds were measured.
std::string comparison_margin_text(const api::ComparisonRow& comparison);
// A comparison's outcome read as a gate: Pass only; Fail and Inconclusive
// (and an outcome this version does not know) fail.
bool comparison_passed(const api::ComparisonRow& comparison);
// The limit a comparison's margin is held to, for the reports' "limit":
// "<= 0 over the whole 95% interval"; "" when the expression does not parse.
std::string comparison_limit(const std::string& expression);

// The operator's limit of a threshold expression: "< 200ms" of "p99 < 200ms".
std::string threshold_limit(const std::string& expression);

// HdrHistogram's percentile distribution: points at percentiles that halve
// the remaining distance to 100% in `ticks_per_half` steps, up to the last
// recorded value (percentile 100).
struct PercentilePoint {
  double percentile = 0;  // 0..100
  double value_ms = 0;    // value at that percentile
  uint64_t count_at_or_below = 0;
  double inverse = 1;  // 1 / (1 - percentile/100); the curve's x
};
std::vector<PercentilePoint> percentile_distribution(const Histogram& micros,
                                                     int ticks_per_half = 5);

void write_junit_report(std::ostream& out, const GateReport& report);
void write_markdown_report(std::ostream& out, const GateReport& report);
void write_html_report(std::ostream& out, const GateReport& report);
// A table of an experiment as text cells, laid out by each writer: a
// header (the label column's, then one per column) and rows of as many cells.
struct ExperimentTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
// The variants side by side: one column per variant (the first marked
// "(base)"), one row per figure: target, rounds, requests, rps, p50, p90,
// p99, errors, the target's CPU cores and CPU per request, its memory.
ExperimentTable variants_table(const ExperimentReport& experiment);
// The differences: one row per metric (kComparedMetrics' order), one column
// per variant against its reference ("b - a"), cells as difference_text.
// No rows when the status has no differences yet.
ExperimentTable differences_table(const ExperimentReport& experiment);
// "4 of 6 rounds of 2 variants".
std::string experiment_progress(const ExperimentReport& experiment);

// A capacity search's sweep table: one row per step in the order it ran
// (step, value, verdict, rps, p50, p90, p99, errors, the target's CPU
// cores and CPU per request, the thresholds it failed).
ExperimentTable search_table(const api::SearchStatus& search);
// A search's answer in one line: "highest passing rate 100/s, first failing
// 106.25/s (limit 800/s, spec.search.rate.max)"; "no step finished yet".
std::string search_outcome(const api::SearchStatus& search);
// The text of a search: its answer, then the sweep table.
void write_search_text(std::ostream& out, const api::SearchStatus& search);

// The text of an experiment: the variants side by side, the differences
// with their intervals, one line per comparison (the text report's body
// for an experiment, before write_gate_text).
void write_experiment_text(std::ostream& out, const ExperimentReport& experiment);
// The text summary of the gate that follows the text report: one line per
// threshold and baseline check, then the verdict.
void write_gate_text(std::ostream& out, const GateReport& report);

// Writes any report format (text, ab, jmeter, json, junit, markdown, html) of
// a LoadTest object or its LoadTestResult record; the html report shows
// `trend` (the test's last runs, reports/trend.hpp) when given. Throws
// std::invalid_argument as gate_report_from_loadtest.
void write_loadtest_report(std::ostream& out, ReportFormat format, const nlohmann::json& loadtest,
                           const std::optional<Trend>& trend = std::nullopt);

}  // namespace kubeload::loadgen
