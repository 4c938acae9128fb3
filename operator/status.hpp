#pragma once
// A LoadTest's status as a pure function of what the controller observed:
// the LoadTest itself (spec, generation, current status), its parse, the
// worker Job and pods, and the results collected from the workers. The
// controller writes the result to /status only when status_changed says so.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/result.hpp"
#include "kubeload/spec.hpp"
#include "operator/timestamp.hpp"
#include "operator/views.hpp"
#include "operator/worker_results.hpp"

namespace kubeload::controller {

struct Observed {
  nlohmann::json loadtest;            // as the API returns it: metadata, spec, status
  ParsedLoadTest parsed;              // parse_loadtest(loadtest)
  std::optional<nlohmann::json> job;  // the worker Job, when it exists
  std::vector<PodView> pods;          // the Job's pods, any order, terminating ones included
  // The workers' results, merged as they were collected; the controller
  // bounds it by spec.workers.
  WorkerResults results;
  // When the operator issued POST /start (the barrier's wall time), if it did.
  std::optional<Timestamp> start_issued_at;
  // max - min of the workers' start acknowledgements, if the operator
  // measured it; else derived from the workers' startedAtMs.
  std::optional<int64_t> start_skew_ms;
  // The status of the run to compare with (spec.baseline): the baseline
  // LoadTest's status, found by the controller; unset when none was found.
  std::optional<nlohmann::json> baseline_status;
  std::string baseline_name;  // the LoadTest baseline_status came from
  // A failure that plan() found from time and answers rather than from the
  // objects (RunDeadlineExceeded, WorkersUnreachable, JobRejected,
  // JobNameTaken): the reason and message Failed carries.
  std::string run_failure_reason;
  std::string run_failure_message;
};

// When the workers must all be ready by: the Job's creation time (else the
// LoadTest's) plus spec.timeouts.start. Unset when the creation time is not
// known or the spec is invalid. The controller requeues for this moment.
std::optional<Timestamp> start_deadline(const Observed& observed);

// The whole status (api.md), recomputed from the observations. Values that
// record history (startTime, completionTime, startSkewMs, conditions'
// lastTransitionTime) are taken from the current status when already set,
// so recomputing with nothing changed yields the same document. A final
// status (Succeeded or Failed) is kept: a LoadTest runs once, so an edit
// after the end only moves observedGeneration (status and conditions) to the
// new generation (the conditions are derived again from the kept phase and
// verdict, so a run that ended under an older operator gains the ones it
// lacks; conditions.hpp lists them). The exception is Failed InvalidSpec of an older
// generation, which is derived again: the edit may have fixed the spec.
// `now` comes from the controller's injected clock.
nlohmann::json compute_status(const Observed& observed, Timestamp now);

// One status condition at `generation`. As meta.SetStatusCondition, its
// lastTransitionTime is the one in `current_status` while the status stays the
// same, else `now`.
nlohmann::json condition(std::string_view type, std::string_view status, const std::string& reason,
                         const std::string& message, int64_t generation,
                         const nlohmann::json& current_status, Timestamp now);

// Whether `next` differs from `current` at all (exact JSON equality).
bool status_changed(const nlohmann::json& current, const nlohmann::json& next);

}  // namespace kubeload::controller
