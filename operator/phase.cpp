#include "operator/phase.hpp"

namespace kubeload::controller {

using api::name;

namespace {

std::string ready_count(const PhaseFacts& facts) {
  std::string text =
      std::to_string(facts.ready) + "/" + std::to_string(facts.desired) + " workers ready";
  if (!facts.not_ready_detail.empty()) text += " (" + facts.not_ready_detail + ")";
  return text;
}

PhaseDecision succeeded(const PhaseFacts& facts) {
  switch (facts.gate) {
    case Verdict::Pass:
      return {Phase::Succeeded, name(Reason::ThresholdsPassed), facts.gate_message};
    case Verdict::Fail:
      return {Phase::Succeeded, name(Reason::ThresholdsFailed), facts.gate_message};
    case Verdict::None:
      break;
  }
  return {Phase::Succeeded, name(Reason::Completed),
          facts.gate_message.empty() ? "completed; no thresholds to check" : facts.gate_message};
}

}  // namespace

PhaseDecision decide_phase(const PhaseFacts& facts) {
  if (!facts.spec_valid) {
    return {Phase::Failed, name(Reason::InvalidSpec), "invalid spec: " + facts.spec_errors};
  }
  if (facts.desired > 0 && facts.final_results >= facts.desired) return succeeded(facts);
  if (!facts.worker_failure.empty()) {
    return {Phase::Failed, name(Reason::WorkerFailed), facts.worker_failure};
  }
  if (facts.start_issued && !facts.results_lost.empty()) {
    return {Phase::Failed, name(Reason::ResultsLost), facts.results_lost};
  }
  if (!facts.run_failure_reason.empty()) {
    return {Phase::Failed, facts.run_failure_reason, facts.run_failure_message};
  }
  if (facts.start_issued) {
    return {Phase::Running, name(Reason::Running),
            std::to_string(facts.desired) + " workers running; " +
                std::to_string(facts.final_results) + " finished"};
  }
  if (facts.start_deadline_passed && (!facts.job_exists || facts.ready < facts.desired)) {
    return {Phase::Failed, name(Reason::WorkersNotReady),
            ready_count(facts) + " after timeouts.start (" + facts.start_timeout + ")"};
  }
  if (!facts.job_exists) {
    return {Phase::Pending, name(Reason::WaitingForWorkers),
            !facts.waiting_for.empty()
                ? facts.waiting_for
                : "creating the worker Job (" + std::to_string(facts.desired) + " workers)"};
  }
  if (facts.ready < facts.desired)
    return {Phase::Starting, name(Reason::WaitingForWorkers), ready_count(facts)};
  return {Phase::Starting, name(Reason::WorkersReady),
          "all " + std::to_string(facts.desired) + " workers ready; starting them together"};
}

}  // namespace kubeload::controller
