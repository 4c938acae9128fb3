#pragma once
// The one transition table of a LoadTest's phase. The phase is derived from
// what is observed now, never advanced step by step, so an operator that
// restarts mid-run derives the same phase from the same cluster state.
//
//   Pending    the worker Job does not exist yet
//   Starting   the Job exists; waiting for every worker to be ready, then
//              for the start barrier to be issued
//   Running    the start was issued; results are being collected
//   Succeeded  every worker's final result was collected (the verdict says
//              whether the gate passed)
//   Failed     the test could not run as specified: invalid spec, workers
//              never ready, a worker crashed or vanished, results lost
//
// Succeeded and Failed are final: compute_status keeps a final status as it
// is (the Job and pods go away on cleanup, which must not change history).

#include <cstdint>
#include <string>
#include <string_view>

#include "kubeload/api/status.hpp"

namespace kubeload::controller {

// The phase, its spelling and what "final" means are the API's
// (kubeload/api/status.hpp).
using api::is_final;
using api::Phase;
using api::Reason;
using api::to_string;
// The gate's outcome (thresholds and baseline), known once all final results
// are in: the status's verdict. None: the LoadTest has no gate.
using api::Verdict;

// What the table looks at, reduced from the observations by compute_status.
// The strings carry the details that end up in status.message.
struct PhaseFacts {
  bool spec_valid = true;
  std::string spec_errors;  // "spec.load.rate: must be > 0; ..."
  bool job_exists = false;
  bool start_issued = false;
  uint32_t desired = 0;
  uint32_t ready = 0;
  // Workers whose final result was collected and reports no run error.
  uint32_t final_results = 0;
  // Non-empty when a worker failed, was deleted or vanished, or the Job
  // failed or was deleted after the start: which one and why.
  std::string worker_failure;
  // Non-empty when a worker exited normally but its final result was never
  // collected.
  std::string results_lost;
  // A failure plan() decided (a deadline, unreachable workers, a refused
  // Job): reason (CamelCase) and message.
  std::string run_failure_reason;
  std::string run_failure_message;
  bool start_deadline_passed = false;
  // No Job yet, and what it waits for ("waiting for Secret ..."); empty:
  // the operator is creating it.
  std::string waiting_for;
  std::string start_timeout;     // "5m", for messages
  std::string not_ready_detail;  // "worker 1: ImagePullBackOff", may be empty
  Verdict gate = Verdict::None;
  std::string gate_message;  // "all 3 thresholds met"
};

struct PhaseDecision {
  Phase phase = Phase::Pending;
  std::string reason;  // a Reason's spelling (api::name)
  std::string message;
};

// Rules in order; the first that holds decides:
//   invalid spec                                -> Failed    InvalidSpec
//   all final results in                        -> Succeeded ThresholdsPassed |
//                                                            ThresholdsFailed | Completed
//   a worker failed or vanished                 -> Failed    WorkerFailed
//   started, a worker exited without result     -> Failed    ResultsLost
//   plan() found a run failure                  -> Failed    its reason (RunDeadlineExceeded,
//                                                            WorkersUnreachable,
//                                                            WorkerTokenRefused, JobRejected,
//                                                            ObjectRejected, JobNameTaken,
//                                                            ObjectNameTaken,
//                                                            SecretNotConsented)
//   started                                     -> Running   Running
//   not all ready (or no Job), deadline passed  -> Failed    WorkersNotReady
//   no Job                                      -> Pending   WaitingForWorkers (the message:
//                                                            what it waits for, if not the
//                                                            operator)
//   not all ready                               -> Starting  WaitingForWorkers
//   all ready, start not issued                 -> Starting  WorkersReady
// Complete results win over a failure seen later: a worker that crashes
// after its final result was collected took nothing from the run.
PhaseDecision decide_phase(const PhaseFacts& facts);

}  // namespace kubeload::controller
