#include "kubeload/threshold.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "kubeload/result.hpp"

namespace kubeload {
namespace {

struct ValidThreshold {
  const char* text;
  const char* request;
  ThresholdMetric metric;
  ThresholdOp op;
  double value;  // canonical unit: ms, ratio, per second, count
};

void PrintTo(const ValidThreshold& row, std::ostream* out) {
  *out << '"' << row.text << '"';
}

class ParseValidThreshold : public ::testing::TestWithParam<ValidThreshold> {};

TEST_P(ParseValidThreshold, GivesMetricOperatorAndCanonicalValue) {
  const ValidThreshold& want = GetParam();
  const auto parsed = parse_threshold(want.text);
  ASSERT_TRUE(std::holds_alternative<Threshold>(parsed))
      << want.text << ": " << std::get<std::string>(parsed);
  const Threshold& got = std::get<Threshold>(parsed);
  EXPECT_EQ(got.expression, want.text);
  EXPECT_EQ(got.request, want.request);
  EXPECT_EQ(got.metric, want.metric) << want.text;
  EXPECT_EQ(got.op, want.op) << want.text;
  EXPECT_DOUBLE_EQ(got.value, want.value) << want.text;
}

using M = ThresholdMetric;
using O = ThresholdOp;

INSTANTIATE_TEST_SUITE_P(
    Table, ParseValidThreshold,
    ::testing::Values(ValidThreshold{"p99 < 200ms", "", M::p99, O::lt, 200},
                      ValidThreshold{"p99<200ms", "", M::p99, O::lt, 200},
                      ValidThreshold{"  p99\t<  200 ms  ", "", M::p99, O::lt, 200},
                      ValidThreshold{"p50 <= 10", "", M::p50, O::le, 10},  // bare number: ms
                      ValidThreshold{"p90 > 1.5s", "", M::p90, O::gt, 1500},
                      ValidThreshold{"p95 >= 250us", "", M::p95, O::ge, 0.25},
                      ValidThreshold{"p95 >= 250\xC2\xB5s", "", M::p95, O::ge, 0.25},
                      ValidThreshold{"p999 == 0", "", M::p999, O::eq, 0},
                      ValidThreshold{"max < 1s", "", M::max, O::lt, 1000},
                      ValidThreshold{"mean < .5ms", "", M::mean, O::lt, 0.5},
                      ValidThreshold{"min >= 0.1", "", M::min, O::ge, 0.1},
                      ValidThreshold{"errorRate < 1%", "", M::errorRate, O::lt, 0.01},
                      ValidThreshold{"errorRate < 0.5 %", "", M::errorRate, O::lt, 0.005},
                      ValidThreshold{"errorRate <= 0.01", "", M::errorRate, O::le, 0.01},
                      ValidThreshold{"errorRate == 0", "", M::errorRate, O::eq, 0},
                      ValidThreshold{"errorRate < 100%", "", M::errorRate, O::lt, 1},
                      ValidThreshold{"errorRate <= 1", "", M::errorRate, O::le, 1},
                      ValidThreshold{"rps >= 4800", "", M::rps, O::ge, 4800},
                      ValidThreshold{"rps>=4800.5/s", "", M::rps, O::ge, 4800.5},
                      ValidThreshold{"requests >= 100000", "", M::requests, O::ge, 100000},
                      ValidThreshold{"failures == 0", "", M::failures, O::eq, 0},
                      ValidThreshold{"cart.p99 < 100ms", "cart", M::p99, O::lt, 100},
                      ValidThreshold{"cart.errorRate<2%", "cart", M::errorRate, O::lt, 0.02},
                      ValidThreshold{"get-cart_v2.rps > 10", "get-cart_v2", M::rps, O::gt, 10},
                      // A request may be named like a metric; the dot says which is which.
                      ValidThreshold{"p99.p99 < 5", "p99", M::p99, O::lt, 5}));

struct InvalidThreshold {
  const char* text;
  const char* message;
};

void PrintTo(const InvalidThreshold& row, std::ostream* out) {
  *out << '"' << row.text << '"';
}

class ParseInvalidThreshold : public ::testing::TestWithParam<InvalidThreshold> {};

TEST_P(ParseInvalidThreshold, SaysWhatIsWrong) {
  const auto parsed = parse_threshold(GetParam().text);
  ASSERT_TRUE(std::holds_alternative<std::string>(parsed)) << GetParam().text;
  EXPECT_EQ(std::get<std::string>(parsed), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ParseInvalidThreshold,
    ::testing::Values(
        InvalidThreshold{"", "empty threshold, expected METRIC OP VALUE in \"\""},
        InvalidThreshold{"   ", "empty threshold, expected METRIC OP VALUE in \"   \""},
        InvalidThreshold{"p98 < 10ms", "unknown metric \"p98\" in \"p98 < 10ms\""},
        InvalidThreshold{"P99 < 10ms", "unknown metric \"P99\" in \"P99 < 10ms\""},
        InvalidThreshold{"latency < 10ms", "unknown metric \"latency\" in \"latency < 10ms\""},
        InvalidThreshold{"< 10ms", "expected a metric at the start in \"< 10ms\""},
        InvalidThreshold{"Cart.p99 < 1", "invalid request name \"Cart\" in \"Cart.p99 < 1\""},
        InvalidThreshold{"cart-.p99 < 1", "invalid request name \"cart-\" in \"cart-.p99 < 1\""},
        InvalidThreshold{"cart. < 1", "expected a metric after \"cart\". in \"cart. < 1\""},
        InvalidThreshold{"cart.p98 < 1", "unknown metric \"p98\" in \"cart.p98 < 1\""},
        InvalidThreshold{"p99", "expected an operator (<, <=, >, >=, ==) after \"p99\" in \"p99\""},
        InvalidThreshold{"p99 = 5ms",
                         "expected an operator (<, <=, >, >=, ==) after \"p99\" in \"p99 = 5ms\""},
        InvalidThreshold{"p99 != 5ms",
                         "expected an operator (<, <=, >, >=, ==) after \"p99\" in \"p99 != 5ms\""},
        InvalidThreshold{"p99 <", "expected a number after \"<\" in \"p99 <\""},
        InvalidThreshold{"p99 < ms", "expected a number after \"<\" in \"p99 < ms\""},
        InvalidThreshold{"p99 <= .", "expected a number after \"<=\" in \"p99 <= .\""},
        InvalidThreshold{"p99 < -5ms", "negative value \"-5ms\" in \"p99 < -5ms\""},
        InvalidThreshold{"p99 < 5m",
                         "unit \"m\" is not valid for p99 (use ms, s or us) in \"p99 < 5m\""},
        InvalidThreshold{"p99 < 5%",
                         "unit \"%\" is not valid for p99 (use ms, s or us) in \"p99 < 5%\""},
        InvalidThreshold{"p99 < 5ms 6ms", "unexpected \"6ms\" in \"p99 < 5ms 6ms\""},
        InvalidThreshold{
            "p99 < 1.2.3ms",
            "unit \".3ms\" is not valid for p99 (use ms, s or us) in \"p99 < 1.2.3ms\""},
        InvalidThreshold{
            "errorRate < 5",
            "errorRate ratio 5 is above 1 (write 5% for a percentage) in \"errorRate < 5\""},
        InvalidThreshold{"errorRate < 150%",
                         "errorRate 150% is above 100% in \"errorRate < 150%\""},
        InvalidThreshold{
            "errorRate < 1ms",
            "unit \"ms\" is not valid for errorRate (use % or a ratio) in \"errorRate < 1ms\""},
        InvalidThreshold{"rps > 5ms",
                         "unit \"ms\" is not valid for rps (use a bare number) in \"rps > 5ms\""},
        InvalidThreshold{
            "requests > 5k",
            "unit \"k\" is not valid for requests (use a bare number) in \"requests > 5k\""},
        InvalidThreshold{
            "failures == 1%",
            "unit \"%\" is not valid for failures (use a bare number) in \"failures == 1%\""}));

TEST(Threshold, NamesOfMetricsAndOperatorsMatchTheGrammar) {
  EXPECT_EQ(to_string(ThresholdMetric::p999), "p999");
  EXPECT_EQ(to_string(ThresholdMetric::errorRate), "errorRate");
  EXPECT_EQ(to_string(ThresholdMetric::failures), "failures");
  EXPECT_EQ(to_string(ThresholdOp::le), "<=");
  EXPECT_EQ(to_string(ThresholdOp::eq), "==");
}

// ---- evaluation against results built by hand --------------------------------

Threshold must_parse(const std::string& text) {
  auto parsed = parse_threshold(text);
  if (auto* message = std::get_if<std::string>(&parsed)) ADD_FAILURE() << *message;
  return std::get<Threshold>(parsed);
}

ThresholdOutcome check(const std::string& text, const RunResult& run) {
  return evaluate(must_parse(text), run);
}

// Latencies below 2048 us are recorded exactly at 3 significant digits, so
// the expected numbers below are exact.
Result result_with_latencies(std::initializer_list<std::pair<int64_t, uint64_t>> micros_counts) {
  Result result;
  for (const auto& [micros, count] : micros_counts) {
    result.latency.record(micros, count);
    result.requests += count;
  }
  result.duration_seconds = 1;
  return result;
}

TEST(ThresholdEvaluate, LatencyOperatorsAtTheBoundary) {
  RunResult run;
  run.result = result_with_latencies({{1500, 100}});  // every percentile is 1.5 ms
  EXPECT_TRUE(check("p99 <= 1.5ms", run).passed);
  EXPECT_FALSE(check("p99 < 1.5ms", run).passed);
  EXPECT_TRUE(check("p99 < 1.6ms", run).passed);
  EXPECT_TRUE(check("p99 == 1500us", run).passed);
  EXPECT_TRUE(check("p99 >= 1.5", run).passed);
  EXPECT_FALSE(check("p99 > 1.5", run).passed);
  EXPECT_TRUE(check("p50 > 1.4", run).passed);
  EXPECT_FALSE(check("p50 > 1s", run).passed);
  const ThresholdOutcome outcome = check("p99 < 1.6ms", run);
  EXPECT_EQ(outcome.expression, "p99 < 1.6ms");
  EXPECT_EQ(outcome.observed, "1.50ms");
}

TEST(ThresholdEvaluate, EachLatencyMetricReadsItsOwnStatistic) {
  RunResult run;
  run.result = result_with_latencies({{1000, 50}, {2000, 50}});
  EXPECT_EQ(check("min < 1s", run).observed, "1.00ms");
  EXPECT_EQ(check("max < 1s", run).observed, "2.00ms");
  EXPECT_EQ(check("mean < 1s", run).observed, "1.50ms");
  EXPECT_EQ(check("p50 < 1s", run).observed, "1.00ms");
  EXPECT_EQ(check("p90 < 1s", run).observed, "2.00ms");
  EXPECT_EQ(check("p999 < 1s", run).observed, "2.00ms");
  EXPECT_TRUE(check("p50 < 1.5", run).passed);
  EXPECT_FALSE(check("p95 < 1.5", run).passed);
}

TEST(ThresholdEvaluate, LatencyObservedKeepsThreeSignificantDigits) {
  RunResult run;
  run.result = result_with_latencies({{412, 10}});
  EXPECT_EQ(check("p99 < 1", run).observed, "0.412ms");
  run.result = result_with_latencies({{12, 10}});
  EXPECT_EQ(check("p99 < 1", run).observed, "0.0120ms");

  // Large values: at least one decimal, like the status example "184.0ms".
  run.result = result_with_latencies({{184000, 10}});
  const double p99_ms = static_cast<double>(run.result.latency.value_at_percentile(99)) / 1000.0;
  char expected[32];
  std::snprintf(expected, sizeof expected, "%.1fms", p99_ms);
  const ThresholdOutcome outcome = check("p99 < 200ms", run);
  EXPECT_EQ(outcome.observed, expected);
  EXPECT_EQ(outcome.observed.size(), std::string("184.0ms").size());
  EXPECT_TRUE(outcome.passed);
}

TEST(ThresholdEvaluate, ErrorRateIsShownInPercent) {
  RunResult run;
  run.result.requests = 1490211;
  run.result.errors.status = 211;
  run.result.duration_seconds = 300;
  ThresholdOutcome outcome = check("errorRate < 1%", run);
  EXPECT_EQ(outcome.observed, "0.0142%");
  EXPECT_TRUE(outcome.passed);
  EXPECT_FALSE(check("errorRate < 0.01%", run).passed);
  EXPECT_TRUE(check("errorRate < 0.0002", run).passed);

  run.result.requests = 100;
  run.result.errors = {};
  run.result.errors.connect = 1;
  EXPECT_EQ(check("errorRate < 1%", run).observed, "1%");
  EXPECT_FALSE(check("errorRate < 1%", run).passed);
  EXPECT_TRUE(check("errorRate <= 1%", run).passed);
  EXPECT_TRUE(check("errorRate == 0.01", run).passed);

  run.result.requests = 3;
  EXPECT_EQ(check("errorRate < 50%", run).observed, "33.3%");
  run.result.errors = {};
  EXPECT_EQ(check("errorRate == 0", run).observed, "0%");
  EXPECT_TRUE(check("errorRate == 0", run).passed);
}

TEST(ThresholdEvaluate, RpsAndCounts) {
  RunResult run;
  run.result.requests = 1490211;
  run.result.errors.timeout = 11;
  run.result.errors.status = 200;
  run.result.duration_seconds = 300;
  ThresholdOutcome rps = check("rps >= 4800", run);
  EXPECT_EQ(rps.observed, "4967.4/s");
  EXPECT_TRUE(rps.passed);
  EXPECT_FALSE(check("rps >= 5000", run).passed);

  ThresholdOutcome requests = check("requests >= 1490211", run);
  EXPECT_EQ(requests.observed, "1490211");
  EXPECT_TRUE(requests.passed);
  EXPECT_FALSE(check("requests > 1490211", run).passed);

  ThresholdOutcome failures = check("failures == 0", run);
  EXPECT_EQ(failures.observed, "211");
  EXPECT_FALSE(failures.passed);
  EXPECT_TRUE(check("failures < 212", run).passed);

  run.result.requests = 5;
  run.result.errors = {};
  run.result.duration_seconds = 100;
  EXPECT_EQ(check("rps > 0", run).observed, "0.0500/s");
}

TEST(ThresholdEvaluate, DroppedAndLateAreCounts) {
  RunResult run;
  run.result.requests = 100;
  run.result.errors.dropped = 3;
  run.result.rate = RateCounts{100, 7};
  const ThresholdOutcome dropped = check("dropped < 1", run);
  EXPECT_EQ(dropped.observed, "3");
  EXPECT_FALSE(dropped.passed);
  EXPECT_TRUE(check("dropped <= 3", run).passed);
  const ThresholdOutcome late = check("late <= 10", run);
  EXPECT_EQ(late.observed, "7");
  EXPECT_TRUE(late.passed);
  EXPECT_FALSE(check("late == 0", run).passed);
  EXPECT_EQ(must_parse("late < 5").metric, ThresholdMetric::late);
  EXPECT_NE(std::get<std::string>(parse_threshold("dropped < 5ms")).find("dropped"),
            std::string::npos);
  // A closed-model run has no intended times: nothing was measured.
  run.result.rate.reset();
  EXPECT_EQ(check("late == 0", run).observed, "n/a");
  EXPECT_FALSE(check("late == 0", run).passed);
  EXPECT_TRUE(check("dropped < 5", run).passed);
}

TEST(ThresholdEvaluate, RequestPrefixReadsThatRequestsRow) {
  RunResult run;
  run.result = result_with_latencies({{1000, 100}});
  run.request_results.push_back({"cart", result_with_latencies({{2000, 10}})});
  run.request_results.push_back({"home", result_with_latencies({{500, 90}})});
  EXPECT_EQ(check("cart.p99 < 5", run).observed, "2.00ms");
  EXPECT_EQ(check("home.p99 < 5", run).observed, "0.500ms");
  EXPECT_EQ(check("p99 < 5", run).observed, "1.00ms");
  EXPECT_EQ(check("cart.requests == 10", run).observed, "10");
  EXPECT_TRUE(check("cart.requests == 10", run).passed);
  EXPECT_FALSE(check("cart.p99 < 1.5", run).passed);
  EXPECT_TRUE(check("home.p99 < 1.5", run).passed);
}

TEST(ThresholdEvaluate, NothingMeasuredNeverPasses) {
  RunResult run;
  const ThresholdOutcome unknown_request = check("nosuch.p99 < 1s", run);
  EXPECT_EQ(unknown_request.observed, "n/a");
  EXPECT_FALSE(unknown_request.passed);
  EXPECT_FALSE(check("nosuch.requests >= 0", run).passed);

  // No complete response: no latency to compare, although 0 < 1 s.
  run.result.requests = 10;
  run.result.errors.connect = 10;
  const ThresholdOutcome latency = check("p99 < 1s", run);
  EXPECT_EQ(latency.observed, "n/a");
  EXPECT_FALSE(latency.passed);

  // No request at all: an error rate of "0" would be a lie.
  run.result = Result();
  const ThresholdOutcome error_rate = check("errorRate < 1%", run);
  EXPECT_EQ(error_rate.observed, "n/a");
  EXPECT_FALSE(error_rate.passed);
  // Counts are still counts.
  EXPECT_EQ(check("requests == 0", run).observed, "0");
  EXPECT_TRUE(check("requests == 0", run).passed);
  EXPECT_FALSE(check("rps > 0", run).passed);
}

}  // namespace
}  // namespace kubeload
