#pragma once
// The conditions of a LoadTest's status, and how a gate reads them back.
//
// Every tool that gates on a LoadTest reads these, each its own way:
//   kstatus (Flux `wait`, `kubectl kubeload`, cli-utils) looks at
//     status.observedGeneration, Reconciling and Stalled;
//   Flux healthCheckExprs and the Argo CD health check look at Ready,
//     Stalled and Finished (deploy/argocd, deploy/flux);
//   `kubectl wait` waits for one condition: Finished for "the run is over,
//     whatever the outcome", Ready for "it passed".
// So a run reads green (Ready=True, kstatus Current) only when it finished
// and passed, and every finished run has Finished=True.
//
// Conditions, one row per type (reasons are the phase table's, phase.hpp):
//   Ready        True: Succeeded with verdict Pass (reason ThresholdsPassed)
//                or None (reason NoGate). False otherwise, with the phase's
//                reason (WaitingForWorkers, Running, ThresholdsFailed,
//                WorkerFailed, ...).
//   Reconciling  True while Pending, Starting or Running; False once final.
//   Stalled      True when the run Failed (InvalidSpec, WorkersNotReady,
//                WorkerFailed, ResultsLost) or its verdict is Fail
//                (ThresholdsFailed); False otherwise.
//   Finished     True once the phase is Succeeded or Failed, any verdict:
//                the one condition `kubectl wait` needs to see the end.
//   WorkersReady True once every worker was ready (stays True after the
//                start); reason AllWorkersReady, else WaitingForWorkers or
//                the failure's reason.
//   Completed    True when the run was measured to its end (Succeeded),
//                reason DurationReached, RequestsReached or StagesCompleted;
//                False for a failed run and while running.
//   Passed       The gate: True for verdict Pass (ThresholdsPassed) or a run
//                without a gate (NoGate), False for Fail or a failed run,
//                Unknown while the run is not over.
// Every condition carries the generation it was computed for
// (observedGeneration), as status.observedGeneration does.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "operator/phase.hpp"
#include "operator/timestamp.hpp"

namespace kubeload::controller {

struct ConditionFacts {
  PhaseDecision decision;
  Verdict gate = Verdict::None;
  bool workers_ready = false;         // all workers ready, or the run already started
  std::string workers_ready_message;  // "all 3 workers ready", "1/3 workers ready"
  // For a Succeeded run: how it ended, e.g. DurationReached, and
  // "90123 requests in 30.0s".
  std::string completed_reason;
  std::string completed_message;
  // The baseline comparison, once the gate is judged (spec.baseline only):
  // the Baseline condition.
  std::optional<api::BaselineOutcome> baseline;
};

// One condition without its times; status.cpp adds lastTransitionTime and
// observedGeneration.
struct ConditionValue {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  bool operator==(const ConditionValue&) const = default;
};

// The conditions for one decision, in a fixed order: WorkersReady,
// Completed, Passed, Finished, Reconciling, Stalled, Ready, and Baseline
// when there is a comparison (True WithinBaseline, False Regressed) or
// nothing to compare with (False NoBaseline).
std::vector<ConditionValue> decide_conditions(const ConditionFacts& facts);

// One status condition at `generation`. As meta.SetStatusCondition, its
// lastTransitionTime is the one in `current` while the status stays the
// same, else `now`.
api::Condition condition(const ConditionValue& value, int64_t generation,
                         const std::vector<api::Condition>& current, Timestamp now);
inline api::Condition condition(const ConditionValue& value, int64_t generation,
                                const api::LoadTestStatus& current, Timestamp now) {
  return condition(value, generation, current.conditions, now);
}
// Sets `made` in `conditions`: in the place of the condition of its type, or last.
void set_condition(std::vector<api::Condition>& conditions, api::Condition made);

// What a gate concludes from a LoadTest as the API returns it.
enum class GateState {
  InProgress,  // not finished, or the status is not of the current generation
  Passed,      // Succeeded, verdict Pass or None
  Failed,      // Succeeded, verdict Fail: the gate said no
  Error,       // the run Failed: it could not be measured as specified
};

struct GateReading {
  GateState state = GateState::InProgress;
  std::string message;
};

// Reads the way kstatus and our Flux and Argo CD checks do: a status whose
// observedGeneration (or any gating condition's) is not metadata.generation
// is still in progress, whatever it says; then Finished, Stalled and Ready
// decide. Never Passed without Ready=True and Finished=True.
GateReading read_gate(const nlohmann::json& loadtest);

}  // namespace kubeload::controller
