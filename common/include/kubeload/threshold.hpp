#pragma once
// Threshold grammar: `[REQUEST.]METRIC OP VALUE[UNIT]`, e.g. "p99 < 200ms",
// "errorRate < 1%", "rps >= 4800", "cart.p99 < 100ms".

#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace kubeload {

struct RunResult;

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
  late      // open model: requests sent 1 ms or more after their intended time
};
enum class ThresholdOp { lt, le, gt, ge, eq };

struct Threshold {
  std::string expression;  // as written
  std::string request;     // empty: the merged result
  ThresholdMetric metric = ThresholdMetric::p99;
  ThresholdOp op = ThresholdOp::lt;
  // Canonical units: milliseconds for latencies, a ratio (0.01 for 1%) for
  // errorRate, requests/s for rps, a count for requests, failures, dropped
  // and late.
  double value = 0;
};

// Returns the threshold, or a message saying what is wrong and quoting the
// expression: `unknown metric "p98" in "p98 < 10ms"`. Latency units are ms, s
// and us (a bare number means ms); errorRate takes % or a bare ratio in [0, 1];
// rps a bare number (or "/s"); requests, failures, dropped and late bare
// numbers. Values are
// never negative. The request name, when present, is only checked for its
// form here: whether the request exists is for the spec to say.
std::variant<Threshold, std::string> parse_threshold(std::string_view expression);

// A latency metric (p50 ... max, mean, min): compared in milliseconds.
bool is_latency(ThresholdMetric metric);

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

// Evaluates against a run's merged result (or the named request's row; an
// unknown request name fails with observed "n/a"). A latency threshold with no
// latency recorded, or an errorRate threshold with no request made, fails with
// observed "n/a": a gate must not pass because nothing was measured; so does
// `late` for a closed-model run, which has no intended times.
// observed: latencies in ms with at least 3 significant digits and one decimal
// ("184.0ms", "0.412ms"), errorRate in percent ("0.014%"), rps ("4967.4/s"),
// counts as integers.
ThresholdOutcome evaluate(const Threshold& threshold, const RunResult& run);

}  // namespace kubeload
