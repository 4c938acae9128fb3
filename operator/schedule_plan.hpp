#pragma once
// A LoadTestSchedule's reconcile as a pure function, as the LoadTest's is
// (reconcile_plan.hpp): the controller observes the schedule and the
// LoadTests it created into a ScheduleObservation; plan_schedule decides the
// status, the actions in order and when to look again; the controller's
// executor does the I/O.
//
// The rules are CronJob's:
// - only the latest tick since the last one handled is run (ticks missed
//   while the operator was away are not all run), and none from before the
//   schedule was created;
// - a tick the operator comes to more than startingDeadlineSeconds late is
//   skipped (Event MissedSchedule, status.lastSkippedTime);
// - one run per tick: a LoadTest of the schedule whose kubeload.dev/
//   scheduled-at annotation is the tick is that tick's run, so a pass that
//   is repeated (an operator restarted between the create and the status
//   write) creates nothing more;
// - concurrencyPolicy: Forbid skips the tick while a run has not finished
//   (Event RunStillActive, status.lastSkippedTime; unlike a CronJob, the
//   skipped tick is not run when the earlier run ends: it was a tick with
//   another test going on), Replace deletes the running ones (with their uid
//   as a precondition) and creates, Allow creates;
// - suspend creates nothing; on resume the latest tick missed is run unless
//   startingDeadlineSeconds says it is too late (as a CronJob);
// - finished runs beyond successfulRunsHistoryLimit (the runs that passed)
//   and failedRunsHistoryLimit (the others) are deleted, oldest first.
// The admin's policy needs nothing here: each run is a LoadTest, which the
// operator checks like any other.
//
// Conditions, as kstatus (cli-utils, Flux) reads them: Stalled=True is
// Failed; then Ready=True is Current, Ready=False or Unknown InProgress:
// - Ready True, LastRunPassed: the newest finished run passed;
// - Ready False, LastRunFailed: it failed (phase Failed or verdict Fail),
//   naming the run and its message; Stalled True likewise, so kstatus
//   (Flux, cli-utils) reads the schedule as Failed, not Current;
// - Ready True, NoRunFinished: no run has finished yet. True, not Unknown:
//   the schedule is set up, and kstatus reads Unknown as InProgress, which
//   would hold a Flux `wait` until the first tick's run ended (a day for a
//   nightly test); status.lastRuns, empty, says no verdict is known;
// - Ready False and Stalled True, InvalidSpec: the schedule, the time zone
//   or the template's LoadTest spec is wrong, named in the message; nothing
//   is created until the spec changes.
// The newest finished run is status.lastRuns[0]: the last runs are kept in
// the status across passes, so a failed run deleted by the history limit
// (or by hand) still counts until a newer run finishes.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/loadtest_schedule.hpp"
#include "operator/reconcile_plan.hpp"
#include "operator/timestamp.hpp"

namespace kubeload::controller {

// How many finished runs status.lastRuns shows.
inline constexpr std::size_t kLastRunsShown = 5;

// A LoadTest with the schedule's label, as the plan reads it.
struct ScheduledRun {
  std::string name;
  std::string uid;
  std::string controller_uid;             // its controlling owner's uid
  std::optional<Timestamp> scheduled_at;  // its kubeload.dev/scheduled-at
  std::optional<Timestamp> created;
  bool deleting = false;
  std::optional<api::Phase> phase;
  std::optional<api::Verdict> verdict;
  std::optional<Timestamp> completion_time;
  std::string message;
  bool operator==(const ScheduledRun&) const = default;
};
// A LoadTest as the API server returns it (its owner references too).
ScheduledRun scheduled_run(const nlohmann::json& loadtest);

struct ScheduleObservation {
  api::LoadTestSchedule schedule;  // fresh from the API server
  Timestamp now;
  // The LoadTests labelled kubeload.dev/schedule=<its label value>; those
  // of which this schedule (its uid) is not the controller are ignored.
  std::vector<ScheduledRun> runs;
};

// ---- actions, taken in order; the executor stops at the first that fails

// Creates the tick's run (the API server names it from generateName).
struct CreateScheduledRun {
  nlohmann::json loadtest;  // build_scheduled_loadtest
  Timestamp tick;
};
struct WriteScheduleStatus {
  api::LoadTestScheduleStatus status;
  std::string resource_version;  // the schedule's, a precondition (409 when it changed)
};
// DeleteLoadTest (a run replaced or beyond the history limits) and
// RecordEvent are the LoadTest plan's.
using ScheduleAction =
    std::variant<CreateScheduledRun, DeleteLoadTest, WriteScheduleStatus, RecordEvent>;

struct SchedulePlan {
  api::LoadTestScheduleStatus status;
  std::vector<ScheduleAction> actions;
  // The next tick (the controller looks again then); unset while
  // suspended, invalid or being deleted.
  std::optional<Timestamp> requeue_at;
};

SchedulePlan plan_schedule(const ScheduleObservation& observed);

}  // namespace kubeload::controller
