#include "operator/conditions.hpp"

#include "kubeload/json_access.hpp"

namespace kubeload::controller {
namespace {

using json_access::find_condition;
using json_access::member;
using json_access::text;
using nlohmann::json;

std::string true_or_false(bool value) {
  return value ? "True" : "False";
}

}  // namespace

std::vector<ConditionValue> decide_conditions(const ConditionFacts& facts) {
  const PhaseDecision& decision = facts.decision;
  const bool succeeded = decision.phase == Phase::Succeeded;
  const bool failed = decision.phase == Phase::Failed;
  const bool finished = succeeded || failed;
  const bool gate_failed = succeeded && facts.gate == Gate::Failed;
  const bool passed = succeeded && !gate_failed;
  // A run without a gate passes (nothing failed); the reason tells it apart.
  const std::string pass_reason = facts.gate == Gate::None ? "NoGate" : decision.reason;
  const std::string pass_message =
      facts.gate == Gate::None ? "no thresholds or baseline to check" : decision.message;

  std::vector<ConditionValue> conditions;
  if (facts.workers_ready) {
    conditions.push_back({"WorkersReady", "True", "AllWorkersReady", facts.workers_ready_message});
  } else {
    conditions.push_back({"WorkersReady", "False", failed ? decision.reason : "WaitingForWorkers",
                          failed ? decision.message : facts.workers_ready_message});
  }
  if (succeeded) {
    conditions.push_back({"Completed", "True", facts.completed_reason, facts.completed_message});
  } else {
    conditions.push_back({"Completed", "False", decision.reason, decision.message});
  }
  if (passed) {
    conditions.push_back({"Passed", "True", pass_reason, pass_message});
  } else {
    conditions.push_back(
        {"Passed", finished ? "False" : "Unknown", decision.reason, decision.message});
  }
  conditions.push_back({"Finished", true_or_false(finished), decision.reason, decision.message});
  conditions.push_back(
      {"Reconciling", true_or_false(!finished), decision.reason, decision.message});
  conditions.push_back(
      {"Stalled", true_or_false(failed || gate_failed), decision.reason, decision.message});
  if (passed) {
    conditions.push_back({"Ready", "True", pass_reason, pass_message});
  } else {
    conditions.push_back({"Ready", "False", decision.reason, decision.message});
  }
  return conditions;
}

GateReading read_gate(const json& loadtest) {
  const json& generation = member(member(loadtest, "metadata"), "generation");
  const json& status = member(loadtest, "status");
  const json& observed = member(status, "observedGeneration");
  const std::string message = text(member(status, "message"));
  // 0: the CRD's default, so that a LoadTest the operator has not seen yet
  // reads as in progress to kstatus too.
  if (!status.is_object() || !observed.is_number_integer() || observed == 0) {
    return {GateState::InProgress, "waiting for the operator's first status"};
  }
  const auto stale = [&](const json& seen) {
    return generation.is_number_integer() && seen.is_number_integer() && seen != generation;
  };
  if (stale(observed)) {
    return {GateState::InProgress, "status is of generation " + observed.dump() +
                                       "; waiting for the operator to observe generation " +
                                       generation.dump()};
  }
  const json& conditions = member(status, "conditions");
  const auto is_true = [&](std::string_view type) {
    const json* condition = find_condition(conditions, type);
    return condition != nullptr && !stale(member(*condition, "observedGeneration")) &&
           text(member(*condition, "status")) == "True";
  };
  if (!is_true("Finished")) {
    return {GateState::InProgress, message.empty() ? "the run is not finished" : message};
  }
  if (is_true("Stalled")) {
    return {text(member(status, "phase")) == "Succeeded" ? GateState::Failed : GateState::Error,
            message};
  }
  if (is_true("Ready")) return {GateState::Passed, message};
  return {GateState::Error,
          "finished, but neither Ready nor Stalled" + (message.empty() ? "" : ": " + message)};
}

}  // namespace kubeload::controller
