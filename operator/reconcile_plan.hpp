#pragma once
// The reconcile as a pure function, as controller-runtime operators are
// built: observe -> plan -> act. The controller observes (the LoadTest, its
// Job and pods, the kept results, the workers' answers, the clock) into an
// Observation; plan() decides, reading nothing else, the status to write, the
// actions to take in order, and when to look again; the controller's thin
// executor does the I/O. Every decision of a reconcile lives in plan(), so
// every decision has a table test.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/spec.hpp"
#include "operator/config.hpp"
#include "operator/status.hpp"
#include "operator/views.hpp"
#include "operator/worker_results.hpp"

namespace kubeload::controller {

// One worker's answer to GET /result in this pass.
struct WorkerAnswer {
  std::optional<nlohmann::json> document;  // the /result body, as served
  std::string error;                       // could not reach it, or no usable answer
};

struct Observation {
  nlohmann::json loadtest;     // as the API returns it (fresh read, not the cache)
  ParsedLoadTest parsed;       // parse_loadtest(loadtest)
  std::optional<JobView> job;  // the Job of the worker Job's name, whoever owns it
  std::vector<PodView> pods;   // pods labelled with the LoadTest's name (any incarnation)
  // The kept final results (the results ConfigMap's data): key -> document.
  std::optional<nlohmann::json> kept_results;
  // Kept results already folded into one merge: the executor folds each kept
  // document once (fold_kept_results) and carries the merge across passes,
  // so a pass parses only what is new. plan() folds the kept documents not
  // in it; left empty (a restarted operator) the numbers are the same, the
  // pass only slower.
  WorkerResults kept_folded;
  std::map<uint32_t, WorkerAnswer> answers;  // by worker index, asked this pass
  // Since when each worker has not answered (kept by the executor across
  // passes; a restart starts the clock over, which only delays the verdict).
  std::map<uint32_t, Timestamp> unreachable_since;
  // Set by the executor when the API server refused to create the Job (4xx):
  // its message. A refusal is a status, not a retry.
  std::optional<std::string> job_rejected;
  // The baseline lookup, when plan() asked for it (LookUpBaseline).
  bool baseline_looked_up = false;
  std::optional<nlohmann::json> baseline_status;
  std::string baseline_name;
  // The retention lookup, when plan() asked for it (LookUpNewestPass): the
  // newest passing run of the LoadTest's kubeload.dev/test label.
  bool newest_pass_looked_up = false;
  std::string newest_pass_name;
  Timestamp now;
};

// ---- actions, taken in order; the executor stops at the first that fails --------

struct CreateJob {
  nlohmann::json job;
};
// Records the start barrier on the Job before any worker hears of it, so a
// restarted operator starts the stragglers at the same barrier.
struct RecordStartAt {
  std::string job_name;
  Timestamp at;
};
struct StartWorker {
  uint32_t index;
  std::string ip;
  Timestamp at;
};
// Adds one worker's final /result document to the results ConfigMap (created
// owned by the LoadTest when missing), before the worker may exit.
struct KeepResult {
  std::string config_map;
  nlohmann::json config_map_object;  // to create it when missing (empty data)
  std::string key;                   // "worker-<index>"
  std::string document;
};
// POST /finish: the worker's final result is kept; it may exit.
struct FinishWorker {
  uint32_t index;
  std::string ip;
};
struct WriteStatus {
  nlohmann::json status;
  // The LoadTest's resourceVersion the status was computed from: the write
  // is refused (409) when the object changed since, so a stale writer (an
  // old leader) never overwrites a newer status.
  std::string resource_version;
};
struct RecordEvent {
  std::string type;  // Normal, Warning
  std::string reason;
  std::string message;
};
// Removes a Job; `uid` is a precondition, so only that incarnation goes.
struct DeleteJob {
  std::string name;
  std::string uid;
};
// Ends a Job that is kept after a failed run: activeDeadlineSeconds 1 makes
// the Job controller stop its pods and mark it Failed, so its TTL applies.
struct EndJob {
  std::string name;
};
// Asks the executor to look the baseline up and plan again.
struct LookUpBaseline {};
// Asks the executor to find the newest passing run of the test label and
// plan again (retention must not delete what a baseline may need).
struct LookUpNewestPass {};
// spec.ttlSecondsAfterFinished ran out: the LoadTest goes (only this uid).
struct DeleteLoadTest {
  std::string name;
  std::string uid;
};

using Action =
    std::variant<CreateJob, RecordStartAt, StartWorker, KeepResult, FinishWorker, WriteStatus,
                 RecordEvent, DeleteJob, EndJob, LookUpBaseline, LookUpNewestPass, DeleteLoadTest>;

struct ReconcilePlan {
  nlohmann::json status;  // what the status is now (written by a WriteStatus when it changed)
  std::vector<Action> actions;
  std::optional<std::chrono::milliseconds> requeue_after;
  std::vector<std::string> warnings;  // for the log: unreadable kept or served results
};

// ---- facts derived from the spec ------------------------------------------------

// Workers get the barrier's time this long before it, so that all of them
// hold it when it passes.
inline constexpr std::chrono::milliseconds kStartLead{1500};
// Added to a time-bounded run's planned length before it is overdue.
inline constexpr std::chrono::seconds kRunGrace{30};
// The run bound of a run bounded by requests when spec.timeouts.run is unset.
inline constexpr std::chrono::hours kDefaultRequestRunTimeout{1};
// How long a worker waits for POST /finish after its run (loadgen --linger).
inline constexpr std::chrono::seconds kWorkerLinger{300};

// How long the measured run may take from the barrier (see the CRD's
// timeouts.run).
std::chrono::nanoseconds run_time_bound(const LoadTestSpec& spec);
// The Job's activeDeadlineSeconds: start timeout + run bound + the workers'
// linger, so the backstop never cuts a run the operator still waits for.
int64_t job_active_deadline_seconds(const LoadTestSpec& spec);
// The results ConfigMap of a LoadTest incarnation (name and uid).
std::string results_config_map_name(const std::string& loadtest_name, const std::string& uid);

// ---- the plan ---------------------------------------------------------------------

// The Job and pods of this incarnation of the LoadTest: the Job whose
// controller is the LoadTest's uid, the pods labelled with that uid or
// controlled by that Job. Never by name alone.
std::optional<JobView> own_job(const Observation& observed);
std::vector<PodView> own_pods(const Observation& observed);
// Folds into `folded` every kept result of this incarnation that it does not
// hold yet, starting over when it was folded for another worker count or
// holds a worker the kept results no longer have (so it is always the merge
// of exactly the kept documents). Documents of another run, or unreadable
// ones, are left out and named in `problems`.
void fold_kept_results(const Observation& observed, WorkerResults& folded,
                       std::vector<std::string>& problems);
// The workers plan() wants /result from in this pass (index -> pod IP).
std::map<uint32_t, std::string> workers_to_ask(const Observation& observed);

ReconcilePlan plan(const Observation& observed, const OperatorConfig& config);

}  // namespace kubeload::controller
