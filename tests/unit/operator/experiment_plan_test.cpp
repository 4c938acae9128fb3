// An experiment's plan (operator/experiment_plan.hpp): the balanced order of
// its rounds, one round at a time across repeated passes, a failed or refused
// round, each variant's exact merge, the differences with their intervals,
// the comparison gates (Pass, Fail, Inconclusive never a pass) and the
// conditions a GitOps gate reads.

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
#include "operator/experiment_plan.hpp"

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;

constexpr const char* kUid = "e4e4e4e4-0000-4000-8000-000000000001";

Timestamp at(const std::string& rfc3339) {
  return *parse_time(rfc3339);
}

ExperimentObservation observe(uint64_t rounds, std::vector<std::string> comparisons) {
  ExperimentObservation o;
  api::LoadTest& e = o.experiment;
  e.metadata.name = "nginx-ab";
  e.metadata.namespace_ = "shop";
  e.metadata.uid = kUid;
  e.metadata.generation = 1;
  json comparison_list = comparisons;
  e.spec = json::parse(R"({
    "variants": [
      {"name": "a", "target": {"service": {"name": "web-a", "port": 80}}},
      {"name": "b", "target": {"service": {"name": "web-b", "port": 80}}}
    ],
    "load": {"connections": 4, "duration": "10s"}
  })");
  e.spec["experiment"] = {{"rounds", rounds}, {"comparisons", comparison_list}};
  const ParsedLoadTest parsed = parse_loadtest(json{
      {"apiVersion", "kubeload.dev/v1alpha1"},
      {"kind", "LoadTest"},
      {"metadata", {{"name", "nginx-ab"}}},
      {"spec", e.spec}}.dump());
  EXPECT_TRUE(parsed.ok()) << (parsed.errors.empty() ? "" : parsed.errors[0].to_string());
  o.spec = parsed.spec;
  o.now = at("2026-12-04T10:00:00Z");
  return o;
}

// A finished round whose every request took `latency_ms` (so its p50 and p99
// are that), `requests` of them in 10 s.
RoundRun finished(const std::string& variant, uint64_t round, int64_t latency_ms,
                  uint64_t requests = 1000, uint64_t errors = 0) {
  Result result;
  result.requests = requests;
  result.duration_seconds = 10;
  result.errors.status = errors;
  result.status_codes[200] = requests - errors;
  if (errors) result.status_codes[500] = errors;
  for (uint64_t i = 0; i < requests; ++i) result.latency.record(latency_ms * 1000);
  RoundRun run;
  run.name = "nginx-ab-" + variant + "-" + std::to_string(round);
  run.controller_uid = kUid;
  run.variant = variant;
  run.round = round;
  run.status.phase = api::Phase::Succeeded;
  run.status.start_time = at("2026-12-04T09:00:00Z") + std::chrono::minutes(round);
  run.status.completion_time = *run.status.start_time + std::chrono::seconds(10);
  json encoded;
  to_json(encoded, result);
  run.status.result = encoded;
  return run;
}

RoundRun running(const std::string& variant, uint64_t round) {
  RoundRun run;
  run.name = "nginx-ab-" + variant + "-" + std::to_string(round);
  run.controller_uid = kUid;
  run.variant = variant;
  run.round = round;
  run.status.phase = api::Phase::Running;
  return run;
}

// Rounds 1..n with a's and b's latencies per round (the order of the runs
// in the observation does not matter).
void add_rounds(ExperimentObservation& o, const std::vector<std::pair<int64_t, int64_t>>& ab) {
  for (std::size_t i = 0; i < ab.size(); ++i) {
    o.runs.push_back(finished("a", i + 1, ab[i].first));
    o.runs.push_back(finished("b", i + 1, ab[i].second));
  }
}

const api::Condition* find(const api::LoadTestStatus& status, api::ConditionType type) {
  return api::find_condition(status.conditions, type);
}

TEST(ExperimentPlan, RoundsAlternateTheVariantsOrder) {
  using Step = std::pair<uint64_t, std::size_t>;
  EXPECT_EQ(round_order(2, 3), (std::vector<Step>{{1, 0}, {1, 1}, {2, 1}, {2, 0}, {3, 0}, {3, 1}}));
  EXPECT_EQ(round_order(3, 2), (std::vector<Step>{{1, 0}, {1, 1}, {1, 2}, {2, 2}, {2, 1}, {2, 0}}));
}

TEST(ExperimentPlan, TheFirstPassCreatesTheFirstVariantsFirstRound) {
  const ExperimentPlan plan = plan_experiment(observe(4, {}));
  ASSERT_TRUE(plan.create);
  EXPECT_EQ((*plan.create)["metadata"]["name"], "nginx-ab-a-1");
  EXPECT_EQ(plan.status.phase, api::Phase::Running);
  EXPECT_TRUE(plan.status.start_time);
  EXPECT_TRUE(plan.requeue_after);
}

TEST(ExperimentPlan, OneRoundAtATimeAndARepeatedPassCreatesNothingMore) {
  ExperimentObservation o = observe(4, {});
  o.runs.push_back(running("a", 1));
  const ExperimentPlan waiting = plan_experiment(o);
  EXPECT_FALSE(waiting.create);
  EXPECT_NE(waiting.status.message.find("variant a"), std::string::npos) << waiting.status.message;

  o.runs.back() = finished("a", 1, 5);
  const ExperimentPlan next = plan_experiment(o);
  ASSERT_TRUE(next.create);
  EXPECT_EQ((*next.create)["metadata"]["name"], "nginx-ab-b-1");

  // Round 2 runs b first.
  o.runs.push_back(finished("b", 1, 5));
  const ExperimentPlan second = plan_experiment(o);
  ASSERT_TRUE(second.create);
  EXPECT_EQ((*second.create)["metadata"]["name"], "nginx-ab-b-2");
  EXPECT_EQ(second.status.experiment->completed_rounds, 1u);
}

TEST(ExperimentPlan, ARoundOfAnEarlierIncarnationIsNotThisOnes) {
  ExperimentObservation o = observe(2, {});
  RoundRun old = finished("a", 1, 5);
  old.controller_uid = "another-uid";
  o.runs.push_back(old);
  const ExperimentPlan plan = plan_experiment(o);
  ASSERT_TRUE(plan.create);
  EXPECT_EQ((*plan.create)["metadata"]["name"], "nginx-ab-a-1");
}

TEST(ExperimentPlan, AFailedRoundFailsTheExperimentNamingIt) {
  ExperimentObservation o = observe(4, {});
  o.runs.push_back(finished("a", 1, 5));
  RoundRun failed = running("b", 1);
  failed.status.phase = api::Phase::Failed;
  failed.status.reason = "WorkersNotReady";
  failed.status.message = "worker 0: ImagePullBackOff";
  o.runs.push_back(failed);
  const ExperimentPlan plan = plan_experiment(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Failed);
  EXPECT_EQ(plan.status.reason, "RoundFailed");
  EXPECT_NE(plan.status.message.find("nginx-ab-b-1"), std::string::npos);
  EXPECT_NE(plan.status.message.find("ImagePullBackOff"), std::string::npos);
  ASSERT_EQ(plan.events.size(), 1u);
  EXPECT_EQ(plan.events[0].type, "Warning");
}

TEST(ExperimentPlan, VariantsThatLoadTheSameTargetAreRefused) {
  ExperimentObservation o = observe(4, {});
  RoundRun a = finished("a", 1, 5);
  a.status.target = api::TargetUsageStatus{};
  a.status.target->addresses = {"10.96.0.10", "10.244.1.7", "web-a.shop.svc"};
  RoundRun b = running("b", 1);
  b.status.target = api::TargetUsageStatus{};
  // Another Service (another cluster IP and name) in front of the same pod.
  b.status.target->addresses = {"10.96.0.11", "10.244.1.7", "web-b.shop.svc"};
  o.runs = {a, b};
  const ExperimentPlan plan = plan_experiment(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Failed);
  EXPECT_EQ(plan.status.reason, "VariantTargetsOverlap");
  EXPECT_NE(plan.status.message.find("10.244.1.7"), std::string::npos) << plan.status.message;

  o.runs[1].status.target->addresses = {"10.96.0.11", "10.244.2.9", "web-b.shop.svc"};
  EXPECT_NE(plan_experiment(o).status.reason, "VariantTargetsOverlap");
}

// Prometheus's figures for a round come ~15 s after it ends (TargetMetrics
// Unknown meanwhile): the experiment concludes once every round's target
// usage is in, so the variants' CPU and cpuPerRequest are not left empty.
TEST(ExperimentPlan, ItConcludesOnlyOnceEveryRoundsTargetUsageIsIn) {
  ExperimentObservation o = observe(2, {"b.p99 <= a.p99"});
  add_rounds(o, {{10, 10}, {10, 10}});
  api::Condition waiting;
  waiting.type = "TargetMetrics";
  waiting.status = api::ConditionStatus::Unknown;
  waiting.reason = "WaitingForScrapes";
  o.runs.back().status.conditions.push_back(waiting);
  ExperimentPlan plan = plan_experiment(o);
  EXPECT_EQ(plan.status.phase, api::Phase::Running);
  EXPECT_FALSE(plan.create);
  EXPECT_TRUE(plan.requeue_after);
  EXPECT_EQ(plan.status.message,
            "every round ran; waiting for the target's resource use of 1 round (Prometheus)");

  o.runs.back().status.conditions.back().status = api::ConditionStatus::False;
  o.runs.back().status.conditions.back().reason = "WindowTooShort";
  plan = plan_experiment(o);
  EXPECT_EQ(plan.status.phase, api::Phase::Succeeded);
}

// A canary routed by a header: both variants go through the same ingress
// pods on purpose, and a router sends each to its own backend.
TEST(ExperimentPlan, VariantsThatDifferInTheirHeadersMayShareAnAddress) {
  ExperimentObservation o = observe(4, {});
  o.spec.variants[1].headers = {{"X-Canary", "always"}};
  RoundRun a = finished("a", 1, 5);
  a.status.target = api::TargetUsageStatus{};
  a.status.target->addresses = {"10.96.0.20", "10.244.1.3", "ingress.shop.svc"};
  RoundRun b = running("b", 1);
  b.status.target = a.status.target;
  o.runs = {a, b};
  EXPECT_NE(plan_experiment(o).status.reason, "VariantTargetsOverlap");

  o.spec.variants[0].headers = o.spec.variants[1].headers;  // the same request again
  EXPECT_EQ(plan_experiment(o).status.reason, "VariantTargetsOverlap");
}

TEST(ExperimentPlan, ARefusedRoundFailsTheExperiment) {
  ExperimentObservation o = observe(2, {});
  o.create_refused = "403 Forbidden: exceeded quota";
  const ExperimentPlan plan = plan_experiment(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Failed);
  EXPECT_EQ(plan.status.reason, "ObjectRejected");
  EXPECT_NE(plan.status.message.find("exceeded quota"), std::string::npos);
}

TEST(ExperimentPlan, ASlowerVariantFailsTheGateWithAnIntervalThatExcludesZero) {
  ExperimentObservation o = observe(6, {"b.p99 <= a.p99 * 1.05"});
  add_rounds(o, {{10, 20}, {11, 21}, {10, 22}, {12, 20}, {10, 21}, {11, 20}});
  const ExperimentPlan plan = plan_experiment(o);
  EXPECT_FALSE(plan.create);
  EXPECT_EQ(plan.status.phase, api::Phase::Succeeded);
  EXPECT_EQ(plan.status.verdict, api::Verdict::Fail);
  EXPECT_EQ(plan.status.reason, "ComparisonFailed");
  const api::ExperimentStatus& e = *plan.status.experiment;
  EXPECT_EQ(e.completed_rounds, 6u);
  ASSERT_EQ(e.comparisons.size(), 1u);
  EXPECT_EQ(e.comparisons[0].outcome, "Fail");
  EXPECT_GT(*e.comparisons[0].low, 0);
  // b - a on p99, per round: 10, 10, 12, 8, 11, 9 ms.
  const auto p99 = std::find_if(e.differences.begin(), e.differences.end(),
                                [](const api::MetricDifference& d) { return d.metric == "p99"; });
  ASSERT_NE(p99, e.differences.end());
  EXPECT_EQ(p99->variant, "b");
  EXPECT_EQ(p99->reference, "a");
  EXPECT_NEAR(p99->mean, 10.0, 0.1);
  EXPECT_GT(p99->low, 0);
  EXPECT_NEAR(*p99->relative_percent, 10.0 / (64.0 / 6) * 100, 1.0);
  // Stalled: kstatus, Flux and Argo CD read a failed gate.
  EXPECT_EQ(find(plan.status, api::ConditionType::Stalled)->status, api::ConditionStatus::True);
  EXPECT_EQ(find(plan.status, api::ConditionType::Ready)->status, api::ConditionStatus::False);
}

TEST(ExperimentPlan, EqualVariantsPassOnlyWhenTheWholeIntervalHolds) {
  ExperimentObservation o = observe(6, {"b.p99 <= a.p99 * 1.5"});
  add_rounds(o, {{10, 10}, {11, 11}, {10, 10}, {12, 12}, {10, 10}, {11, 11}});
  const ExperimentPlan plan = plan_experiment(o);
  EXPECT_EQ(plan.status.verdict, api::Verdict::Pass);
  EXPECT_EQ(plan.status.reason, "ComparisonsPassed");
  EXPECT_EQ(find(plan.status, api::ConditionType::Ready)->status, api::ConditionStatus::True);
  EXPECT_EQ(find(plan.status, api::ConditionType::Completed)->reason, "RoundsCompleted");
}

TEST(ExperimentPlan, AnIntervalAcrossTheLimitIsInconclusiveNeverAPass) {
  ExperimentObservation o = observe(4, {"b.p99 <= a.p99"});
  add_rounds(o, {{10, 12}, {12, 10}, {10, 11}, {11, 10}});
  const ExperimentPlan plan = plan_experiment(o);
  EXPECT_EQ(plan.status.phase, api::Phase::Succeeded);
  EXPECT_EQ(plan.status.verdict, api::Verdict::Fail);
  EXPECT_EQ(plan.status.reason, "Inconclusive");
  EXPECT_EQ(plan.status.experiment->comparisons[0].outcome, "Inconclusive");
  EXPECT_EQ(find(plan.status, api::ConditionType::Ready)->status, api::ConditionStatus::False);
  const GateReading gate =
      read_gate(json{{"metadata", {{"generation", 1}}}, {"status", plan.status}});
  EXPECT_NE(gate.state, GateState::Passed);
}

TEST(ExperimentPlan, EachVariantsRoundsMergeExactlyAndThresholdsJudgeTheMerge) {
  ExperimentObservation o = observe(2, {});
  o.experiment.spec["thresholds"] = {"errorRate < 1%"};
  o.spec.thresholds.push_back(std::get<Threshold>(parse_threshold("errorRate < 1%")));
  o.runs.push_back(finished("a", 1, 5, 1000, 0));
  o.runs.push_back(finished("b", 1, 5, 1000, 30));
  o.runs.push_back(finished("b", 2, 5, 1000, 0));
  o.runs.push_back(finished("a", 2, 5, 1000, 0));
  const ExperimentPlan plan = plan_experiment(o);
  const api::ExperimentStatus& e = *plan.status.experiment;
  ASSERT_EQ(e.variants.size(), 2u);
  EXPECT_EQ(e.variants[1].name, "b");
  EXPECT_EQ(e.variants[1].rounds, 2u);
  EXPECT_EQ((*e.variants[1].result)["requests"], 2000);
  EXPECT_DOUBLE_EQ(e.variants[1].metrics.at("errorRate"), 30.0 / 2000);
  // b's merge is 1.5% errors (one round of 3% and one of 0%), over the threshold.
  ASSERT_EQ(plan.status.thresholds.size(), 2u);
  EXPECT_TRUE(plan.status.thresholds[0].passed);
  EXPECT_FALSE(plan.status.thresholds[1].passed);
  EXPECT_EQ(plan.status.thresholds[1].expression, "b: errorRate < 1%");
  EXPECT_EQ(plan.status.verdict, api::Verdict::Fail);
  EXPECT_EQ(plan.status.reason, "ThresholdsFailed");
}

TEST(ExperimentPlan, TheTargetsCpuPerRequestIsComparedWhenMeasured) {
  ExperimentObservation o = observe(2, {"b.cpuPerRequest <= a.cpuPerRequest"});
  add_rounds(o, {{10, 10}, {10, 10}});
  for (RoundRun& run : o.runs) {
    api::TargetUsageStatus target;
    target.window.start = *run.status.start_time;
    target.window.end = *run.status.start_time + std::chrono::seconds(10);
    target.usage.cpu_cores_mean = run.variant == "a" ? 0.5 : 1.0;  // b costs twice the CPU
    target.usage.memory_bytes_max = run.variant == "a" ? 100 : 200;
    run.status.target = target;
  }
  const ExperimentPlan plan = plan_experiment(o);
  const api::ExperimentStatus& e = *plan.status.experiment;
  EXPECT_DOUBLE_EQ(e.runs[0].metrics.at("cpuPerRequest"), 0.5 * 10 / 1000);
  EXPECT_DOUBLE_EQ(e.variants[1].metrics.at("cpuPerRequest"), 1.0 * 10 / 1000);
  EXPECT_DOUBLE_EQ(*e.variants[1].usage.cpu_cores_mean, 1.0);
  EXPECT_EQ(*e.variants[1].usage.memory_bytes_max, 200);
  EXPECT_EQ(e.comparisons[0].outcome, "Fail");
}

TEST(ExperimentPlan, AFinalStatusOfTheCurrentGenerationIsKept) {
  ExperimentObservation o = observe(2, {});
  add_rounds(o, {{10, 10}, {10, 10}});
  const ExperimentPlan first = plan_experiment(o);
  o.experiment.status = first.status;
  o.runs.clear();  // the rounds deleted by hand: the status is history
  o.now += std::chrono::hours(1);
  const ExperimentPlan again = plan_experiment(o);
  EXPECT_EQ(again.status, first.status);
  EXPECT_FALSE(again.create);
  EXPECT_TRUE(again.events.empty());
}

// The experiment's states tests/gitops reads with kstatus, Flux's CEL and
// Argo CD's Lua (KUBELOAD_UPDATE_GOLDEN=1 rewrites them): running, passed,
// a failed comparison, an inconclusive one and a failed round; none of the
// last three may read green.
std::map<std::string, json> experiment_fixtures() {
  std::map<std::string, json> out;
  const auto object = [](const ExperimentObservation& o, const api::LoadTestStatus& status) {
    json loadtest = {{"apiVersion", "kubeload.dev/v1alpha1"},
                     {"kind", "LoadTest"},
                     {"metadata",
                      {{"name", o.experiment.metadata.name},
                       {"namespace", o.experiment.metadata.namespace_},
                       {"uid", o.experiment.metadata.uid},
                       {"generation", o.experiment.metadata.generation}}},
                     {"spec", o.experiment.spec},
                     {"status", status}};
    return loadtest;
  };
  ExperimentObservation running_one = observe(4, {"b.p99 <= a.p99 * 1.05"});
  running_one.runs.push_back(finished("a", 1, 10));
  running_one.runs.push_back(running("b", 1));
  out["experiment-running"] = object(running_one, plan_experiment(running_one).status);

  ExperimentObservation passed = observe(4, {"b.p99 <= a.p99 * 1.5"});
  add_rounds(passed, {{10, 10}, {11, 11}, {10, 10}, {12, 12}});
  out["experiment-passed"] = object(passed, plan_experiment(passed).status);

  ExperimentObservation slower = observe(4, {"b.p99 <= a.p99 * 1.05"});
  add_rounds(slower, {{10, 20}, {11, 21}, {10, 22}, {12, 20}});
  out["experiment-comparison-failed"] = object(slower, plan_experiment(slower).status);

  ExperimentObservation undecided = observe(4, {"b.p99 <= a.p99"});
  add_rounds(undecided, {{10, 12}, {12, 10}, {10, 11}, {11, 10}});
  out["experiment-inconclusive"] = object(undecided, plan_experiment(undecided).status);

  ExperimentObservation broken = observe(4, {"b.p99 <= a.p99"});
  broken.runs.push_back(finished("a", 1, 10));
  RoundRun failed = running("b", 1);
  failed.status.phase = api::Phase::Failed;
  failed.status.reason = "WorkersNotReady";
  failed.status.message = "worker 0: ImagePullBackOff";
  broken.runs.push_back(failed);
  out["experiment-round-failed"] = object(broken, plan_experiment(broken).status);
  return out;
}

TEST(ExperimentPlanGolden, GitopsFixturesAreWhatThePlanWrites) {
  kubeload::golden::expect_golden_files(
      std::filesystem::path(KUBELOAD_SOURCE_DIR) / "tests/gitops/testdata/operator",
      experiment_fixtures(), "and run the tests in tests/gitops");
}

}  // namespace
