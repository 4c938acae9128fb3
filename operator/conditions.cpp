#include "operator/conditions.hpp"

#include "kubeload/json_access.hpp"

namespace kubeload::controller {
namespace {

using api::ConditionStatus;
using api::ConditionType;
using api::name;
using json_access::find_condition;
using json_access::member;
using json_access::text;
using nlohmann::json;

const std::string kTrue = name(ConditionStatus::True);
const std::string kFalse = name(ConditionStatus::False);
const std::string kUnknown = name(ConditionStatus::Unknown);

std::string true_or_false(bool value) {
  return value ? kTrue : kFalse;
}

// "10%" of a check's allowance, as the spec wrote it.
std::string fixed_percent(const api::BaselineCheck& check) {
  std::string text = std::to_string(check.max_regression_percent);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text + "%";
}

}  // namespace

std::vector<ConditionValue> decide_conditions(const ConditionFacts& facts) {
  const PhaseDecision& decision = facts.decision;
  const bool succeeded = decision.phase == Phase::Succeeded;
  const bool failed = decision.phase == Phase::Failed;
  const bool finished = succeeded || failed;
  const bool gate_failed = succeeded && facts.gate == Verdict::Fail;
  const bool passed = succeeded && !gate_failed;
  // A run without a gate passes (nothing failed); the reason tells it apart.
  const std::string pass_reason =
      facts.gate == Verdict::None ? name(Reason::NoGate) : decision.reason;
  const std::string pass_message =
      facts.gate == Verdict::None ? "no thresholds or baseline to check" : decision.message;

  std::vector<ConditionValue> conditions;
  if (facts.workers_ready) {
    conditions.push_back({name(ConditionType::WorkersReady), kTrue, name(Reason::AllWorkersReady),
                          facts.workers_ready_message});
  } else {
    conditions.push_back({name(ConditionType::WorkersReady), kFalse,
                          failed ? decision.reason : name(Reason::WaitingForWorkers),
                          failed ? decision.message : facts.workers_ready_message});
  }
  if (succeeded) {
    conditions.push_back(
        {name(ConditionType::Completed), kTrue, facts.completed_reason, facts.completed_message});
  } else {
    conditions.push_back(
        {name(ConditionType::Completed), kFalse, decision.reason, decision.message});
  }
  if (passed) {
    conditions.push_back({name(ConditionType::Passed), kTrue, pass_reason, pass_message});
  } else {
    conditions.push_back({name(ConditionType::Passed), finished ? kFalse : kUnknown,
                          decision.reason, decision.message});
  }
  conditions.push_back(
      {name(ConditionType::Finished), true_or_false(finished), decision.reason, decision.message});
  conditions.push_back({name(ConditionType::Reconciling), true_or_false(!finished), decision.reason,
                        decision.message});
  conditions.push_back({name(ConditionType::Stalled), true_or_false(failed || gate_failed),
                        decision.reason, decision.message});
  if (passed) {
    conditions.push_back({name(ConditionType::Ready), kTrue, pass_reason, pass_message});
  } else {
    conditions.push_back({name(ConditionType::Ready), kFalse, decision.reason, decision.message});
  }
  if (const auto& baseline = facts.baseline) {
    if (!baseline->result_name) {
      conditions.push_back({name(ConditionType::Baseline), kFalse, name(Reason::NoBaseline),
                            baseline->message.value_or("nothing to compare with")});
    } else {
      std::string message = "compared with " + *baseline->result_name;
      if (baseline->results.size() > 1) {
        message = "compared with the median of " + std::to_string(baseline->results.size()) +
                  " records, the newest " + *baseline->result_name;
      }
      for (const api::BaselineCheck& check : baseline->checks) {
        message += (&check == &baseline->checks.front() ? ": " : ", ") + check.metric + " " +
                   check.delta + (check.passed ? "" : " (over " + fixed_percent(check) + ")");
      }
      conditions.push_back({name(ConditionType::Baseline), true_or_false(baseline->passed),
                            name(baseline->passed ? Reason::WithinBaseline : Reason::Regressed),
                            message});
    }
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
  const auto is_true = [&](ConditionType type) {
    const json* condition = find_condition(conditions, to_string(type));
    return condition != nullptr && !stale(member(*condition, "observedGeneration")) &&
           text(member(*condition, "status")) == kTrue;
  };
  if (!is_true(ConditionType::Finished)) {
    return {GateState::InProgress, message.empty() ? "the run is not finished" : message};
  }
  if (is_true(ConditionType::Stalled)) {
    return {api::parse_phase(text(member(status, "phase"))) == Phase::Succeeded ? GateState::Failed
                                                                                : GateState::Error,
            message};
  }
  if (is_true(ConditionType::Ready)) return {GateState::Passed, message};
  return {GateState::Error,
          "finished, but neither Ready nor Stalled" + (message.empty() ? "" : ": " + message)};
}

api::Condition condition(const ConditionValue& value, int64_t generation,
                         const std::vector<api::Condition>& current, Timestamp now) {
  api::Condition made;
  made.type = value.type;
  made.status = api::parse_condition_status(value.status).value_or(ConditionStatus::Unknown);
  made.reason = value.reason;
  made.message = value.message;
  made.observed_generation = generation;
  made.last_transition_time = api::whole_seconds(now);
  // As meta.SetStatusCondition: the transition time moves only when the
  // status does.
  for (const api::Condition& old : current) {
    if (old.type == made.type) {
      if (old.status == made.status) made.last_transition_time = old.last_transition_time;
      break;
    }
  }
  return made;
}

void set_condition(std::vector<api::Condition>& conditions, api::Condition made) {
  for (api::Condition& existing : conditions) {
    if (existing.type == made.type) {
      existing = std::move(made);
      return;
    }
  }
  conditions.push_back(std::move(made));
}

}  // namespace kubeload::controller
