#include "operator/phase.hpp"

namespace kubeload::controller {
namespace {

std::string ready_count(const PhaseFacts& facts) {
  std::string text =
      std::to_string(facts.ready) + "/" + std::to_string(facts.desired) + " workers ready";
  if (!facts.not_ready_detail.empty()) text += " (" + facts.not_ready_detail + ")";
  return text;
}

PhaseDecision succeeded(const PhaseFacts& facts) {
  switch (facts.gate) {
    case Gate::Passed:
      return {Phase::Succeeded, "ThresholdsPassed", facts.gate_message};
    case Gate::Failed:
      return {Phase::Succeeded, "ThresholdsFailed", facts.gate_message};
    case Gate::None:
      break;
  }
  return {Phase::Succeeded, "Completed",
          facts.gate_message.empty() ? "completed; no thresholds to check" : facts.gate_message};
}

}  // namespace

std::string_view to_string(Phase phase) noexcept {
  switch (phase) {
    case Phase::Pending:
      return "Pending";
    case Phase::Starting:
      return "Starting";
    case Phase::Running:
      return "Running";
    case Phase::Succeeded:
      return "Succeeded";
    case Phase::Failed:
      return "Failed";
  }
  return "Pending";
}

bool is_final(Phase phase) noexcept {
  return phase == Phase::Succeeded || phase == Phase::Failed;
}

PhaseDecision decide_phase(const PhaseFacts& facts) {
  if (!facts.spec_valid) {
    return {Phase::Failed, "InvalidSpec", "invalid spec: " + facts.spec_errors};
  }
  if (facts.desired > 0 && facts.final_results >= facts.desired) return succeeded(facts);
  if (!facts.worker_failure.empty()) {
    return {Phase::Failed, "WorkerFailed", facts.worker_failure};
  }
  if (facts.start_issued && !facts.results_lost.empty()) {
    return {Phase::Failed, "ResultsLost", facts.results_lost};
  }
  if (!facts.run_failure_reason.empty()) {
    return {Phase::Failed, facts.run_failure_reason, facts.run_failure_message};
  }
  if (facts.start_issued) {
    return {Phase::Running, "Running",
            std::to_string(facts.desired) + " workers running; " +
                std::to_string(facts.final_results) + " finished"};
  }
  if (facts.start_deadline_passed && (!facts.job_exists || facts.ready < facts.desired)) {
    return {Phase::Failed, "WorkersNotReady",
            ready_count(facts) + " after timeouts.start (" + facts.start_timeout + ")"};
  }
  if (!facts.job_exists) {
    return {Phase::Pending, "WaitingForWorkers",
            "creating the worker Job (" + std::to_string(facts.desired) + " workers)"};
  }
  if (facts.ready < facts.desired)
    return {Phase::Starting, "WaitingForWorkers", ready_count(facts)};
  return {Phase::Starting, "WorkersReady",
          "all " + std::to_string(facts.desired) + " workers ready; starting them together"};
}

}  // namespace kubeload::controller
