// The running merge of worker results (issue 12): folding results one at a
// time as they arrive equals merging them all at once, exactly, and keeps
// per worker only what the status needs.

#include "operator/worker_results.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/result.hpp"

namespace kubeload::controller {
namespace {

constexpr int kStages = 10;
const std::vector<std::string> kRequestNames = {"home", "search", "cart", "checkout", "login"};

Result result_of(std::mt19937_64& random, uint64_t requests, double seconds) {
  std::lognormal_distribution<double> latency(std::log(4000.0), 0.7);
  Result r;
  r.duration_seconds = seconds;
  for (uint64_t i = 0; i < requests; ++i) {
    const auto micros = std::llround(latency(random));
    ++r.requests;
    r.bytes_received += 300;
    r.bytes_sent += 90;
    const int status = random() % 50 == 0 ? 503 : 200;
    ++r.status_codes[status];
    if (status == 503) ++r.errors.status;
    r.latency.record(micros);
    r.waiting.record(micros * 8 / 10);
    r.connect.record(random() % 20 == 0 ? 250 : 0);
  }
  return r;
}

// One worker's run as its /result serves it: 10 stages and 5 named
// requests, each with its histograms, round-tripped through the JSON.
CollectedResult worker_result(uint32_t worker, bool finished = true) {
  std::mt19937_64 random(1000 + worker);
  RunResult run;
  run.finished = finished;
  run.warmup_requests = 7;
  for (int stage = 0; stage < kStages; ++stage) {
    StageResult row;
    row.index = stage;
    row.duration_seconds_planned = 6;
    row.connections = 4;
    row.result = result_of(random, 40, 6.0 + worker % 3 * 0.01);
    run.result.merge(row.result);
    run.stages.push_back(std::move(row));
  }
  for (const std::string& name : kRequestNames) {
    run.request_results.push_back({name, result_of(random, 80, 60.0)});
  }
  // Scenario rows: every worker ends iterations of "buy", only some of
  // "browse", so a merge meets rows it has not seen yet.
  std::lognormal_distribution<double> iteration(std::log(900000.0), 0.5);
  for (const std::string& name : {std::string("buy"), std::string("browse")}) {
    if (name == "browse" && worker % 3 == 0) continue;
    ScenarioResult row{name, 0, 0, Histogram{}};
    for (int i = 0; i < 30; ++i) {
      ++row.iterations;
      if (random() % 10 == 0) ++row.iterations_failed;
      row.duration.record(std::llround(iteration(random)));
    }
    run.scenarios.push_back(std::move(row));
  }
  nlohmann::json document = to_json(run);
  document["startedAtMs"] = 1764442800000 + worker;
  return collected_result_from_json(document);
}

RunResult merged_all_at_once(uint32_t workers) {
  RunResult merged = worker_result(0).run;
  for (uint32_t i = 1; i < workers; ++i) merged.merge(worker_result(i).run);
  return merged;
}

void expect_same_run(const RunResult& actual, const RunResult& expected) {
  EXPECT_TRUE(actual.result == expected.result);
  ASSERT_EQ(actual.stages.size(), expected.stages.size());
  for (size_t i = 0; i < expected.stages.size(); ++i) {
    EXPECT_EQ(actual.stages[i].index, expected.stages[i].index);
    EXPECT_EQ(actual.stages[i].connections, expected.stages[i].connections);
    EXPECT_TRUE(actual.stages[i].result == expected.stages[i].result) << "stage " << i;
  }
  ASSERT_EQ(actual.request_results.size(), expected.request_results.size());
  for (size_t i = 0; i < expected.request_results.size(); ++i) {
    EXPECT_EQ(actual.request_results[i].name, expected.request_results[i].name);
    EXPECT_TRUE(actual.request_results[i].result == expected.request_results[i].result);
  }
  EXPECT_EQ(actual.scenarios, expected.scenarios);
  EXPECT_EQ(actual.warmup_requests, expected.warmup_requests);
  EXPECT_EQ(actual.finished, expected.finished);
  // The documents the status is written from, histograms included, byte for byte.
  EXPECT_EQ(to_json(actual).dump(), to_json(expected).dump());
}

TEST(WorkerResults, FoldingOneAtATimeEqualsMergingAllAtOnce) {
  constexpr uint32_t kWorkers = 40;
  const RunResult expected = merged_all_at_once(kWorkers);
  WorkerResults in_order(kWorkers);
  for (uint32_t i = 0; i < kWorkers; ++i) EXPECT_TRUE(in_order.fold(i, worker_result(i)));
  ASSERT_TRUE(in_order.merged().has_value());
  expect_same_run(*in_order.merged(), expected);
  EXPECT_EQ(in_order.merged()->result.requests, kWorkers * kStages * 40);
}

// Two workers' /result documents with scenario rows: the merge holds every
// iteration of both, to the histogram bucket.
TEST(WorkerResults, ScenarioRowsOfTwoWorkersMergeExactly) {
  const CollectedResult first = worker_result(1), second = worker_result(3);
  ASSERT_EQ(first.run.scenarios.size(), 2u);
  ASSERT_EQ(second.run.scenarios.size(), 1u);  // worker 3 ended no "browse" iteration
  WorkerResults folded(2);
  EXPECT_TRUE(folded.fold(0, first));
  EXPECT_TRUE(folded.fold(1, second));
  const RunResult& merged = *folded.merged();
  ASSERT_EQ(merged.scenarios.size(), 2u);
  const ScenarioResult& buy = merged.scenarios[0];
  EXPECT_EQ(buy.name, "buy");
  EXPECT_EQ(buy.iterations, 60u);
  EXPECT_EQ(buy.iterations_failed,
            first.run.scenarios[0].iterations_failed + second.run.scenarios[0].iterations_failed);
  Histogram both = first.run.scenarios[0].duration;
  both.add(second.run.scenarios[0].duration);
  EXPECT_EQ(buy.duration, both);
  EXPECT_EQ(merged.scenarios[1], first.run.scenarios[1]);  // "browse": worker 1's alone
}

TEST(WorkerResults, ArrivalOrderDoesNotChangeTheMerge) {
  // Concurrent polling delivers results in any order.
  constexpr uint32_t kWorkers = 25;
  std::vector<uint32_t> order(kWorkers);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  WorkerResults shuffled(kWorkers);
  for (uint32_t i : order) EXPECT_TRUE(shuffled.fold(i, worker_result(i)));
  expect_same_run(*shuffled.merged(), merged_all_at_once(kWorkers));
}

TEST(WorkerResults, KeepsPerWorkerOnlyWhatTheStatusNeeds) {
  WorkerResults results(3);
  EXPECT_FALSE(results.merged().has_value());
  EXPECT_TRUE(results.reports().empty());
  CollectedResult broken = worker_result(1, false);
  broken.error = "cannot resolve checkout.shop.svc";
  EXPECT_TRUE(results.fold(0, worker_result(0)));
  EXPECT_TRUE(results.fold(1, std::move(broken)));
  ASSERT_EQ(results.reports().size(), 2u);
  EXPECT_EQ(results.reports().at(0), (WorkerReport{true, 1764442800000, ""}));
  EXPECT_EQ(results.reports().at(1),
            (WorkerReport{false, 1764442800001, "cannot resolve checkout.shop.svc"}));
  EXPECT_FALSE(results.merged()->finished);  // one partial result makes the merge partial
}

TEST(WorkerResults, RefusesIndicesOutsideTheJobAndASecondResult) {
  WorkerResults results(2);
  EXPECT_TRUE(results.fold(1, worker_result(1)));
  const std::string before = to_json(*results.merged()).dump();
  EXPECT_FALSE(results.fold(2, worker_result(2)));  // not one of the Job's indices
  EXPECT_FALSE(results.fold(1, worker_result(5)));  // worker 1 is counted once
  EXPECT_EQ(to_json(*results.merged()).dump(), before);
  EXPECT_EQ(results.reports().size(), 1u);
  EXPECT_FALSE(WorkerResults().fold(0, worker_result(0)));  // no workers, nothing is ours
}

TEST(WorkerResults, ResultOfAnotherHistogramLayoutIsRefusedLeavingTheMergeAsItWas) {
  WorkerResults results(3);
  ASSERT_TRUE(results.fold(0, worker_result(0)));
  const std::string before = to_json(*results.merged()).dump();
  CollectedResult odd = worker_result(1);
  // Counters merge before the histograms do: a late refusal would leave them added.
  odd.run.request_results.back().result.latency = Histogram(1, Histogram::kDefaultHighest, 2);
  try {
    results.fold(1, std::move(odd));
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("request \"login\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(to_json(*results.merged()).dump(), before);
  EXPECT_EQ(results.reports().size(), 1u);
  EXPECT_TRUE(results.fold(1, worker_result(1)));  // the worker's next, good result counts
}

size_t histogram_bytes(const RunResult& run) {
  size_t bytes = 0;
  const auto add = [&](const Result& r) {
    bytes +=
        r.latency.allocated_bytes() + r.connect.allocated_bytes() + r.waiting.allocated_bytes();
  };
  add(run.result);
  for (const StageResult& stage : run.stages) add(stage.result);
  for (const NamedResult& named : run.request_results) add(named.result);
  return bytes;
}

TEST(WorkerResults, MemoryFollowsTheValuesNotTheWorkerCount) {
  WorkerResults results(300);
  for (uint32_t i = 0; i < 30; ++i) ASSERT_TRUE(results.fold(i, worker_result(i)));
  const size_t after_30 = histogram_bytes(*results.merged());
  for (uint32_t i = 30; i < 300; ++i) ASSERT_TRUE(results.fold(i, worker_result(i)));
  const size_t after_300 = histogram_bytes(*results.merged());
  // 48 histograms; dense they would take 48 * 224 KiB = 10.5 MiB whatever they hold.
  EXPECT_LT(after_300, 48 * Histogram().dense_bytes() / 2) << after_300;
  // Ten times the workers fill in the distribution's tails, nothing more.
  EXPECT_LT(after_300, 3 * after_30) << after_30 << " -> " << after_300;
  EXPECT_EQ(results.merged()->result.requests, 300u * kStages * 40);
}

}  // namespace
}  // namespace kubeload::controller
