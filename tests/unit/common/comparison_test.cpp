#include "kubeload/comparison.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace kubeload {
namespace {

// Reference values below were computed independently of this code:
// - Student's sleep data: R's `t.test(extra ~ group, data = sleep, paired =
//   TRUE)` (the example in R's documentation of t.test, and many textbooks):
//   mean difference -1.58, 95% CI [-2.4598858, -0.7001142]. SciPy 1.17.1
//   agrees: `scipy.stats.ttest_rel(g1, g2).confidence_interval(0.95)` gives
//   (-2.459885763276983, -0.7001142367230175).
// - Student's t table: t_{0.975,1} = 12.7062, t_{0.975,5} = 2.570582,
//   t_{0.975,9} = 2.262157 (scipy.stats.t.ppf(0.975, df): 12.706204736174694,
//   2.5705818356363146, 2.262157162798205).
// - The other datasets (kSmall, kRoundsB, kRoundsA, kRps*): SciPy 1.17.1 in a
//   scratch venv, the command written next to each.

const std::vector<double> kSleepGroup1{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0};
const std::vector<double> kSleepGroup2{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4};

// Six interleaved rounds' p99 (ms) of variants b and a.
const std::vector<double> kRoundsB{101.2, 98.7, 103.5, 99.9, 102.4, 100.8};
const std::vector<double> kRoundsA{100.1, 99.5, 101.0, 98.2, 101.9, 99.0};

// ---------------------------------------------------------------- statistics

TEST(ComparisonStatistics, PairedDifferenceOfStudentsSleepDataMatchesR) {
  const auto interval = paired_difference(kSleepGroup1, kSleepGroup2);
  ASSERT_TRUE(interval);
  EXPECT_NEAR(interval->mean, -1.58, 1e-12);
  EXPECT_NEAR(interval->low, -2.4598858, 1e-7);
  EXPECT_NEAR(interval->high, -0.7001142, 1e-7);
  EXPECT_EQ(interval->n, 10u);
  EXPECT_DOUBLE_EQ(interval->confidence, 0.95);
  // The half width over the standard error is t_{0.975,9}.
  const double standard_error = interval->std_dev / std::sqrt(10.0);
  EXPECT_NEAR((interval->high - interval->low) / 2 / standard_error, 2.262157, 1e-6);
}

TEST(ComparisonStatistics, PairedDifferenceIsTheIntervalOfTheRoundDifferences) {
  std::vector<double> differences;
  for (size_t i = 0; i < kSleepGroup1.size(); ++i) {
    differences.push_back(kSleepGroup1[i] - kSleepGroup2[i]);
  }
  const auto paired = paired_difference(kSleepGroup1, kSleepGroup2, 0.9);
  const auto direct = mean_interval(differences, 0.9);
  ASSERT_TRUE(paired && direct);
  EXPECT_DOUBLE_EQ(paired->low, direct->low);
  EXPECT_DOUBLE_EQ(paired->high, direct->high);
}

struct IntervalCase {
  const char* name;
  std::vector<double> values;
  double confidence;
  double mean;
  double std_dev;
  double low;
  double high;
};

void PrintTo(const IntervalCase& row, std::ostream* out) {
  *out << row.name;
}

class ComparisonMeanInterval : public ::testing::TestWithParam<IntervalCase> {};

TEST_P(ComparisonMeanInterval, MatchesTheReference) {
  const IntervalCase& want = GetParam();
  const auto got = mean_interval(want.values, want.confidence);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->n, want.values.size());
  EXPECT_DOUBLE_EQ(got->confidence, want.confidence);
  EXPECT_NEAR(got->mean, want.mean, 1e-9);
  EXPECT_NEAR(got->std_dev, want.std_dev, 1e-9);
  EXPECT_NEAR(got->low, want.low, 1e-6);
  EXPECT_NEAR(got->high, want.high, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    Comparison, ComparisonMeanInterval,
    ::testing::Values(
        // n = 2: mean 1, sd sqrt(2), standard error 1, so the half width is
        // t_{0.975,1} = 12.7062 (table) = 12.706204736174694 (SciPy).
        IntervalCase{"TwoValuesHalfWidthIsT1",
                     {0, 2},
                     0.95,
                     1,
                     std::sqrt(2.0),
                     1 - 12.706204736174694,
                     1 + 12.706204736174694},
        // 10 -+ 3, three each: sd sqrt(54/5); the half width is
        // t_{0.975,5} = 2.570582 (table) times sd / sqrt(6).
        IntervalCase{"SixValuesHalfWidthIsT5",
                     {10 - 3, 10 - 3, 10 - 3, 10 + 3, 10 + 3, 10 + 3},
                     0.95,
                     10,
                     std::sqrt(54.0 / 5),
                     10 - 2.5705818356363146 * std::sqrt(54.0 / 5) / std::sqrt(6.0),
                     10 + 2.5705818356363146 * std::sqrt(54.0 / 5) / std::sqrt(6.0)},
        // x = [12.1, 11.8, 12.6, 12.3, 11.9];
        // scipy.stats.ttest_1samp(x, 0).confidence_interval(0.95) and (0.90),
        // numpy.std(x, ddof=1) = 0.320936130717624.
        IntervalCase{"FiveValues95",
                     {12.1, 11.8, 12.6, 12.3, 11.9},
                     0.95,
                     12.14,
                     0.320936130717624,
                     11.741505160765108,
                     12.53849483923489},
        IntervalCase{"FiveValues90",
                     {12.1, 11.8, 12.6, 12.3, 11.9},
                     0.90,
                     12.14,
                     0.320936130717624,
                     11.834022424286275,
                     12.445977575713723},
        // b - a of kRoundsB, kRoundsA:
        // scipy.stats.ttest_rel(b, a).confidence_interval(0.95) and (0.99).
        IntervalCase{
            "RoundDifferences95",
            {101.2 - 100.1, 98.7 - 99.5, 103.5 - 101.0, 99.9 - 98.2, 102.4 - 101.9, 100.8 - 99.0},
            0.95,
            1.1333333333333353,
            1.163901484949076,
            -0.08810636630008473,
            2.3547730329667553},
        IntervalCase{
            "RoundDifferences99",
            {101.2 - 100.1, 98.7 - 99.5, 103.5 - 101.0, 99.9 - 98.2, 102.4 - 101.9, 100.8 - 99.0},
            0.99,
            1.1333333333333353,
            1.163901484949076,
            -0.7825829181691477,
            3.0492495848358185},
        // No spread: the interval is the mean itself.
        IntervalCase{"ZeroVarianceIsAPoint", {4.5, 4.5, 4.5}, 0.95, 4.5, 0, 4.5, 4.5},
        // A small spread far from zero keeps its digits (two-pass variance).
        IntervalCase{"SmallSpreadOnALargeMean",
                     {1e9 + 1, 1e9 + 2, 1e9 + 3},
                     0.95,
                     1e9 + 2,
                     1,
                     1e9 + 2 - 4.302652729911275 / std::sqrt(3.0),
                     1e9 + 2 + 4.302652729911275 / std::sqrt(3.0)}));

TEST(ComparisonStatistics, FewerThanTwoValuesHaveNoInterval) {
  EXPECT_FALSE(mean_interval(std::vector<double>{}));
  EXPECT_FALSE(mean_interval(std::vector<double>{3.0}));
  EXPECT_FALSE(paired_difference(std::vector<double>{1.0}, std::vector<double>{2.0}));
}

TEST(ComparisonStatistics, BadInputThrows) {
  const std::vector<double> two{1, 2};
  const std::vector<double> three{1, 2, 3};
  EXPECT_THROW(paired_difference(two, three), std::invalid_argument);
  EXPECT_THROW(mean_interval(two, 0), std::invalid_argument);
  EXPECT_THROW(mean_interval(two, 1), std::invalid_argument);
  EXPECT_THROW(mean_interval(two, 95), std::invalid_argument);
  EXPECT_THROW(mean_interval(std::vector<double>{1, std::nan("")}), std::invalid_argument);
  EXPECT_THROW(mean_interval(std::vector<double>{1, INFINITY}), std::invalid_argument);
}

// ---------------------------------------------------------------- metric names

TEST(ComparisonMetric, NamesRoundTrip) {
  for (const ComparedMetricName& m : kComparedMetrics) {
    EXPECT_EQ(to_string(m.metric), m.name);
    EXPECT_EQ(compared_metric_from(m.name), m.metric) << m.name;
    EXPECT_EQ(unit_of(m.metric), m.unit) << m.name;
  }
  EXPECT_EQ(to_string(ComparedMetric::cpuPerRequest), "cpuPerRequest");
  EXPECT_EQ(to_string(ComparedMetric::errorRate), "errorRate");
  EXPECT_FALSE(compared_metric_from("P99"));
  EXPECT_FALSE(compared_metric_from("min"));
  EXPECT_FALSE(compared_metric_from(""));
}

TEST(ComparisonMetric, NamesSharedWithThresholdsAreSpelledAlike) {
  for (const ComparedMetricName& m : kComparedMetrics) {
    if (m.metric == ComparedMetric::cpuPerRequest) continue;  // no threshold of that
    const std::string expression = std::string(m.name) + " >= 0";
    const auto threshold = parse_threshold(expression);
    ASSERT_TRUE(std::holds_alternative<Threshold>(threshold)) << expression;
    EXPECT_EQ(to_string(std::get<Threshold>(threshold).metric), m.name);
    EXPECT_EQ(is_latency(std::get<Threshold>(threshold).metric),
              m.unit == ComparedUnit::milliseconds)
        << m.name;
  }
}

TEST(ComparisonMetric, OutcomeNames) {
  EXPECT_EQ(to_string(ComparisonOutcome::Pass), "Pass");
  EXPECT_EQ(to_string(ComparisonOutcome::Fail), "Fail");
  EXPECT_EQ(to_string(ComparisonOutcome::Inconclusive), "Inconclusive");
}

// ---------------------------------------------------------------- parser

struct ValidComparison {
  const char* text;
  const char* left;
  const char* right;
  ComparedMetric metric;
  ThresholdOp op;
  double factor;
  double offset;  // canonical unit
};

void PrintTo(const ValidComparison& row, std::ostream* out) {
  *out << '"' << row.text << '"';
}

class ParseValidComparison : public ::testing::TestWithParam<ValidComparison> {};

TEST_P(ParseValidComparison, GivesVariantsMetricOperatorFactorAndOffset) {
  const ValidComparison& want = GetParam();
  const auto parsed = parse_comparison(want.text);
  ASSERT_TRUE(std::holds_alternative<Comparison>(parsed))
      << want.text << ": " << std::get<std::string>(parsed);
  const Comparison& got = std::get<Comparison>(parsed);
  EXPECT_EQ(got.expression, want.text);
  EXPECT_EQ(got.left, want.left);
  EXPECT_EQ(got.right, want.right);
  EXPECT_EQ(got.metric, want.metric);
  EXPECT_EQ(got.op, want.op);
  EXPECT_DOUBLE_EQ(got.factor, want.factor);
  EXPECT_DOUBLE_EQ(got.offset, want.offset);
}

using CM = ComparedMetric;
using O = ThresholdOp;

INSTANTIATE_TEST_SUITE_P(
    Comparison, ParseValidComparison,
    ::testing::Values(
        ValidComparison{"b.p99 <= a.p99 * 1.05", "b", "a", CM::p99, O::le, 1.05, 0},
        ValidComparison{"canary.errorRate <= stable.errorRate + 0.5%", "canary", "stable",
                        CM::errorRate, O::le, 1, 0.005},
        ValidComparison{"b.rps >= a.rps * 0.95", "b", "a", CM::rps, O::ge, 0.95, 0},
        ValidComparison{"b.p99 <= a.p99 + 2ms", "b", "a", CM::p99, O::le, 1, 2},
        ValidComparison{"b.p99<a.p99", "b", "a", CM::p99, O::lt, 1, 0},
        ValidComparison{"  b.p50\t>  a.p50  ", "b", "a", CM::p50, O::gt, 1, 0},
        ValidComparison{"b.p90 <= a.p90 - 1.5s", "b", "a", CM::p90, O::le, 1, -1500},
        ValidComparison{"b.p95 <= a.p95 + 250us", "b", "a", CM::p95, O::le, 1, 0.25},
        ValidComparison{"b.p999 <= a.p999 + 3", "b", "a", CM::p999, O::le, 1, 3},  // bare: ms
        ValidComparison{"b.p99 <= a.p99-2ms", "b", "a", CM::p99, O::le, 1, -2},
        ValidComparison{"b.mean <= a.mean * 1.1 + 0.5ms", "b", "a", CM::mean, O::le, 1.1, 0.5},
        ValidComparison{"b.max < a.max*2", "b", "a", CM::max, O::lt, 2, 0},
        ValidComparison{"b.errorRate <= a.errorRate + 0.001", "b", "a", CM::errorRate, O::le, 1,
                        0.001},
        ValidComparison{"b.rps > a.rps - 50/s", "b", "a", CM::rps, O::gt, 1, -50},
        ValidComparison{"b.cpuPerRequest <= a.cpuPerRequest * 1.02 + 20us", "b", "a",
                        CM::cpuPerRequest, O::le, 1.02, 20e-6},
        ValidComparison{"b.cpuPerRequest <= a.cpuPerRequest + 0.1ms", "b", "a", CM::cpuPerRequest,
                        O::le, 1, 0.1e-3},
        ValidComparison{"new-build.p99 <= v1-2-3.p99", "new-build", "v1-2-3", CM::p99, O::le, 1, 0},
        // A variant may be named like a metric; the dot says which is which.
        ValidComparison{"p99.p99 <= rps.p99", "p99", "rps", CM::p99, O::le, 1, 0}));

struct InvalidComparison {
  const char* text;
  const char* message;
};

void PrintTo(const InvalidComparison& row, std::ostream* out) {
  *out << '"' << row.text << '"';
}

class ParseInvalidComparison : public ::testing::TestWithParam<InvalidComparison> {};

TEST_P(ParseInvalidComparison, NamesTheBadPart) {
  const auto parsed = parse_comparison(GetParam().text);
  ASSERT_TRUE(std::holds_alternative<std::string>(parsed)) << GetParam().text;
  EXPECT_EQ(std::get<std::string>(parsed), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Comparison, ParseInvalidComparison,
    ::testing::Values(
        InvalidComparison{"",
                          "empty comparison, expected VARIANT.METRIC OP VARIANT.METRIC in \"\""},
        InvalidComparison{"  ",
                          "empty comparison, expected VARIANT.METRIC OP VARIANT.METRIC in \"  \""},
        InvalidComparison{"<= a.p99", "expected VARIANT.METRIC at the start in \"<= a.p99\""},
        InvalidComparison{"p99 <= a.p99",
                          "expected \".\" and a metric after variant \"p99\" in \"p99 <= a.p99\""},
        InvalidComparison{"B.p99 <= a.p99",
                          "invalid variant name \"B\" (a DNS-1123 label: lower-case letters, "
                          "digits and '-') in \"B.p99 <= a.p99\""},
        InvalidComparison{"b_2.p99 <= a.p99",
                          "invalid variant name \"b_2\" (a DNS-1123 label: lower-case letters, "
                          "digits and '-') in \"b_2.p99 <= a.p99\""},
        InvalidComparison{"-b.p99 <= a.p99",
                          "invalid variant name \"-b\" (a DNS-1123 label: lower-case letters, "
                          "digits and '-') in \"-b.p99 <= a.p99\""},
        InvalidComparison{"b. <= a.p99", "expected a metric after \"b.\" in \"b. <= a.p99\""},
        InvalidComparison{"b.p98 <= a.p98",
                          "unknown metric \"p98\" (one of rps, p50, p90, p95, p99, p999, mean, "
                          "max, errorRate, cpuPerRequest) in \"b.p98 <= a.p98\""},
        InvalidComparison{"b.min <= a.min",
                          "unknown metric \"min\" (one of rps, p50, p90, p95, p99, p999, mean, "
                          "max, errorRate, cpuPerRequest) in \"b.min <= a.min\""},
        InvalidComparison{"b.p99",
                          "expected an operator (<, <=, >, >=) after \"b.p99\" in \"b.p99\""},
        InvalidComparison{
            "b.p99 = a.p99",
            "expected an operator (<, <=, >, >=) after \"b.p99\" in \"b.p99 = a.p99\""},
        InvalidComparison{"b.p99 == a.p99",
                          "operator \"==\" is not allowed (an interval never proves equality; use "
                          "<= or >=) in \"b.p99 == a.p99\""},
        InvalidComparison{"b.p99 <=", "expected VARIANT.METRIC after \"<=\" in \"b.p99 <=\""},
        InvalidComparison{"b.p99 <= 200ms",
                          "expected \".\" and a metric after variant \"200ms\" in \"b.p99 <= "
                          "200ms\""},
        InvalidComparison{"b.p99 <= A.p99",
                          "invalid variant name \"A\" (a DNS-1123 label: lower-case letters, "
                          "digits and '-') in \"b.p99 <= A.p99\""},
        InvalidComparison{"b.p99 <= a.rps",
                          "metrics differ: \"b.p99\" against \"a.rps\" (compare one metric) in "
                          "\"b.p99 <= a.rps\""},
        InvalidComparison{"b.p99 <= b.p99 * 1.05",
                          "variant \"b\" is compared with itself in \"b.p99 <= b.p99 * 1.05\""},
        InvalidComparison{"b.p99 <= a.p99 *",
                          "expected a number after \"*\" in \"b.p99 <= a.p99 *\""},
        InvalidComparison{"b.p99 <= a.p99 * -1",
                          "expected a number after \"*\" in \"b.p99 <= a.p99 * -1\""},
        InvalidComparison{"b.p99 <= a.p99 * 0",
                          "factor \"0\" is not above 0 in \"b.p99 <= a.p99 * 0\""},
        InvalidComparison{"b.p99 <= a.p99 * 1.05ms",
                          "unexpected \"ms\" in \"b.p99 <= a.p99 * 1.05ms\""},
        InvalidComparison{"b.p99 <= a.p99 +",
                          "expected a number after \"+\" in \"b.p99 <= a.p99 +\""},
        InvalidComparison{"b.p99 <= a.p99 - -2ms",
                          "expected a number after \"-\" in \"b.p99 <= a.p99 - -2ms\""},
        InvalidComparison{"b.p99 <= a.p99 + 2ms * 1.05",
                          "unexpected \"* 1.05\" in \"b.p99 <= a.p99 + 2ms * 1.05\""},
        InvalidComparison{"b.p99 <= a.p99 + 2m",
                          "unit \"m\" is not valid for p99 (use ms, s or us) in \"b.p99 <= a.p99 "
                          "+ 2m\""},
        InvalidComparison{"b.p99 <= a.p99 + 2%",
                          "unit \"%\" is not valid for p99 (use ms, s or us) in \"b.p99 <= a.p99 "
                          "+ 2%\""},
        InvalidComparison{"b.errorRate <= a.errorRate + 2",
                          "errorRate offset 2 is above 1 (write 2% for a percentage) in "
                          "\"b.errorRate <= a.errorRate + 2\""},
        InvalidComparison{"b.errorRate <= a.errorRate + 101%",
                          "errorRate offset 101% is above 100% in \"b.errorRate <= a.errorRate + "
                          "101%\""},
        InvalidComparison{"b.errorRate <= a.errorRate + 1ms",
                          "unit \"ms\" is not valid for errorRate (use % or a ratio) in "
                          "\"b.errorRate <= a.errorRate + 1ms\""},
        InvalidComparison{"b.rps >= a.rps - 5ms",
                          "unit \"ms\" is not valid for rps (use a bare number) in \"b.rps >= "
                          "a.rps - 5ms\""},
        InvalidComparison{"b.cpuPerRequest <= a.cpuPerRequest + 2",
                          "cpuPerRequest offset 2 needs a unit (s, ms or us) in "
                          "\"b.cpuPerRequest <= a.cpuPerRequest + 2\""},
        InvalidComparison{"b.cpuPerRequest <= a.cpuPerRequest + 2%",
                          "unit \"%\" is not valid for cpuPerRequest (use s, ms or us) in "
                          "\"b.cpuPerRequest <= a.cpuPerRequest + 2%\""},
        InvalidComparison{"b.p99 <= a.p99 extra",
                          "unexpected \"extra\" in \"b.p99 <= a.p99 extra\""}));

// ---------------------------------------------------------------- decide

Comparison comparison(const char* text) {
  auto parsed = parse_comparison(text);
  if (auto* error = std::get_if<std::string>(&parsed)) throw std::invalid_argument(*error);
  return std::get<Comparison>(std::move(parsed));
}

struct DecideCase {
  const char* name;
  const char* expression;
  std::vector<double> left;
  std::vector<double> right;
  ComparisonOutcome outcome;
  // The margin's interval (SciPy, as noted); NaN: no interval.
  double mean;
  double low;
  double high;
  std::optional<std::uint32_t> rounds_needed;
  const char* message;
};

void PrintTo(const DecideCase& row, std::ostream* out) {
  *out << row.name;
}

class ComparisonDecide : public ::testing::TestWithParam<DecideCase> {};

TEST_P(ComparisonDecide, GivesOutcomeMarginRoundsAndMessage) {
  const DecideCase& want = GetParam();
  const ComparisonDecision got = decide(comparison(want.expression), want.left, want.right);
  EXPECT_EQ(to_string(got.outcome), to_string(want.outcome));
  if (std::isnan(want.mean)) {
    EXPECT_FALSE(got.margin);
  } else {
    ASSERT_TRUE(got.margin);
    EXPECT_EQ(got.margin->n, want.left.size());
    EXPECT_NEAR(got.margin->mean, want.mean, 1e-9);
    EXPECT_NEAR(got.margin->low, want.low, 1e-9);
    EXPECT_NEAR(got.margin->high, want.high, 1e-9);
  }
  EXPECT_EQ(got.rounds_needed, want.rounds_needed);
  EXPECT_EQ(got.message, want.message);
}

constexpr double kNoInterval = NAN;

INSTANTIATE_TEST_SUITE_P(
    Comparison, ComparisonDecide,
    ::testing::Values(
        // m = b - 1.05*a; scipy.stats.ttest_1samp(m, 0).confidence_interval(0.95).
        DecideCase{"PassWhenTheWholeIntervalHolds", "b.p99 <= a.p99 * 1.05", kRoundsB, kRoundsA,
                   ComparisonOutcome::Pass, -3.8641666666666716, -5.0926852462407215,
                   -2.6356480870926218, std::nullopt,
                   "b.p99 - a.p99*1.05 is -3.9 ms [-5.1, -2.6] (95%, 6 rounds): holds"},
        // m = b - (a - 1): the whole interval is above 0.
        DecideCase{"FailWhenTheWholeIntervalViolates", "b.p99 < a.p99 - 1ms", kRoundsB, kRoundsA,
                   ComparisonOutcome::Fail, 2.133333333333335, 0.911893633699915,
                   3.3547730329667553, std::nullopt,
                   "b.p99 - a.p99 + 1 ms is 2.1 ms [0.9, 3.4] (95%, 6 rounds): fails"},
        // m = b - 0.95*a_rps; below 0 for >= is a failure.
        DecideCase{"FailForGreaterOrEqual",
                   "b.rps >= a.rps * 0.95",
                   {900, 910, 905, 895, 902},
                   {1000, 1005, 998, 1002, 1001},
                   ComparisonOutcome::Fail,
                   -48.73999999999997,
                   -55.42503755658533,
                   -42.0549624434146,
                   std::nullopt,
                   "b.rps - a.rps*0.95 is -48.7/s [-55.4, -42.1] (95%, 5 rounds): fails"},
        DecideCase{"PassForGreaterThan",
                   "a.rps > b.rps * 0.95",
                   {1000, 1005, 998, 1002, 1001},
                   {900, 910, 905, 895, 902},
                   ComparisonOutcome::Pass,
                   143.92000000000002,
                   137.5175091593554,
                   150.32249084064463,
                   std::nullopt,
                   "a.rps - b.rps*0.95 is 143.9/s [137.5, 150.3] (95%, 5 rounds): holds"},
        // m = b - a includes 0. rounds_needed: the smallest k > 6 with
        // scipy.stats.t.ppf(0.975, k-1) * 1.163901484949076 / sqrt(k) < 1.1333...:
        // k = 7 (1.0764 < 1.1333).
        DecideCase{"InconclusiveWhenTheIntervalStraddlesZero", "b.p99 <= a.p99", kRoundsB, kRoundsA,
                   ComparisonOutcome::Inconclusive, 1.1333333333333353, -0.08810636630008473,
                   2.3547730329667553, 7,
                   "b.p99 - a.p99 is 1.1 ms [-0.1, 2.4] (95%, 6 rounds): inconclusive, the "
                   "interval includes 0; about 7 rounds in all would likely decide"},
        // m = b - (a + 0.5): mean 0.6333, the same spread; at k = 15 the half
        // width is 0.64455 (not below), at k = 16 it is 0.62020: 16 rounds.
        DecideCase{"RoundsNeededIsTheSmallestDecidingCount", "b.p99 <= a.p99 + 0.5ms", kRoundsB,
                   kRoundsA, ComparisonOutcome::Inconclusive, 0.6333333333333352,
                   -0.5881063663000848, 1.8547730329667553, 16,
                   "b.p99 - a.p99 - 0.5 ms is 0.6 ms [-0.6, 1.9] (95%, 6 rounds): inconclusive, "
                   "the interval includes 0; about 16 rounds in all would likely decide"},
        // m = b - (a + 1.1): mean 0.0333; even at 1000 rounds the half width
        // is 0.0722 (scipy), so rounds_needed is capped.
        DecideCase{"RoundsNeededIsCappedAt1000", "b.p99 <= a.p99 + 1.1ms", kRoundsB, kRoundsA,
                   ComparisonOutcome::Inconclusive, 0.03333333333334091, -1.188106366300079,
                   1.254773032966761, 1000,
                   "b.p99 - a.p99 - 1.1 ms is 0.0 ms [-1.2, 1.3] (95%, 6 rounds): inconclusive, "
                   "the interval includes 0; even 1000 rounds would likely not"},
        // Margins -1, 0, 1: mean 0, no count of rounds would likely decide.
        DecideCase{"NoRoundsNeededWhenTheMeanIsZero",
                   "b.p99 <= a.p99",
                   {1, 2, 3},
                   {2, 2, 2},
                   ComparisonOutcome::Inconclusive,
                   0,
                   -2.48413771175033,
                   2.48413771175033,
                   std::nullopt,
                   "b.p99 - a.p99 is 0.0 ms [-2.5, 2.5] (95%, 3 rounds): inconclusive, the "
                   "interval includes 0"},
        // No spread: the interval is the point; it decides at once.
        DecideCase{"ZeroVariancePasses",
                   "b.p99 <= a.p99",
                   {10, 11, 12},
                   {11, 12, 13},
                   ComparisonOutcome::Pass,
                   -1,
                   -1,
                   -1,
                   std::nullopt,
                   "b.p99 - a.p99 is -1.0 ms [-1.0, -1.0] (95%, 3 rounds): holds"},
        DecideCase{"ZeroVarianceFails",
                   "b.p99 <= a.p99",
                   {12, 13},
                   {11, 12},
                   ComparisonOutcome::Fail,
                   1,
                   1,
                   1,
                   std::nullopt,
                   "b.p99 - a.p99 is 1.0 ms [1.0, 1.0] (95%, 2 rounds): fails"},
        // A zero margin holds <= and >= but not < or >.
        DecideCase{"ZeroMarginHoldsLessOrEqual",
                   "b.p99 <= a.p99",
                   {5, 6},
                   {5, 6},
                   ComparisonOutcome::Pass,
                   0,
                   0,
                   0,
                   std::nullopt,
                   "b.p99 - a.p99 is 0.00 ms [0.00, 0.00] (95%, 2 rounds): holds"},
        DecideCase{"ZeroMarginFailsLessThan",
                   "b.p99 < a.p99",
                   {5, 6},
                   {5, 6},
                   ComparisonOutcome::Fail,
                   0,
                   0,
                   0,
                   std::nullopt,
                   "b.p99 - a.p99 is 0.00 ms [0.00, 0.00] (95%, 2 rounds): fails"},
        DecideCase{"ZeroMarginHoldsGreaterOrEqual",
                   "b.p99 >= a.p99",
                   {5, 6},
                   {5, 6},
                   ComparisonOutcome::Pass,
                   0,
                   0,
                   0,
                   std::nullopt,
                   "b.p99 - a.p99 is 0.00 ms [0.00, 0.00] (95%, 2 rounds): holds"},
        DecideCase{"ZeroMarginFailsGreaterThan",
                   "b.p99 > a.p99",
                   {5, 6},
                   {5, 6},
                   ComparisonOutcome::Fail,
                   0,
                   0,
                   0,
                   std::nullopt,
                   "b.p99 - a.p99 is 0.00 ms [0.00, 0.00] (95%, 2 rounds): fails"},
        DecideCase{"OneRoundIsInconclusive",
                   "b.p99 <= a.p99 * 1.05",
                   {90},
                   {100},
                   ComparisonOutcome::Inconclusive,
                   kNoInterval,
                   0,
                   0,
                   std::nullopt,
                   "b.p99 <= a.p99 * 1.05: inconclusive, 1 round (an interval needs 2)"},
        DecideCase{"NoRoundIsInconclusive",
                   "b.p99 <= a.p99",
                   {},
                   {},
                   ComparisonOutcome::Inconclusive,
                   kNoInterval,
                   0,
                   0,
                   std::nullopt,
                   "b.p99 <= a.p99: inconclusive, 0 rounds (an interval needs 2)"},
        // The error rate's margin is shown in percent, an offset too.
        DecideCase{"ErrorRateInPercent",
                   "canary.errorRate <= stable.errorRate + 0.5%",
                   {0.002, 0.003, 0.002},
                   {0.001, 0.001, 0.001},
                   ComparisonOutcome::Pass,
                   -0.0036666666666666666,
                   -0.00510088424324982,
                   -0.0022324490900835128,
                   std::nullopt,
                   "canary.errorRate - stable.errorRate - 0.5% is -0.37% [-0.51, -0.22] (95%, 3 "
                   "rounds): holds"},
        // CPU per request is in core-seconds, shown in microseconds.
        DecideCase{"CpuPerRequestInMicroseconds",
                   "b.cpuPerRequest <= a.cpuPerRequest + 20us",
                   {0.000210, 0.000212, 0.000214},
                   {0.000200, 0.000200, 0.000200},
                   ComparisonOutcome::Pass,
                   -8.000000000000005e-06,
                   -1.296827542350065e-05,
                   -3.0317245764993593e-06,
                   std::nullopt,
                   "b.cpuPerRequest - a.cpuPerRequest - 20 us is -8.0 us [-13.0, -3.0] (95%, 3 "
                   "rounds): holds"}));

TEST(ComparisonDecide, RoundsOfDifferentCountsThrow) {
  const std::vector<double> two{1, 2};
  const std::vector<double> three{1, 2, 3};
  EXPECT_THROW(decide(comparison("b.p99 <= a.p99"), two, three), std::invalid_argument);
}

TEST(ComparisonDecide, ConfidenceIsUsedAndShown) {
  // At 99% the RoundDifferences interval is wider; the message says 99%.
  const ComparisonDecision got = decide(comparison("b.p99 <= a.p99"), kRoundsB, kRoundsA, 0.99);
  ASSERT_TRUE(got.margin);
  EXPECT_NEAR(got.margin->low, -0.7825829181691477, 1e-9);
  EXPECT_NEAR(got.margin->high, 3.0492495848358185, 1e-9);
  EXPECT_NE(got.message.find("(99%, 6 rounds)"), std::string::npos) << got.message;
}

}  // namespace
}  // namespace kubeload
