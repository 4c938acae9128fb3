// A test's history as baselines and retention read it: which records a
// baseline compares with, which ones baselines pin, and which retention
// deletes. Table rows of the pure decisions (operator/test_history.hpp).

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/loadtest_result.hpp"
#include "operator/run_policy.hpp"
#include "operator/test_history.hpp"

namespace {

using namespace std::chrono_literals;
using kubeload::BaselineSpec;
using kubeload::HistorySpec;
using kubeload::api::LoadTest;
using kubeload::api::LoadTestResult;
using kubeload::api::Verdict;
using kubeload::controller::baseline_records;
using kubeload::controller::history_limits;
using kubeload::controller::HistoryLimits;
using kubeload::controller::HistoryPolicy;
using kubeload::controller::pinned_records;
using kubeload::controller::records_to_prune;
using nlohmann::json;
using Time = std::chrono::system_clock::time_point;

const Time kNow = Time{} + std::chrono::hours(24 * 365 * 56);

// A record of test "checkout" of LoadTest `loadtest`, completed `ago`.
LoadTestResult record(const std::string& name, std::chrono::seconds ago, Verdict verdict,
                      const std::string& loadtest = "checkout", const std::string& uid = "") {
  LoadTestResult out;
  out.metadata.name = name;
  out.test = "checkout";
  out.load_test.name = loadtest;
  out.load_test.uid = uid.empty() ? "uid-" + name : uid;
  out.run.completion_time = kNow - ago;
  out.run.verdict = verdict;
  out.run.result = json{{"requests", 100}};
  return out;
}

std::vector<std::string> names(const std::vector<LoadTestResult>& records,
                               const std::vector<std::size_t>& chosen) {
  std::vector<std::string> out;
  for (const std::size_t index : chosen) out.push_back(records[index].metadata.name);
  return out;
}

// In list order that is not time order, as the API server may return them.
std::vector<LoadTestResult> history() {
  return {record("r2", 300s, Verdict::Pass), record("r5", 60s, Verdict::Fail),
          record("r1", 400s, Verdict::Pass), record("r4", 120s, Verdict::Pass),
          record("r3", 200s, Verdict::Fail), record("r0", 500s, Verdict::Pass, "checkout-old")};
}

TEST(TestHistory, ABaselineChoosesItsRecordsNewestFirst) {
  struct Row {
    const char* name;
    BaselineSpec baseline;
    std::string self_uid;
    std::vector<std::string> chosen;
  };
  BaselineSpec last_passed;
  last_passed.last_passed = true;
  BaselineSpec window = last_passed;
  window.window = 3;
  BaselineSpec large_window = last_passed;
  large_window.window = 20;
  BaselineSpec pinned;
  pinned.result_name = "r1";
  BaselineSpec missing;
  missing.result_name = "r9";
  BaselineSpec by_name;
  by_name.load_test_name = "checkout-old";
  const std::vector<Row> rows = {
      {"lastPassed: the newest passed record, never a failed one", last_passed, "", {"r4"}},
      {"never the run's own record", last_passed, "uid-r4", {"r2"}},
      {"a window: the newest N passed", window, "", {"r4", "r2", "r1"}},
      {"a window larger than the history: all there are",
       large_window,
       "",
       {"r4", "r2", "r1", "r0"}},
      {"resultName: that one record, whatever its verdict", pinned, "", {"r1"}},
      {"resultName of a record that is gone: none", missing, "", {}},
      {"loadTestName: the newest record of that LoadTest name", by_name, "", {"r0"}},
  };
  const std::vector<LoadTestResult> records = history();
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(names(records, baseline_records(records, row.baseline, row.self_uid)), row.chosen);
  }
  // A passed record without a result (a run that ended in a failure of its
  // own making) is no reference.
  std::vector<LoadTestResult> without = records;
  for (LoadTestResult& each : without) {
    if (each.metadata.name == "r4") each.run.result.reset();
  }
  EXPECT_EQ(names(without, baseline_records(without, last_passed, "")),
            std::vector<std::string>{"r2"});
}

TEST(TestHistory, EveryReaderAgreesOnTheNewestWhateverTheListOrder) {
  std::vector<LoadTestResult> records = {record("a", 100s, Verdict::Pass),
                                         record("b", 100s, Verdict::Pass)};
  BaselineSpec last_passed;
  last_passed.last_passed = true;
  EXPECT_EQ(names(records, baseline_records(records, last_passed, "")),
            std::vector<std::string>{"b"});
  std::swap(records[0], records[1]);
  EXPECT_EQ(names(records, baseline_records(records, last_passed, "")),
            std::vector<std::string>{"b"});
}

LoadTest loadtest(const json& spec, const std::string& test = "checkout") {
  LoadTest out;
  out.metadata.name = "run";
  if (!test.empty()) out.metadata.labels["kubeload.dev/test"] = test;
  out.spec = spec;
  return out;
}

TEST(TestHistory, BaselinesPinWhatTheyPointAt) {
  const std::vector<LoadTestResult> records = history();
  // Without LoadTests: the record the next lastPassed run would take.
  EXPECT_EQ(pinned_records({}, records, "checkout"), (std::set<std::string>{"r4"}));
  // A LoadTest of the test with a window of 3: the newest 3 passed.
  EXPECT_EQ(pinned_records({loadtest(json{{"baseline", {{"lastPassed", true}, {"window", 3}}}})},
                           records, "checkout"),
            (std::set<std::string>{"r4", "r2", "r1"}));
  // A window of another test's LoadTest does not widen this test's.
  EXPECT_EQ(
      pinned_records({loadtest(json{{"baseline", {{"lastPassed", true}, {"window", 3}}}}, "other")},
                     records, "checkout"),
      (std::set<std::string>{"r4"}));
  // A spec naming a record, and a status that compared with records.
  LoadTest compared = loadtest(json{{"baseline", {{"resultName", "r0"}}}});
  compared.status.baseline = kubeload::api::BaselineOutcome{};
  compared.status.baseline->result_name = "r3";
  compared.status.baseline->results = {"r3", "r2"};
  EXPECT_EQ(pinned_records({compared}, records, "checkout"),
            (std::set<std::string>{"r0", "r2", "r3", "r4"}));
  // A run without a test label pins no lastPassed record.
  EXPECT_EQ(pinned_records({}, records, ""), (std::set<std::string>{}));
}

TEST(TestHistory, RetentionKeepsTheNewestNTheYoungAndThePinned) {
  struct Row {
    const char* name;
    HistoryLimits limits;
    std::set<std::string> pinned;
    std::vector<std::string> pruned;  // newest first
  };
  const std::vector<Row> rows = {
      {"keep 50: nothing goes", {50, std::nullopt}, {}, {}},
      {"keep 2: all but the newest two", {2, std::nullopt}, {}, {"r3", "r2", "r1", "r0"}},
      {"keep 2 and a baseline's record", {2, std::nullopt}, {"r1"}, {"r3", "r2", "r0"}},
      {"keep 1 and everything newer than 250s", {1, 250s}, {}, {"r2", "r1", "r0"}},
      {"keep exactly N: 6 records, keep 6", {6, std::nullopt}, {}, {}},
  };
  const std::vector<LoadTestResult> records = history();
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(records_to_prune(records, row.limits, row.pinned, kNow), row.pruned);
  }
}

TEST(TestHistory, TheSpecAsksWithinThePolicy) {
  HistoryPolicy policy;
  policy.keep = 50;
  policy.max_keep = 100;
  policy.max_age = 720h;
  policy.max_age_limit = 2160h;
  EXPECT_EQ(history_limits(HistorySpec{}, policy), (HistoryLimits{50, 720h}));
  EXPECT_EQ(history_limits(HistorySpec{10, 24h}, policy), (HistoryLimits{10, 24h}));
  // Beyond the policy (a LoadTest that ran before it was lowered): held to it.
  EXPECT_EQ(history_limits(HistorySpec{500, 9000h}, policy), (HistoryLimits{100, 2160h}));
}

}  // namespace
