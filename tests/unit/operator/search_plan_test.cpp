// A capacity search's plan (operator/search_plan.hpp): growth by the factor,
// bisection to the precision, the limits (spec.search's max and the
// operator's ceiling), a first step that fails, a step that Failed or was
// refused, one step at a time across repeated passes, the final status kept,
// and a search against a fixture with a known knee finding it within the
// precision asked.

#include <gtest/gtest.h>

#include "golden_files.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/result.hpp"
#include "kubeload/spec.hpp"
#include "operator/conditions.hpp"
#include "operator/search_plan.hpp"

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;

constexpr const char* kUid = "5e5e5e5e-0000-4000-8000-000000000001";

Timestamp at(const std::string& rfc3339) {
  return *parse_time(rfc3339);
}

SearchObservation observe(json search) {
  SearchObservation o;
  api::LoadTest& s = o.search;
  s.metadata.name = "nginx-capacity";
  s.metadata.namespace_ = "shop";
  s.metadata.uid = kUid;
  s.metadata.generation = 1;
  s.spec = json::parse(R"({
    "target": {"service": {"name": "nginx-slow", "port": 80}},
    "load": {"duration": "5s"},
    "thresholds": ["p99 < 100ms"]
  })");
  s.spec["search"] = std::move(search);
  const ParsedLoadTest parsed = parse_loadtest(json{
      {"apiVersion", "kubeload.dev/v1alpha1"},
      {"kind", "LoadTest"},
      {"metadata", {{"name", "nginx-capacity"}}},
      {"spec", s.spec}}.dump());
  EXPECT_TRUE(parsed.ok()) << (parsed.errors.empty() ? "" : parsed.errors[0].to_string());
  o.spec = parsed.spec;
  o.now = at("2026-12-04T10:00:00Z");
  return o;
}

SearchObservation rate_search(double start, double factor = 2, json precision = "10%") {
  return observe({{"rate", {{"start", start}, {"factor", factor}, {"precision", precision}}}});
}

// A finished step at `value` whose every request took `latency_ms`, judged
// by p99 < 100ms as the step's own LoadTest would be.
RoundRun finished(uint64_t step, double value, int64_t latency_ms) {
  Result result;
  result.requests = 500;
  result.duration_seconds = 5;
  result.status_codes[200] = result.requests;
  for (uint64_t i = 0; i < result.requests; ++i) result.latency.record(latency_ms * 1000);
  RoundRun run;
  run.name = "nginx-capacity-step-" + std::to_string(step);
  run.controller_uid = kUid;
  run.round = step;
  run.value = value;
  run.status.phase = api::Phase::Succeeded;
  run.status.start_time = at("2026-12-04T09:00:00Z") + std::chrono::minutes(step);
  run.status.completion_time = *run.status.start_time + std::chrono::seconds(5);
  const bool passed = latency_ms < 100;
  run.status.verdict = passed ? api::Verdict::Pass : api::Verdict::Fail;
  run.status.reason = passed ? "ThresholdsPassed" : "ThresholdsFailed";
  run.status.thresholds = {
      {"p99 < 100ms", std::to_string(latency_ms) + "ms", static_cast<double>(latency_ms), passed}};
  json encoded;
  to_json(encoded, result);
  run.status.result = encoded;
  return run;
}

// The value the LoadTest created asks for (spec.load.rate or connections).
double created_value(const ExperimentPlan& plan) {
  const json& load = (*plan.create)["spec"]["load"];
  return load.contains("rate") ? load["rate"].get<double>() : load["connections"].get<double>();
}

// Runs the search to its end against a server whose p99 is 20 ms up to
// `knee` and 400 ms above it; returns the last plan.
ExperimentPlan run_against_knee(SearchObservation& o, double knee, std::vector<double>* values) {
  for (int pass = 0; pass < 100; ++pass) {
    ExperimentPlan plan = plan_search(o);
    if (plan.status.final()) return plan;
    EXPECT_TRUE(plan.create) << plan.status.message;
    if (!plan.create) return plan;
    const double value = created_value(plan);
    if (values != nullptr) values->push_back(value);
    o.runs.push_back(finished(o.runs.size() + 1, value, value <= knee ? 20 : 400));
  }
  ADD_FAILURE() << "the search did not end";
  return plan_search(o);
}

// Prometheus's figures for a step come ~15 s after it ends: the next step
// does not wait for them, the end of the search does.
TEST(SearchPlan, ItEndsOnlyOnceEveryStepsTargetUsageIsIn) {
  SearchObservation o = rate_search(25);
  api::Condition waiting;
  waiting.type = "TargetMetrics";
  waiting.status = api::ConditionStatus::Unknown;
  waiting.reason = "WaitingForScrapes";
  o.runs.push_back(finished(1, 25, 20));
  o.runs.back().status.conditions.push_back(waiting);
  ExperimentPlan plan = plan_search(o);
  ASSERT_TRUE(plan.create) << plan.status.message;  // step 2 starts meanwhile
  EXPECT_EQ(created_value(plan), 50);

  // A first step that failed ends the search...
  SearchObservation first_failed = rate_search(25);
  first_failed.runs.push_back(finished(1, 25, 400));
  first_failed.runs.back().status.conditions.push_back(waiting);
  plan = plan_search(first_failed);
  EXPECT_EQ(plan.status.phase, api::Phase::Running);  // ...once its CPU is in
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.message,
            "every step ran; waiting for the target's resource use of 1 step (Prometheus)");
  first_failed.runs.back().status.conditions.back().status = api::ConditionStatus::True;
  plan = plan_search(first_failed);
  EXPECT_EQ(plan.status.phase, api::Phase::Succeeded);
  EXPECT_EQ(plan.status.reason, "NoPassingStep");
}

TEST(SearchPlan, TheFirstPassCreatesTheStartStep) {
  const ExperimentPlan plan = plan_search(rate_search(25));
  ASSERT_TRUE(plan.create);
  EXPECT_EQ((*plan.create)["metadata"]["name"], "nginx-capacity-step-1");
  EXPECT_EQ(created_value(plan), 25);
  EXPECT_EQ(plan.status.phase, api::Phase::Running);
  EXPECT_EQ(plan.status.message, "step 1: starting at 25/s");
  EXPECT_EQ(plan.status.search->over, "rate");
  EXPECT_TRUE(plan.requeue_after);
}

TEST(SearchPlan, StepsGrowByTheFactorWhileTheyPass) {
  SearchObservation o = rate_search(25, 3);
  o.runs.push_back(finished(1, 25, 10));
  EXPECT_EQ(created_value(plan_search(o)), 75);
  o.runs.push_back(finished(2, 75, 10));
  EXPECT_EQ(created_value(plan_search(o)), 225);
}

TEST(SearchPlan, OneStepAtATimeAndARepeatedPassCreatesNothingMore) {
  SearchObservation o = rate_search(25);
  o.runs.push_back(finished(1, 25, 10));
  RoundRun second;
  second.name = "nginx-capacity-step-2";
  second.controller_uid = kUid;
  second.round = 2;
  second.value = 50;
  second.status.phase = api::Phase::Running;
  o.runs.push_back(second);
  const ExperimentPlan plan = plan_search(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Running);
  EXPECT_EQ(plan.status.message, "step 2 at 50/s (LoadTest nginx-capacity-step-2) Running");
  ASSERT_EQ(plan.status.search->steps.size(), 2u);
  EXPECT_EQ(plan.status.search->steps[1].phase, api::Phase::Running);
  // Another search's LoadTest of the same name is not this one's.
  o.runs.pop_back();
  second.controller_uid = "other";
  o.runs.push_back(second);
  EXPECT_TRUE(plan_search(o).create);
}

TEST(SearchPlan, ItBisectsBetweenTheHighestPassAndTheLowestFailToThePrecision) {
  SearchObservation o = rate_search(25);
  o.runs.push_back(finished(1, 25, 10));
  o.runs.push_back(finished(2, 50, 10));
  o.runs.push_back(finished(3, 100, 10));
  o.runs.push_back(finished(4, 200, 400));
  EXPECT_EQ(created_value(plan_search(o)), 150);
  o.runs.push_back(finished(5, 150, 400));
  EXPECT_EQ(created_value(plan_search(o)), 125);
  o.runs.push_back(finished(6, 125, 400));
  EXPECT_EQ(created_value(plan_search(o)), 112.5);
  o.runs.push_back(finished(7, 112.5, 400));
  EXPECT_EQ(created_value(plan_search(o)), 106.25);
  o.runs.push_back(finished(8, 106.25, 400));  // 6.25 <= 10% of 100: found
  const ExperimentPlan plan = plan_search(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Succeeded);
  EXPECT_EQ(plan.status.verdict, api::Verdict::Pass);
  EXPECT_EQ(plan.status.reason, "CapacityFound");
  EXPECT_EQ(plan.status.message,
            "highest passing rate 100/s, first failing 106.25/s: p99 < 100ms (observed 400ms)");
  const api::SearchStatus& search = *plan.status.search;
  EXPECT_EQ(search.highest_passing, 100);
  EXPECT_EQ(search.first_failing, 106.25);
  ASSERT_EQ(search.steps.size(), 8u);
  EXPECT_EQ(search.steps[3].value, 200);
  EXPECT_EQ(search.steps[3].verdict, api::Verdict::Fail);
  EXPECT_EQ(search.steps[3].failed, (std::vector<std::string>{"p99 < 100ms (observed 400ms)"}));
  EXPECT_TRUE(search.steps[2].failed.empty());
  EXPECT_NEAR(search.steps[0].metrics.at("p99"), 10, 0.01);  // the histogram's precision
  // The thresholds as judged at the highest passing rate.
  ASSERT_EQ(plan.status.thresholds.size(), 1u);
  EXPECT_TRUE(plan.status.thresholds[0].passed);
  ASSERT_EQ(plan.events.size(), 1u);
  EXPECT_EQ(plan.events[0].type, "Normal");
  const GateReading gate =
      read_gate(json{{"metadata", {{"generation", 1}}}, {"status", plan.status}});
  EXPECT_EQ(gate.state, GateState::Passed);
}

TEST(SearchPlan, AnAbsolutePrecisionIsAWidthInTheValuesUnit) {
  SearchObservation o = rate_search(100, 2, 30);
  o.runs.push_back(finished(1, 100, 10));
  o.runs.push_back(finished(2, 200, 400));
  EXPECT_EQ(created_value(plan_search(o)), 150);
  o.runs.push_back(finished(3, 150, 10));
  EXPECT_EQ(created_value(plan_search(o)), 175);
  o.runs.push_back(finished(4, 175, 10));  // 25 <= 30
  EXPECT_EQ(plan_search(o).status.reason, "CapacityFound");
}

TEST(SearchPlan, FindsAKnownKneeWithinThePrecisionAsked) {
  for (const double knee : {7.0, 99.0, 100.0, 130.0, 999.0}) {
    SearchObservation o = rate_search(25);
    std::vector<double> values;
    const ExperimentPlan plan = run_against_knee(o, knee, &values);
    const api::SearchStatus& search = *plan.status.search;
    if (knee < 25) {
      EXPECT_EQ(plan.status.reason, "NoPassingStep") << knee;
      continue;
    }
    EXPECT_EQ(plan.status.reason, "CapacityFound") << knee;
    ASSERT_TRUE(search.highest_passing && search.first_failing) << knee;
    EXPECT_LE(*search.highest_passing, knee);
    EXPECT_GT(*search.first_failing, knee);
    EXPECT_LE(*search.first_failing - *search.highest_passing, *search.highest_passing * 0.10)
        << knee;
    EXPECT_EQ(search.steps.size(), values.size());
  }
}

TEST(SearchPlan, ConnectionsAreWholeAndTheBisectionEndsWhenTheyAreAdjacent) {
  SearchObservation o =
      observe({{"connections", {{"start", 2}, {"factor", 1.5}, {"precision", 1}}}});
  std::vector<double> values;
  const ExperimentPlan plan = run_against_knee(o, 13, &values);
  for (const double value : values) EXPECT_EQ(value, std::floor(value));
  EXPECT_EQ(values.front(), 2);
  EXPECT_EQ(values[1], 3);  // 2 * 1.5
  EXPECT_EQ(plan.status.search->highest_passing, 13);
  EXPECT_EQ(plan.status.search->first_failing, 14);
  EXPECT_EQ(plan.status.search->over, "connections");
  EXPECT_EQ(plan.status.reason, "CapacityFound");
}

TEST(SearchPlan, NoStepAboveTheMaxAndPassingAtItMeansTheLimitWasNotFound) {
  SearchObservation o = observe({{"rate", {{"start", 25}, {"max", 80}, {"precision", "10%"}}}});
  o.runs.push_back(finished(1, 25, 10));
  o.runs.push_back(finished(2, 50, 10));
  EXPECT_EQ(created_value(plan_search(o)), 80);
  o.runs.push_back(finished(3, 80, 10));
  const ExperimentPlan plan = plan_search(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Succeeded);
  EXPECT_EQ(plan.status.verdict, api::Verdict::Pass);
  EXPECT_EQ(plan.status.reason, "CeilingReached");
  EXPECT_EQ(plan.status.message,
            "every step passed up to the limit of 80/s (spec.search.rate.max): the capacity is "
            "above it, not found");
  EXPECT_EQ(plan.status.search->limit, 80);
  EXPECT_EQ(plan.status.search->limit_by, "spec.search.rate.max");
  EXPECT_EQ(plan.status.search->highest_passing, 80);
  EXPECT_FALSE(plan.status.search->first_failing);
}

TEST(SearchPlan, TheOperatorsCeilingIsNeverAskedAboveAndTheStatusSaysSo) {
  SearchObservation o = observe({{"rate", {{"start", 25}, {"max", 500}, {"precision", "10%"}}}});
  o.ceiling = 60;
  o.runs.push_back(finished(1, 25, 10));
  o.runs.push_back(finished(2, 50, 10));
  EXPECT_EQ(created_value(plan_search(o)), 60);
  o.runs.push_back(finished(3, 60, 10));
  const ExperimentPlan plan = plan_search(o);
  EXPECT_EQ(plan.status.reason, "CeilingReached");
  EXPECT_EQ(plan.status.search->limit_by, "--max-rate");
  EXPECT_NE(plan.status.message.find("60/s (--max-rate)"), std::string::npos)
      << plan.status.message;
}

TEST(SearchPlan, AStartAboveTheCeilingFailsBeforeAnyStep) {
  SearchObservation o = rate_search(25);
  o.ceiling = 10;
  const ExperimentPlan plan = plan_search(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Failed);
  EXPECT_EQ(plan.status.reason, "PolicyViolation");
  EXPECT_EQ(plan.status.message,
            "spec.search.rate.start: 25/s is above the operator's ceiling of 10/s (--max-rate)");
}

TEST(SearchPlan, WhenTheFirstStepFailsTheVerdictIsFail) {
  SearchObservation o = rate_search(25);
  o.runs.push_back(finished(1, 25, 400));
  const ExperimentPlan plan = plan_search(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Succeeded);
  EXPECT_EQ(plan.status.verdict, api::Verdict::Fail);
  EXPECT_EQ(plan.status.reason, "NoPassingStep");
  EXPECT_EQ(plan.status.message, "the first step, 25/s, failed: p99 < 100ms (observed 400ms)");
  EXPECT_EQ(plan.status.search->first_failing, 25);
  ASSERT_EQ(plan.events.size(), 1u);
  EXPECT_EQ(plan.events[0].type, "Warning");
  const GateReading gate =
      read_gate(json{{"metadata", {{"generation", 1}}}, {"status", plan.status}});
  EXPECT_EQ(gate.state, GateState::Failed);
}

TEST(SearchPlan, AStepThatFailedFailsTheSearch) {
  SearchObservation o = rate_search(25);
  o.runs.push_back(finished(1, 25, 10));
  RoundRun broken = finished(2, 50, 10);
  broken.status.phase = api::Phase::Failed;
  broken.status.verdict.reset();
  broken.status.reason = "WorkersNotReady";
  broken.status.message = "worker 0: ImagePullBackOff";
  o.runs.push_back(broken);
  const ExperimentPlan plan = plan_search(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Failed);
  EXPECT_EQ(plan.status.reason, "StepFailed");
  EXPECT_EQ(plan.status.message,
            "step 2 (LoadTest nginx-capacity-step-2) failed (WorkersNotReady): worker 0: "
            "ImagePullBackOff");
  const GateReading gate =
      read_gate(json{{"metadata", {{"generation", 1}}}, {"status", plan.status}});
  EXPECT_EQ(gate.state, GateState::Error);
}

TEST(SearchPlan, ARefusedStepFailsTheSearch) {
  SearchObservation o = rate_search(25);
  o.create_refused = "403 Forbidden: exceeded quota";
  const ExperimentPlan plan = plan_search(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Failed);
  EXPECT_EQ(plan.status.reason, "ObjectRejected");
}

TEST(SearchPlan, AFinalStatusOfTheCurrentGenerationIsKept) {
  SearchObservation o = rate_search(25);
  run_against_knee(o, 100, nullptr);
  const ExperimentPlan first = plan_search(o);
  ASSERT_TRUE(first.status.final());
  o.search.status = first.status;
  o.runs.clear();  // the steps deleted by hand: the status is history
  o.now += std::chrono::hours(1);
  const ExperimentPlan again = plan_search(o);
  EXPECT_EQ(again.status, first.status);
  EXPECT_FALSE(again.create);
  EXPECT_TRUE(again.events.empty());
}

TEST(SearchPlan, TheTargetsCpuIsOnEveryStepWhenMeasured) {
  SearchObservation o = rate_search(25);
  RoundRun step = finished(1, 25, 10);
  api::TargetUsageStatus target;
  target.window.start = *step.status.start_time;
  target.window.end = *step.status.start_time + std::chrono::seconds(5);
  target.usage.cpu_cores_mean = 0.25;
  step.status.target = target;
  o.runs.push_back(step);
  const ExperimentPlan plan = plan_search(o);
  const api::SearchStep& row = plan.status.search->steps[0];
  EXPECT_DOUBLE_EQ(*row.cpu_cores, 0.25);
  EXPECT_DOUBLE_EQ(row.metrics.at("cpuPerRequest"), 0.25 * 5 / 500);
}

// The search's states tests/gitops reads with kstatus, Flux's CEL and Argo
// CD's Lua (KUBELOAD_UPDATE_GOLDEN=1 rewrites them): running, capacity
// found, the limit reached, no passing step and a failed step; the last two
// may not read green.
std::map<std::string, json> search_fixtures() {
  std::map<std::string, json> out;
  const auto object = [](const SearchObservation& o, const api::LoadTestStatus& status) {
    return json{{"apiVersion", "kubeload.dev/v1alpha1"},
                {"kind", "LoadTest"},
                {"metadata",
                 {{"name", o.search.metadata.name},
                  {"namespace", o.search.metadata.namespace_},
                  {"uid", o.search.metadata.uid},
                  {"generation", o.search.metadata.generation}}},
                {"spec", o.search.spec},
                {"status", status}};
  };
  SearchObservation running = rate_search(25);
  running.runs.push_back(finished(1, 25, 10));
  out["search-running"] = object(running, plan_search(running).status);

  SearchObservation found = rate_search(25);
  const ExperimentPlan found_plan = run_against_knee(found, 100, nullptr);
  out["search-capacity-found"] = object(found, found_plan.status);

  SearchObservation ceiling =
      observe({{"rate", {{"start", 25}, {"max", 50}, {"precision", "10%"}}}});
  const ExperimentPlan ceiling_plan = run_against_knee(ceiling, 1000, nullptr);
  out["search-ceiling-reached"] = object(ceiling, ceiling_plan.status);

  SearchObservation none = rate_search(25);
  none.runs.push_back(finished(1, 25, 400));
  out["search-no-passing-step"] = object(none, plan_search(none).status);

  SearchObservation broken = rate_search(25);
  RoundRun failed = finished(1, 25, 10);
  failed.status.phase = api::Phase::Failed;
  failed.status.verdict.reset();
  failed.status.reason = "WorkersNotReady";
  failed.status.message = "worker 0: ImagePullBackOff";
  broken.runs.push_back(failed);
  out["search-step-failed"] = object(broken, plan_search(broken).status);
  return out;
}

TEST(SearchPlanGolden, GitopsFixturesAreWhatThePlanWrites) {
  kubeload::golden::expect_golden_files(
      std::filesystem::path(KUBELOAD_SOURCE_DIR) / "tests/gitops/testdata/operator",
      search_fixtures(), "and run the tests in tests/gitops");
}

}  // namespace
