#pragma once
// A/B comparisons of variants measured in interleaved rounds: the statistics
// (Student's t intervals of a mean and of a paired difference) and the
// comparison gate, its grammar and its decision. Pure functions: the operator
// runs the rounds and feeds each round's value per variant in here.
//
// Grammar of a comparison gate:
//
//   VARIANT.METRIC OP VARIANT.METRIC [* FACTOR] [(+ | -) VALUE[UNIT]]
//
//   "b.p99 <= a.p99 * 1.05"                    b's p99 at most 5% above a's
//   "canary.errorRate <= stable.errorRate + 0.5%"
//   "b.rps >= a.rps * 0.95"
//   "b.p99 <= a.p99 + 2ms"
//   "b.p99 <= a.p99 * 1.05 + 1ms"              a factor and an offset together
//
// - VARIANT is a DNS-1123 label ([a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63),
//   and the two sides name two different variants.
// - METRIC is one of kComparedMetrics' names, the same on both sides (a p99
//   is never compared with an rps).
// - OP is <, <=, > or >=; == is refused, since an interval never proves
//   equality.
// - FACTOR is a bare number above 0 that multiplies the right side.
// - VALUE is added (+) or subtracted (-) after the factor, in the metric's
//   units: latencies ms, s or us (a bare number means ms); errorRate % or a
//   bare ratio, at most 1; rps a bare number or "/s"; cpuPerRequest s, ms or
//   us (a unit is required: a bare number there is almost always a mistake).
// Spaces and tabs are allowed between the parts.
//
// The decision: each round i gives one margin
//   m_i = left_i - (right_i * FACTOR + OFFSET)
// and the comparison holds when the margin satisfies OP against 0. The rounds
// are paired, so the test is a paired Student's t test across rounds: the
// two-sided interval (95% by default) of the mean margin is
//   mean(m) +- t_{(1+c)/2, n-1} * sd(m) / sqrt(n).
// Why paired: the variants run in interleaved rounds (a, b, a, b, ...), so
// the two values of one round saw the same drift of the target (warm caches,
// noisy neighbours, autoscaling, the time of day). Differencing within a
// round cancels that drift, where comparing the two variants' means as two
// independent samples would count it as noise, or worse, as an effect when
// one variant happened to run during the slow minutes.
// A comparison passes only when the whole interval satisfies OP, fails only
// when the whole interval violates it, and is otherwise inconclusive: an
// inconclusive comparison never passes a gate.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "kubeload/threshold.hpp"

namespace kubeload {

// Metrics a comparison of variants may name. Latencies in ms, errorRate a
// ratio (0.01 for 1%), rps requests/s, cpuPerRequest the target's CPU
// core-seconds per request.
enum class ComparedMetric { rps, p50, p90, p95, p99, p999, mean, max, errorRate, cpuPerRequest };

// The canonical unit a metric's values and offsets are in.
enum class ComparedUnit {
  milliseconds,  // latencies
  ratio,         // errorRate
  per_second,    // rps
  core_seconds   // cpuPerRequest
};

struct ComparedMetricName {
  std::string_view name;  // as written in expressions
  ComparedMetric metric;
  ComparedUnit unit;
};

// The one spelling table: a metric's name and unit. The names shared with
// thresholds are spelled as kubeload/threshold.hpp spells them (a test checks).
inline constexpr std::array kComparedMetrics{
    ComparedMetricName{"rps", ComparedMetric::rps, ComparedUnit::per_second},
    ComparedMetricName{"p50", ComparedMetric::p50, ComparedUnit::milliseconds},
    ComparedMetricName{"p90", ComparedMetric::p90, ComparedUnit::milliseconds},
    ComparedMetricName{"p95", ComparedMetric::p95, ComparedUnit::milliseconds},
    ComparedMetricName{"p99", ComparedMetric::p99, ComparedUnit::milliseconds},
    ComparedMetricName{"p999", ComparedMetric::p999, ComparedUnit::milliseconds},
    ComparedMetricName{"mean", ComparedMetric::mean, ComparedUnit::milliseconds},
    ComparedMetricName{"max", ComparedMetric::max, ComparedUnit::milliseconds},
    ComparedMetricName{"errorRate", ComparedMetric::errorRate, ComparedUnit::ratio},
    ComparedMetricName{"cpuPerRequest", ComparedMetric::cpuPerRequest, ComparedUnit::core_seconds},
};

// "p99", "errorRate", "cpuPerRequest".
std::string_view to_string(ComparedMetric metric) noexcept;
// The metric named exactly so (case matters), or nullopt.
std::optional<ComparedMetric> compared_metric_from(std::string_view name);
ComparedUnit unit_of(ComparedMetric metric) noexcept;

struct MeanInterval {
  double mean = 0;
  double low = 0;
  double high = 0;
  double std_dev = 0;  // the sample's (n - 1 in the denominator)
  std::size_t n = 0;
  double confidence = 0.95;
};

// Student's t interval of the mean (two-sided): mean +- t * std_dev / sqrt(n),
// t the (1 + confidence) / 2 quantile of Student's t with n - 1 degrees of
// freedom. nullopt for n < 2 (no spread is known). std_dev 0 gives
// low == high == mean. Throws std::invalid_argument for a confidence outside
// (0, 1) or a value that is not finite (what an empty round means is the
// caller's to say, not a NaN's).
std::optional<MeanInterval> mean_interval(std::span<const double> values, double confidence = 0.95);

// Paired across rounds: the interval of mean(left[i] - right[i]). Sizes must
// match (throws std::invalid_argument otherwise, and as mean_interval does).
std::optional<MeanInterval> paired_difference(std::span<const double> left,
                                              std::span<const double> right,
                                              double confidence = 0.95);

// A parsed comparison gate; see the grammar above.
struct Comparison {
  std::string expression;  // as written
  std::string left;        // variant name
  std::string right;       // variant name
  ComparedMetric metric = ComparedMetric::p99;
  ThresholdOp op = ThresholdOp::le;  // never eq
  double factor = 1;                 // right side multiplied by it
  double offset = 0;  // then this added (canonical units: ms for latencies, ratio for
                      // errorRate, requests/s for rps, core-seconds for cpuPerRequest)
};

// The comparison, or a message that quotes the expression and names the bad
// part: `unknown metric "p98" in "b.p98 <= a.p98"`.
std::variant<Comparison, std::string> parse_comparison(std::string_view expression);

enum class ComparisonOutcome { Pass, Fail, Inconclusive };
std::string_view to_string(ComparisonOutcome outcome) noexcept;  // "Pass", "Fail", "Inconclusive"

struct ComparisonDecision {
  ComparisonOutcome outcome = ComparisonOutcome::Inconclusive;
  // The interval of the per-round margin left - (right * factor + offset);
  // unset with fewer than 2 rounds.
  std::optional<MeanInterval> margin;
  // Inconclusive only: the total rounds that would likely decide, at most
  // 1000 (1000 also when even that many would not); unset when the mean
  // margin is 0 or no spread is known.
  std::optional<std::uint32_t> rounds_needed;
  // One sentence for the status, e.g.
  // "b.p99 - a.p99*1.05 is -0.31 ms [-0.52, -0.10] (95%, 6 rounds): holds".
  std::string message;
};

// The most rounds rounds_needed ever asks for.
inline constexpr std::uint32_t kMaxComparisonRounds = 1000;

// Decides a comparison from the per-round values of its left and right
// variant for its metric (same length, round i paired; throws
// std::invalid_argument otherwise, or as mean_interval does).
// For < and <=, Pass when the interval's high is < 0 (<= 0) and Fail when its
// low is >= 0 (> 0); for > and >=, Pass when the low is > 0 (>= 0) and Fail
// when the high is <= 0 (< 0); otherwise Inconclusive, never a pass. Fewer
// than 2 rounds: Inconclusive. rounds_needed is the smallest n, from the
// current n + 1 up to kMaxComparisonRounds, with
// t_{(1+c)/2, n-1} * s / sqrt(n) < |mean margin| for the observed s and mean.
ComparisonDecision decide(const Comparison& comparison, std::span<const double> left,
                          std::span<const double> right, double confidence = 0.95);

}  // namespace kubeload
