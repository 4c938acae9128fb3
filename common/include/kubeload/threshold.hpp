#pragma once
// Threshold grammar: `[ROW.]METRIC OP VALUE[UNIT]`, e.g. "p99 < 200ms",
// "errorRate < 1%", "rps >= 4800", "cart.p99 < 100ms"; with scenarios
// "login.p99 < 200ms" (a step is a request row), "iterations >= 1000",
// "buy.failedIterations == 0" (a scenario's row), "iteration.p95 < 3s"
// (every scenario's iteration durations).

#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace kubeload {

struct RunResult;
struct LoadTestSpec;

enum class ThresholdMetric {
  p50,
  p90,
  p95,
  p99,
  p999,
  max,
  mean,
  min,
  errorRate,
  rps,
  requests,
  failures,
  dropped,  // open model: intended requests never sent (errors of kind dropped)
  late,     // open model: requests sent 1 ms or more after their intended time
  // Scenarios: ended iterations, and those of them that failed.
  iterations,
  failedIterations
};

// What a threshold reads, decided by its prefix and metric.
enum class ThresholdScope {
  run,       // no prefix: the merged result; iterations, failedIterations: every scenario's
  request,   // `cart.p99`: a request's row (or a scenario step's: steps are request rows)
  scenario,  // `buy.iterations`, `buy.failedIterations`: a scenario's row
  iteration  // `iteration.p95`: the iteration durations of every scenario merged
};

// The prefix that names the iteration durations: `iteration.p95 < 3s`.
inline constexpr std::string_view kIterationRow = "iteration";
enum class ThresholdOp { lt, le, gt, ge, eq };

struct Threshold {
  std::string expression;  // as written
  ThresholdScope scope = ThresholdScope::run;
  // The prefix: the request's (or step's) name for ThresholdScope::request,
  // the scenario's for ThresholdScope::scenario; empty otherwise.
  std::string request;
  ThresholdMetric metric = ThresholdMetric::p99;
  ThresholdOp op = ThresholdOp::lt;
  // Canonical units: milliseconds for latencies, a ratio (0.01 for 1%) for
  // errorRate, requests/s for rps, a count for requests, failures, dropped,
  // late, iterations and failedIterations.
  double value = 0;
};

// Returns the threshold, or a message saying what is wrong and quoting the
// expression: `unknown metric "p98" in "p98 < 10ms"`. Latency units are ms, s
// and us (a bare number means ms); errorRate takes % or a bare ratio in [0, 1];
// rps a bare number (or "/s"); requests, failures, dropped, late,
// iterations and failedIterations bare numbers. Values are never negative.
// The prefix `iteration` takes only a latency metric (`iteration.errorRate`
// is refused: not an iteration metric). A row's name, when present, is only
// checked for its form here: whether the row exists is for the spec to say
// (threshold_row_problem).
std::variant<Threshold, std::string> parse_threshold(std::string_view expression);

// Whether the row a parsed threshold names is one `spec` produces: empty when
// it is, else the message (quoting the expression) the spec reports at the
// threshold's path. A request row is a name of spec.requests or, in a
// scenario run, of a step; a scenario row a name of spec.scenarios; the
// iteration durations and a scenario count need scenarios.
std::string threshold_row_problem(const Threshold& threshold, const LoadTestSpec& spec);

// A latency metric (p50 ... max, mean, min): compared in milliseconds.
bool is_latency(ThresholdMetric metric);
// A count of iterations (iterations, failedIterations): a scenario's row.
bool counts_iterations(ThresholdMetric metric) noexcept;

// The metric's name as written in expressions ("p99", "errorRate").
std::string_view to_string(ThresholdMetric metric) noexcept;
std::string_view to_string(ThresholdOp op) noexcept;

struct ThresholdOutcome {
  std::string expression;
  std::string observed;  // "184.0ms", "0.01%", "4967.4/s"; "n/a" when not found
  bool passed = false;
  // What was compared with the limit, unrounded, in Threshold::value's
  // canonical unit (184.03 for "184.0ms"); absent when observed is "n/a".
  std::optional<double> value;
};

// Evaluates against a run's merged result (or the named request's or
// scenario's row, or every scenario's iterations; a row the run does not
// have fails with observed "n/a", and so do iterations and failedIterations
// on a run without scenarios). A latency threshold with no
// latency recorded, or an errorRate threshold with no request made, fails with
// observed "n/a": a gate must not pass because nothing was measured; so does
// `late` for a closed-model run, which has no intended times.
// observed: latencies in ms with at least 3 significant digits and one decimal
// ("184.0ms", "0.412ms"), errorRate in percent ("0.014%"), rps ("4967.4/s"),
// counts as integers.
ThresholdOutcome evaluate(const Threshold& threshold, const RunResult& run);

}  // namespace kubeload
