// Whether a run's generator was its own bottleneck (issue 30): what
// status.workers.cpu sums up of the workers' reports, the GeneratorSaturated
// condition for each case (one worker over, several, none, a worker without a
// limit, none measured), and that plan() decides it once, when the run ends,
// beside the verdict and never instead of it.

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "operator/generator_saturation.hpp"

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;
using namespace std::chrono_literals;

const Timestamp kStart = Timestamp{} + std::chrono::hours(24 * 365 * 56);
const Timestamp kEnd = kStart + 30s;

// A worker's report whose run used `seconds` of CPU in 30 s with `limit`
// cores (or, without one, 2 CPUs).
WorkerReport used(double seconds, std::optional<double> limit = 0.1) {
  return WorkerReport{true, 1764442800000, "",
                      GeneratorCpu::of(seconds, 30, limit, limit.value_or(2))};
}

WorkerReport unmeasured() {
  return WorkerReport{true, 1764442800000, ""};
}

using Reports = std::map<uint32_t, WorkerReport>;

TEST(GeneratorSaturation, TheConditionForEachCase) {
  const struct {
    const char* what;
    Reports reports;
    uint32_t workers;
    std::string status;
    std::string reason;
    std::string message;
  } cases[] = {
      {"one worker at its 100m limit",
       {{0, used(2.91)}},
       1,
       "True",
       "GeneratorSaturated",
       "worker 0 used 97% of its 100m CPU limit: the numbers describe the generator, not the "
       "target; add workers (spec.workers) or raise the workers' CPU limit "
       "(spec.workerTemplate.resources.limits.cpu)"},
      {"two of three over, the busiest named first",
       {{0, used(2.75)}, {1, used(1.5)}, {2, used(2.97)}},
       3,
       "True",
       "GeneratorSaturated",
       "worker 2 used 99% of its 100m CPU limit, worker 0 91.6%: the numbers describe the "
       "generator, not the target; add workers (spec.workers) or raise the workers' CPU limit "
       "(spec.workerTemplate.resources.limits.cpu)"},
      {"seven over: five named, then how many more",
       {{0, used(2.8)},
        {1, used(2.81)},
        {2, used(2.82)},
        {3, used(2.83)},
        {4, used(2.84)},
        {5, used(2.85)},
        {6, used(2.86)}},
       7,
       "True",
       "GeneratorSaturated",
       "worker 6 used 95.3% of its 100m CPU limit, worker 5 95%, worker 4 94.6%, worker 3 94.3%, "
       "worker 2 94% and 2 more: the numbers describe the generator, not the target; add workers "
       "(spec.workers) or raise the workers' CPU limit (spec.workerTemplate.resources.limits.cpu)"},
      {"no limit: its node's CPUs, so more workers on other nodes",
       {{0, used(57, std::nullopt)}},
       1,
       "True",
       "GeneratorSaturated",
       "worker 0 used 95% of the 2 CPUs it may use: the numbers describe the generator, not the "
       "target; add workers (spec.workers) on other nodes"},
      {"under the line",
       {{0, used(1.2)}, {1, used(2.6)}},
       2,
       "False",
       "GeneratorNotSaturated",
       "the busiest worker, worker 1, used 86.6% of its 100m CPU limit"},
      {"some did not say",
       {{0, used(0.3, 2.0)}, {1, unmeasured()}},
       2,
       "False",
       "GeneratorNotSaturated",
       "the busiest worker, worker 0, used 0.5% of its 2 CPU limit (1 of 2 workers reported "
       "their CPU use)"},
      {"a saturated one among unmeasured",
       {{0, unmeasured()}, {1, used(2.91)}},
       2,
       "True",
       "GeneratorSaturated",
       "worker 1 used 97% of its 100m CPU limit (1 of 2 workers reported their CPU use): the "
       "numbers describe the generator, not the target; add workers (spec.workers) or raise the "
       "workers' CPU limit (spec.workerTemplate.resources.limits.cpu)"},
      {"none measured",
       {{0, unmeasured()}},
       1,
       "Unknown",
       "GeneratorCpuNotMeasured",
       "no worker reported its CPU use (a worker image before it was measured, or no worker "
       "finished its run)"},
      {"no reports",
       {},
       3,
       "Unknown",
       "GeneratorCpuNotMeasured",
       "no worker reported its CPU use (a worker image before it was measured, or no worker "
       "finished its run)"},
      {"an index outside the Job is not ours",
       {{5, used(3)}, {0, used(0.3)}},
       2,
       "False",
       "GeneratorNotSaturated",
       "the busiest worker, worker 0, used 10% of its 100m CPU limit (1 of 2 workers reported "
       "their CPU use)"},
  };
  for (const auto& c : cases) {
    const ConditionValue value = decide_generator_saturation(c.reports, c.workers);
    EXPECT_EQ(value.type, "GeneratorSaturated") << c.what;
    EXPECT_EQ(value.status, c.status) << c.what;
    EXPECT_EQ(value.reason, c.reason) << c.what;
    EXPECT_EQ(value.message, c.message) << c.what;
  }
}

TEST(GeneratorSaturation, TheWorkersCpuSumsUpTheMeasuredOnes) {
  EXPECT_EQ(workers_cpu({}, 2), std::nullopt);
  EXPECT_EQ(workers_cpu({{0, unmeasured()}}, 1), std::nullopt);
  const std::optional<api::WorkersCpuStatus> cpu =
      workers_cpu({{0, used(1.5)}, {1, unmeasured()}, {2, used(2.97)}, {9, used(3)}}, 3);
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->measured, 2u);
  EXPECT_DOUBLE_EQ(cpu->seconds, 4.47);
  EXPECT_EQ(cpu->busiest_worker, 2u);
  EXPECT_DOUBLE_EQ(cpu->max_utilization, 0.99);
  EXPECT_EQ(cpu->limit_cores, 0.1);
  // Equals: the lower index.
  EXPECT_EQ(workers_cpu({{3, used(1)}, {1, used(1)}}, 4)->busiest_worker, 1u);
  // Without a limit, none is said.
  EXPECT_EQ(workers_cpu({{0, used(1, std::nullopt)}}, 1)->limit_cores, std::nullopt);
}

api::LoadTestStatus status_at(std::optional<api::Phase> phase) {
  api::LoadTestStatus status;
  status.observed_generation = 1;
  status.phase = phase;
  status.verdict = api::Verdict::Pass;
  status.start_time = kStart;
  if (phase && api::is_final(*phase)) status.completion_time = kEnd;
  return status;
}

const api::Condition* saturated_condition(const api::LoadTestStatus& status) {
  return api::find_condition(status.conditions, api::ConditionType::GeneratorSaturated);
}

TEST(GeneratorSaturation, DecidedWhenTheRunEndsAndKeptThen) {
  const Reports reports = {{0, used(2.91)}};
  const api::LoadTestStatus running = status_at(api::Phase::Running);

  // Running: nothing said yet.
  api::LoadTestStatus status = status_at(api::Phase::Running);
  plan_generator_saturation(running, status, reports, 1, kEnd - 1s);
  EXPECT_EQ(saturated_condition(status), nullptr);

  // The pass it ends in: decided, beside a verdict that stays Pass.
  status = status_at(api::Phase::Succeeded);
  plan_generator_saturation(running, status, reports, 1, kEnd);
  ASSERT_NE(saturated_condition(status), nullptr);
  EXPECT_EQ(saturated_condition(status)->status, api::ConditionStatus::True);
  EXPECT_EQ(saturated_condition(status)->reason, "GeneratorSaturated");
  EXPECT_EQ(saturated_condition(status)->observed_generation, 1);
  EXPECT_EQ(saturated_condition(status)->last_transition_time, api::whole_seconds(kEnd));
  EXPECT_EQ(status.verdict, api::Verdict::Pass);
  EXPECT_EQ(status.phase, api::Phase::Succeeded);

  // Kept after, when the reports are gone with the results ConfigMap, at the
  // generation of a later edit.
  api::LoadTestStatus later = status_at(api::Phase::Succeeded);
  later.observed_generation = 2;
  plan_generator_saturation(status, later, {}, 1, kEnd + 1h);
  ASSERT_NE(saturated_condition(later), nullptr);
  EXPECT_EQ(saturated_condition(later)->message, saturated_condition(status)->message);
  EXPECT_EQ(saturated_condition(later)->observed_generation, 2);
  EXPECT_EQ(saturated_condition(later)->last_transition_time, api::whole_seconds(kEnd));
}

TEST(GeneratorSaturation, NothingForARunThatNeverStartedOrEndedUnderAnOlderOperator) {
  // Failed before the start (an invalid spec, a refused Job).
  api::LoadTestStatus never = status_at(api::Phase::Failed);
  never.start_time.reset();
  plan_generator_saturation(status_at(api::Phase::Pending), never, {}, 1, kEnd);
  EXPECT_EQ(saturated_condition(never), nullptr);

  // Final already, without the condition: nothing left to judge it by.
  const api::LoadTestStatus old = status_at(api::Phase::Succeeded);
  api::LoadTestStatus kept = old;
  plan_generator_saturation(old, kept, {{0, used(2.91)}}, 1, kEnd + 1h);
  EXPECT_EQ(saturated_condition(kept), nullptr);
}

TEST(GeneratorSaturation, AFailedRunThatStartedSaysWhatItsWorkersUsed) {
  api::LoadTestStatus failed = status_at(api::Phase::Failed);
  failed.verdict = api::Verdict::None;
  plan_generator_saturation(status_at(api::Phase::Running), failed, {{0, used(0.6)}}, 2, kEnd);
  ASSERT_NE(saturated_condition(failed), nullptr);
  EXPECT_EQ(saturated_condition(failed)->status, api::ConditionStatus::False);
}

}  // namespace
