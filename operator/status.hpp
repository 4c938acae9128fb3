#pragma once
// A LoadTest's status as a pure function of what a pass observed and what
// plan() made of it: the LoadTest itself (spec, generation, current status),
// its parse, the worker Job and pods, and the results collected from the
// workers. plan() writes it to /status only when status_changed says so.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "operator/conditions.hpp"
#include "operator/observation.hpp"
#include "operator/timestamp.hpp"
#include "operator/worker_results.hpp"

namespace kubeload::controller {

// A failure plan() found from time and answers rather than from the objects
// (RunDeadlineExceeded, WorkersUnreachable, JobRejected, JobNameTaken, ...):
// the reason and message Failed carries.
struct RunFailure {
  Reason reason = Reason::WorkerFailed;
  std::string message;
};

// What plan() established of the run in this pass, beyond what it observed.
struct RunState {
  // The workers' results, merged as they were collected (kept, and this
  // pass's), bounded by spec.workers.
  WorkerResults results;
  // When the operator issued POST /start (the barrier's wall time), if it did.
  std::optional<Timestamp> start_issued_at;
  std::optional<RunFailure> failure;
  // Why no Job is created yet, when it is for something besides the
  // operator (a Secret the spec names that does not exist yet): the Pending
  // message.
  std::string waiting_for;
};

// When the workers must all be ready by: the Job's creation time (else the
// LoadTest's) plus spec.timeouts.start. Unset when the creation time is not
// known or the spec is invalid. The controller requeues for this moment.
std::optional<Timestamp> start_deadline(const Observation& observed);

// The whole status (api.md), recomputed from the observation (the
// LoadTest, this incarnation's Job and pods, the baseline) and the run's
// state. Values that record history (startTime, completionTime,
// startSkewMs, conditions' lastTransitionTime) are taken from the current
// status when already set, so recomputing with nothing changed yields the
// same status. A final status (Succeeded or Failed) is kept: a LoadTest runs
// once, so an edit after the end only moves observedGeneration (status and
// conditions) to the new generation (the conditions are derived again from
// the kept phase and verdict, so a run that ended under an older operator
// gains the ones it lacks; conditions.hpp lists them). The exception is
// Failed InvalidSpec of an older generation, which is derived again: the
// edit may have fixed the spec. `now` comes from the controller's injected
// clock.
api::LoadTestStatus compute_status(const Observation& observed, const RunState& run, Timestamp now);

// What a status may take of etcd's 1.5 MiB per object, beside a spec of up
// to 256 KiB and kubectl's last-applied copy of it. Past it the write would
// fail on every pass and the run would never end.
inline constexpr std::size_t kStatusSizeLimit = 512 * 1024;
// Keeps `status` within `limit` bytes of JSON: named-request rows go first,
// then stage rows, from the last. Returns what the message says of it ("the
// status lists 40 of 100 named requests ..."; every row is in the run's
// results ConfigMap), or "" when nothing went.
std::string bound_status_size(api::LoadTestStatus& status, std::size_t limit);

// Whether `next` differs from `current` at all.
bool status_changed(const api::LoadTestStatus& current, const api::LoadTestStatus& next);

}  // namespace kubeload::controller
