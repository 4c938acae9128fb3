// Thresholds of scenario runs (docs/scenarios.md#results): steps are request
// rows, `X.iterations` names a scenario, `iteration.p95` every scenario's
// iteration durations.
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include "kubeload/result.hpp"
#include "kubeload/spec.hpp"
#include "kubeload/threshold.hpp"

namespace kubeload {
namespace {

Threshold must_parse(const std::string& text) {
  auto parsed = parse_threshold(text);
  if (auto* message = std::get_if<std::string>(&parsed)) {
    ADD_FAILURE() << *message;
    return {};
  }
  return std::get<Threshold>(parsed);
}

std::string refusal(const std::string& text) {
  auto parsed = parse_threshold(text);
  if (auto* message = std::get_if<std::string>(&parsed)) return *message;
  return "accepted";
}

TEST(ScenarioThreshold, TheMetricAndPrefixDecideTheRow) {
  const Threshold all = must_parse("iterations >= 1000");
  EXPECT_EQ(all.scope, ThresholdScope::run);
  EXPECT_EQ(all.metric, ThresholdMetric::iterations);
  EXPECT_EQ(all.value, 1000);
  EXPECT_EQ(all.request, "");

  const Threshold buy = must_parse("buy.failedIterations == 0");
  EXPECT_EQ(buy.scope, ThresholdScope::scenario);
  EXPECT_EQ(buy.request, "buy");
  EXPECT_EQ(buy.metric, ThresholdMetric::failedIterations);

  const Threshold step = must_parse("login.p99 < 200ms");
  EXPECT_EQ(step.scope, ThresholdScope::request);
  EXPECT_EQ(step.request, "login");

  const Threshold iteration = must_parse("iteration.p95 < 3s");
  EXPECT_EQ(iteration.scope, ThresholdScope::iteration);
  EXPECT_EQ(iteration.request, "");
  EXPECT_EQ(iteration.metric, ThresholdMetric::p95);
  EXPECT_EQ(iteration.value, 3000);
  EXPECT_EQ(must_parse("iteration.max <= 10s").metric, ThresholdMetric::max);
  EXPECT_EQ(must_parse("iteration.mean < 800").value, 800);

  EXPECT_EQ(to_string(ThresholdMetric::iterations), "iterations");
  EXPECT_EQ(to_string(ThresholdMetric::failedIterations), "failedIterations");
}

TEST(ScenarioThreshold, MisuseIsRefusedQuotingTheExpression) {
  EXPECT_EQ(refusal("iteration.errorRate < 1%"),
            "\"errorRate\" is not an iteration metric (iteration. takes p50, p90, p95, p99, p999, "
            "max, mean, min) in \"iteration.errorRate < 1%\"");
  EXPECT_EQ(refusal("iteration.iterations > 5"),
            "\"iterations\" is not an iteration metric (iteration. takes p50, p90, p95, p99, "
            "p999, max, mean, min) in \"iteration.iterations > 5\"");
  EXPECT_EQ(
      refusal("iterations >= 10/s"),
      "unit \"/s\" is not valid for iterations (use a bare number) in \"iterations >= 10/s\"");
  EXPECT_EQ(refusal("buy.failedIterations < 1%"),
            "unit \"%\" is not valid for failedIterations (use a bare number) in "
            "\"buy.failedIterations < 1%\"");
  EXPECT_EQ(refusal("iteration.p95 < 3%"),
            "unit \"%\" is not valid for p95 (use ms, s or us) in \"iteration.p95 < 3%\"");
  EXPECT_EQ(refusal("Buy.iterations > 1"),
            "invalid request name \"Buy\" in \"Buy.iterations > 1\"");
  EXPECT_EQ(refusal("iterations > -1"), "negative value \"-1\" in \"iterations > -1\"");
}

ScenarioResult scenario_row(std::string name, uint64_t iterations, uint64_t failed,
                            int64_t duration_us) {
  ScenarioResult row{std::move(name), iterations, failed, Histogram{}};
  row.duration.record(duration_us, iterations);
  return row;
}

// Two scenarios; login is a step both share, so one request row.
RunResult scenario_run() {
  RunResult run;
  run.result.requests = 700;
  run.result.latency.record(1000, 700);
  run.result.duration_seconds = 10;
  Result login;
  login.requests = 300;
  login.errors.extract = 3;
  login.latency.record(1500, 300);
  login.duration_seconds = 10;
  run.request_results = {NamedResult{"login", login}};
  run.scenarios = {scenario_row("buy", 100, 4, 2'000'000),  // 2 s each
                   scenario_row("browse", 200, 0, 500'000)};
  return run;
}

TEST(ScenarioThreshold, CountsReadAScenarioRowOrEveryScenario) {
  const RunResult run = scenario_run();
  ThresholdOutcome all = evaluate(must_parse("iterations >= 300"), run);
  EXPECT_TRUE(all.passed);
  EXPECT_EQ(all.observed, "300");
  EXPECT_EQ(all.value, 300);
  EXPECT_FALSE(evaluate(must_parse("iterations > 300"), run).passed);
  EXPECT_EQ(evaluate(must_parse("failedIterations == 4"), run).observed, "4");
  EXPECT_TRUE(evaluate(must_parse("failedIterations == 4"), run).passed);

  const ThresholdOutcome buy = evaluate(must_parse("buy.failedIterations == 0"), run);
  EXPECT_FALSE(buy.passed);
  EXPECT_EQ(buy.observed, "4");
  EXPECT_TRUE(evaluate(must_parse("browse.iterations >= 200"), run).passed);
  EXPECT_TRUE(evaluate(must_parse("browse.failedIterations == 0"), run).passed);
}

TEST(ScenarioThreshold, IterationLatenciesMergeEveryScenario) {
  const RunResult run = scenario_run();
  // 200 iterations of 0.5 s and 100 of 2 s: the median is 0.5 s, p95 2 s.
  const ThresholdOutcome p50 = evaluate(must_parse("iteration.p50 < 1s"), run);
  EXPECT_TRUE(p50.passed);
  EXPECT_NEAR(*p50.value, 500, 1);
  const ThresholdOutcome p95 = evaluate(must_parse("iteration.p95 < 1s"), run);
  EXPECT_FALSE(p95.passed);
  EXPECT_NEAR(*p95.value, 2000, 2);
  EXPECT_EQ(p95.observed.back(), 's');
  EXPECT_NEAR(*evaluate(must_parse("iteration.max < 3s"), run).value, 2000, 2);
  EXPECT_NEAR(*evaluate(must_parse("iteration.mean < 3s"), run).value, 1000, 2);
}

TEST(ScenarioThreshold, StepsAreRequestRowsAndRequestCountsStayOnTheMergedResult) {
  const RunResult run = scenario_run();
  const ThresholdOutcome login = evaluate(must_parse("login.errorRate < 0.5%"), run);
  EXPECT_FALSE(login.passed);
  EXPECT_EQ(login.observed, "1%");
  EXPECT_TRUE(evaluate(must_parse("login.p99 < 2ms"), run).passed);
  EXPECT_TRUE(evaluate(must_parse("requests >= 700"), run).passed);
}

TEST(ScenarioThreshold, WhatTheRunDoesNotHaveNeverPasses) {
  const RunResult run = scenario_run();
  for (const char* text :
       {"nope.iterations >= 0", "nope.failedIterations == 0", "nope.p99 < 3600s"}) {
    const ThresholdOutcome outcome = evaluate(must_parse(text), run);
    EXPECT_FALSE(outcome.passed) << text;
    EXPECT_EQ(outcome.observed, "n/a") << text;
    EXPECT_FALSE(outcome.value) << text;
  }
  RunResult plain;
  plain.result.requests = 5;
  plain.result.latency.record(100, 5);
  for (const char* text : {"iterations >= 0", "failedIterations == 0", "iteration.p95 < 3600s"}) {
    const ThresholdOutcome outcome = evaluate(must_parse(text), plain);
    EXPECT_FALSE(outcome.passed) << text;
    EXPECT_EQ(outcome.observed, "n/a") << text;
  }
  // Scenarios that ended no iteration: counts are 0, durations unknown.
  RunResult idle;
  idle.scenarios = {ScenarioResult{"buy", 0, 0, Histogram{}}};
  EXPECT_TRUE(evaluate(must_parse("iterations == 0"), idle).passed);
  EXPECT_EQ(evaluate(must_parse("iteration.p99 < 3600s"), idle).observed, "n/a");
}

LoadTestSpec scenario_spec() {
  LoadTestSpec spec;
  ScenarioSpec buy;
  buy.name = "buy";
  buy.steps.resize(2);
  buy.steps[0].name = "login";
  buy.steps[1].name = "checkout";
  ScenarioSpec browse;
  browse.name = "browse";
  browse.steps.resize(1);
  browse.steps[0].name = "login";
  spec.scenarios = {buy, browse};
  return spec;
}

TEST(ScenarioThreshold, TheSpecSaysWhetherTheNamedRowExists) {
  const LoadTestSpec spec = scenario_spec();
  for (const char* text : {"login.p99 < 1s", "checkout.errorRate < 1%", "buy.iterations > 1",
                           "browse.failedIterations == 0", "iterations >= 10", "iteration.p95 < 3s",
                           "p99 < 1s", "requests > 5"}) {
    EXPECT_EQ(threshold_row_problem(must_parse(text), spec), "") << text;
  }
  EXPECT_EQ(threshold_row_problem(must_parse("logout.p99 < 1s"), spec),
            "unknown step \"logout\" in \"logout.p99 < 1s\"");
  EXPECT_EQ(threshold_row_problem(must_parse("shop.iterations > 1"), spec),
            "unknown scenario \"shop\" in \"shop.iterations > 1\"");
  EXPECT_EQ(threshold_row_problem(must_parse("buy.p95 < 3s"), spec),
            "\"buy\" is a scenario: its rows are buy.iterations and buy.failedIterations, and "
            "iteration.p95 reads every scenario's iteration durations in \"buy.p95 < 3s\"");
  // A scenario's name is not a step's, nor a step's a scenario's.
  EXPECT_EQ(threshold_row_problem(must_parse("login.iterations > 1"), spec),
            "unknown scenario \"login\" in \"login.iterations > 1\"");

  LoadTestSpec plain;
  plain.requests.resize(1);
  plain.requests[0].name = "cart";
  EXPECT_EQ(threshold_row_problem(must_parse("cart.p99 < 1s"), plain), "");
  EXPECT_EQ(threshold_row_problem(must_parse("home.p99 < 1s"), plain),
            "unknown request \"home\" in \"home.p99 < 1s\"");
  EXPECT_EQ(threshold_row_problem(must_parse("iterations >= 10"), plain),
            "iterations counts iterations of spec.scenarios, and there are none in "
            "\"iterations >= 10\"");
  EXPECT_EQ(threshold_row_problem(must_parse("iteration.p95 < 3s"), plain),
            "iteration names the iterations of spec.scenarios, and there are none in "
            "\"iteration.p95 < 3s\"");
  EXPECT_EQ(threshold_row_problem(must_parse("buy.iterations > 1"), plain),
            "unknown scenario \"buy\" in \"buy.iterations > 1\"");
}

}  // namespace
}  // namespace kubeload
