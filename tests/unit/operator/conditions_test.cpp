// The conditions every gate reads (decide_conditions), one table row per
// phase and verdict, and how a gate reads them back (read_gate), including
// a status of an older generation: no row may read green unless the run
// finished and passed.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "operator/conditions.hpp"
#include "operator/phase.hpp"

namespace {

using nlohmann::json;
using namespace kubeload::controller;

std::map<std::string, ConditionValue> by_type(const std::vector<ConditionValue>& conditions) {
  std::map<std::string, ConditionValue> out;
  for (const ConditionValue& c : conditions) out[c.type] = c;
  return out;
}

struct ConditionRow {
  const char* name;
  PhaseDecision decision;
  Verdict gate;
  bool workers_ready;
  // Expected statuses.
  const char* ready;
  const char* reconciling;
  const char* stalled;
  const char* finished;
  const char* completed;
  const char* passed;
  const char* workers;
  const char* ready_reason;
};

std::vector<ConditionRow> condition_rows() {
  return {
      {"pending",
       {Phase::Pending, "WaitingForWorkers", "creating the worker Job (3 workers)"},
       Verdict::None,
       false,
       "False",
       "True",
       "False",
       "False",
       "False",
       "Unknown",
       "False",
       "WaitingForWorkers"},
      {"starting",
       {Phase::Starting, "WaitingForWorkers", "1/3 workers ready"},
       Verdict::None,
       false,
       "False",
       "True",
       "False",
       "False",
       "False",
       "Unknown",
       "False",
       "WaitingForWorkers"},
      {"all ready",
       {Phase::Starting, "WorkersReady", "all 3 workers ready"},
       Verdict::None,
       true,
       "False",
       "True",
       "False",
       "False",
       "False",
       "Unknown",
       "True",
       "WorkersReady"},
      {"running",
       {Phase::Running, "Running", "3 workers running; 0 finished"},
       Verdict::None,
       true,
       "False",
       "True",
       "False",
       "False",
       "False",
       "Unknown",
       "True",
       "Running"},
      {"passed",
       {Phase::Succeeded, "ThresholdsPassed", "all 2 thresholds met"},
       Verdict::Pass,
       true,
       "True",
       "False",
       "False",
       "True",
       "True",
       "True",
       "True",
       "ThresholdsPassed"},
      {"no gate",
       {Phase::Succeeded, "Completed", "completed; no thresholds to check"},
       Verdict::None,
       true,
       "True",
       "False",
       "False",
       "True",
       "True",
       "True",
       "True",
       "NoGate"},
      {"failed gate",
       {Phase::Succeeded, "ThresholdsFailed", "1 of 2 thresholds missed"},
       Verdict::Fail,
       true,
       "False",
       "False",
       "True",
       "True",
       "True",
       "False",
       "True",
       "ThresholdsFailed"},
      {"worker failed",
       {Phase::Failed, "WorkerFailed", "worker 1 failed (OOMKilled)"},
       Verdict::None,
       true,
       "False",
       "False",
       "True",
       "True",
       "False",
       "False",
       "True",
       "WorkerFailed"},
      {"results lost",
       {Phase::Failed, "ResultsLost", "worker 0 exited"},
       Verdict::None,
       true,
       "False",
       "False",
       "True",
       "True",
       "False",
       "False",
       "True",
       "ResultsLost"},
      {"never ready",
       {Phase::Failed, "WorkersNotReady", "1/3 workers ready after 5m"},
       Verdict::None,
       false,
       "False",
       "False",
       "True",
       "True",
       "False",
       "False",
       "False",
       "WorkersNotReady"},
      {"invalid spec",
       {Phase::Failed, "InvalidSpec", "invalid spec: spec.load.rate"},
       Verdict::None,
       false,
       "False",
       "False",
       "True",
       "True",
       "False",
       "False",
       "False",
       "InvalidSpec"},
  };
}

TEST(OperatorConditions, TableEveryPhaseAndVerdict) {
  for (const ConditionRow& row : condition_rows()) {
    SCOPED_TRACE(row.name);
    ConditionFacts facts;
    facts.decision = row.decision;
    facts.gate = row.gate;
    facts.workers_ready = row.workers_ready;
    facts.workers_ready_message = row.workers_ready ? "all 3 workers ready" : "1/3 workers ready";
    facts.completed_reason = "DurationReached";
    facts.completed_message = "3003 requests in 30.0s";
    const std::vector<ConditionValue> conditions = decide_conditions(facts);
    auto c = by_type(conditions);
    ASSERT_EQ(conditions.size(), 7u);
    EXPECT_EQ(c["Ready"].status, row.ready);
    EXPECT_EQ(c["Ready"].reason, row.ready_reason);
    EXPECT_EQ(c["Reconciling"].status, row.reconciling);
    EXPECT_EQ(c["Stalled"].status, row.stalled);
    EXPECT_EQ(c["Finished"].status, row.finished);
    EXPECT_EQ(c["Completed"].status, row.completed);
    EXPECT_EQ(c["Passed"].status, row.passed);
    EXPECT_EQ(c["WorkersReady"].status, row.workers);
    // kstatus: exactly one of in progress (Reconciling), failed (Stalled)
    // and current (neither, Ready) holds.
    EXPECT_FALSE(c["Reconciling"].status == "True" && c["Stalled"].status == "True");
    EXPECT_EQ(c["Ready"].status == "True",
              c["Finished"].status == "True" && c["Stalled"].status == "False");
    for (const ConditionValue& value : conditions) {
      EXPECT_FALSE(value.reason.empty()) << value.type;  // the CRD requires one
    }
  }
}

TEST(OperatorConditions, FinishedAndStalledCarryThePhasesWords) {
  ConditionFacts facts;
  facts.decision = {Phase::Failed, "WorkerFailed", "worker 1 failed (OOMKilled, exit code 137)"};
  auto c = by_type(decide_conditions(facts));
  for (const char* type : {"Finished", "Stalled", "Ready", "Passed", "Completed"}) {
    EXPECT_EQ(c[type].reason, "WorkerFailed") << type;
    EXPECT_EQ(c[type].message, facts.decision.message) << type;
  }
}

TEST(OperatorConditions, CompletedSaysHowTheRunEnded) {
  ConditionFacts facts;
  facts.decision = {Phase::Succeeded, "ThresholdsFailed", "1 of 2 thresholds missed"};
  facts.gate = Verdict::Fail;
  facts.completed_reason = "RequestsReached";
  facts.completed_message = "1000 requests in 2.1s";
  auto c = by_type(decide_conditions(facts));
  EXPECT_EQ(c["Completed"].reason, "RequestsReached");
  EXPECT_EQ(c["Completed"].message, "1000 requests in 2.1s");
  EXPECT_EQ(c["Stalled"].reason, "ThresholdsFailed");
}

// ---- read_gate ---------------------------------------------------------------------

// A LoadTest as the API returns it, with the conditions decide_conditions
// gives for `decision`, computed for `observed_generation`.
json loadtest_with(const PhaseDecision& decision, Verdict gate, int64_t generation,
                   int64_t observed_generation) {
  ConditionFacts facts;
  facts.decision = decision;
  facts.gate = gate;
  facts.workers_ready = true;
  facts.completed_reason = "DurationReached";
  facts.completed_message = "300 requests in 3.0s";
  json conditions = json::array();
  for (const ConditionValue& c : decide_conditions(facts)) {
    conditions.push_back({{"type", c.type},
                          {"status", c.status},
                          {"reason", c.reason},
                          {"message", c.message},
                          {"lastTransitionTime", "2026-11-30T12:00:00Z"},
                          {"observedGeneration", observed_generation}});
  }
  const bool succeeded = decision.phase == Phase::Succeeded;
  return {{"apiVersion", "kubeload.dev/v1alpha1"},
          {"kind", "LoadTest"},
          {"metadata", {{"name", "checkout"}, {"namespace", "shop"}, {"generation", generation}}},
          {"status",
           {{"observedGeneration", observed_generation},
            {"phase", std::string(to_string(decision.phase))},
            {"reason", decision.reason},
            {"message", decision.message},
            {"verdict", !succeeded || gate == Verdict::None ? "None"
                        : gate == Verdict::Pass             ? "Pass"
                                                            : "Fail"},
            {"conditions", conditions}}}};
}

const PhaseDecision kPassed{Phase::Succeeded, "ThresholdsPassed", "all 2 thresholds met"};
const PhaseDecision kFailedGate{Phase::Succeeded, "ThresholdsFailed", "1 of 2 thresholds missed"};
const PhaseDecision kWorkerFailed{Phase::Failed, "WorkerFailed", "worker 1 failed"};
const PhaseDecision kRunning{Phase::Running, "Running", "2 workers running; 0 finished"};

TEST(OperatorGateReading, TableEveryStateNeverGreenUnlessPassed) {
  struct Row {
    const char* name;
    json loadtest;
    GateState expected;
  };
  json no_status = loadtest_with(kPassed, Verdict::Pass, 1, 1);
  no_status.erase("status");
  json defaulted = no_status;
  defaulted["status"] = {{"observedGeneration", 0}};  // the CRD's default, before the operator
  json stale_condition = loadtest_with(kPassed, Verdict::Pass, 2, 2);
  for (json& c : stale_condition["status"]["conditions"]) {
    if (c["type"] == "Ready" || c["type"] == "Finished") c["observedGeneration"] = 1;
  }
  json finished_without_verdict = loadtest_with(kPassed, Verdict::Pass, 1, 1);
  for (json& c : finished_without_verdict["status"]["conditions"]) {
    if (c["type"] == "Ready") c["status"] = "False";
  }
  json old_operator = loadtest_with(kPassed, Verdict::Pass, 1, 1);
  json only_old = json::array();
  for (const json& c : old_operator["status"]["conditions"]) {
    if (c["type"] == "Completed" || c["type"] == "Passed") only_old.push_back(c);
  }
  old_operator["status"]["conditions"] = only_old;

  const std::vector<Row> rows = {
      {"no status", no_status, GateState::InProgress},
      {"status defaulted by the CRD", defaulted, GateState::InProgress},
      {"pending",
       loadtest_with({Phase::Pending, "WaitingForWorkers", "creating"}, Verdict::None, 1, 1),
       GateState::InProgress},
      {"running", loadtest_with(kRunning, Verdict::None, 1, 1), GateState::InProgress},
      {"passed", loadtest_with(kPassed, Verdict::Pass, 1, 1), GateState::Passed},
      {"no gate", loadtest_with({Phase::Succeeded, "Completed", "completed"}, Verdict::None, 1, 1),
       GateState::Passed},
      {"failed gate", loadtest_with(kFailedGate, Verdict::Fail, 1, 1), GateState::Failed},
      {"failed run", loadtest_with(kWorkerFailed, Verdict::None, 1, 1), GateState::Error},
      {"stale generation, passed", loadtest_with(kPassed, Verdict::Pass, 2, 1),
       GateState::InProgress},
      {"stale generation, failed", loadtest_with(kWorkerFailed, Verdict::None, 3, 2),
       GateState::InProgress},
      {"stale Ready and Finished conditions", stale_condition, GateState::InProgress},
      {"finished, Ready False, not Stalled", finished_without_verdict, GateState::Error},
      {"written by an older operator (no Finished)", old_operator, GateState::InProgress},
  };
  for (const Row& row : rows) {
    const GateReading reading = read_gate(row.loadtest);
    EXPECT_EQ(static_cast<int>(reading.state), static_cast<int>(row.expected))
        << row.name << ": " << reading.message;
  }
}

TEST(OperatorGateReading, MessagesSayWhy) {
  EXPECT_EQ(read_gate(loadtest_with(kFailedGate, Verdict::Fail, 1, 1)).message,
            "1 of 2 thresholds missed");
  EXPECT_EQ(read_gate(loadtest_with(kRunning, Verdict::None, 1, 1)).message,
            "2 workers running; 0 finished");
  EXPECT_EQ(read_gate(loadtest_with(kPassed, Verdict::Pass, 2, 1)).message,
            "status is of generation 1; waiting for the operator to observe generation 2");
  json defaulted = loadtest_with(kPassed, Verdict::Pass, 1, 1);
  defaulted["status"] = {{"observedGeneration", 0}};
  EXPECT_EQ(read_gate(defaulted).message, "waiting for the operator's first status");
}

}  // namespace
