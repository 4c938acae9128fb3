#pragma once
// The reconcile as a pure function, as controller-runtime operators are
// built: observe -> plan -> act. The controller observes (the LoadTest, its
// Job and pods, the kept results, the workers' answers, the clock) into an
// Observation; plan() decides, reading nothing else, the status to write, the
// actions to take in order, and when to look again; the controller's thin
// executor does the I/O. Every decision of a reconcile lives in plan(), so
// every decision has a table test.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/spec.hpp"
#include "operator/config.hpp"
#include "operator/run_timing.hpp"
#include "operator/status.hpp"
#include "operator/target_usage.hpp"
#include "operator/views.hpp"
#include "operator/worker_results.hpp"

namespace kubeload::controller {

// One worker's answer to GET /result in this pass, as digested on arrival.
struct WorkerAnswer {
  bool reached = false;        // it served a /result document
  std::string error;           // not reached: why
  bool token_refused = false;  // not reached: it refused the run's token (401, 403)
  bool other_run = false;      // the document is another run's (an IP reused after its pod went)
  std::string unreadable;      // the document's result cannot be read or merged: why
  bool folded = false;         // its final result is in PassAnswers::finals
  std::optional<CollectedResult> partial;  // a result before the final one (counters only)
};

// The workers' answers of one pass. A final result is folded into `finals`
// as it arrives and its document dropped, so a pass holds one merge and the
// documents in flight, not one document per worker (issue 12). Built by
// begin_pass() and take_answer(), pure functions of what was observed.
struct PassAnswers {
  std::map<uint32_t, WorkerAnswer> by_worker;
  WorkerResults finals;  // this pass's final results, not yet kept
  // Workers outside the Job or already in the kept merge: their answers are
  // not taken (a result counts once).
  std::set<uint32_t> not_taken;
  std::string uid;  // the run's: another run's document is not ours to merge
};

struct CreateRefusal {
  enum class Object { Job, NetworkPolicy, TokenSecret };
  Object object = Object::Job;
  std::string message;  // the API server's, or whose the object of that name is
  // The name is taken: an object of it exists that this run does not
  // control (made by someone else, e.g. to open the workers or to hand them
  // a token of its own). Never taken for the run's.
  bool name_taken = false;
};
// "the worker Job", "the workers' NetworkPolicy", "the worker token Secret":
// how messages and errors name the object.
std::string_view describe(CreateRefusal::Object object);

struct Observation {
  nlohmann::json loadtest;     // as the API returns it (fresh read, not the cache)
  ParsedLoadTest parsed;       // parse_loadtest(loadtest)
  std::optional<JobView> job;  // the Job of the worker Job's name, whoever owns it
  std::vector<PodView> pods;   // pods labelled with the LoadTest's name (any incarnation)
  // The results ConfigMap as read (the running merge of the final results
  // kept so far, see kept_merge); unset when there is none yet.
  std::optional<nlohmann::json> kept_results;
  PassAnswers answers;  // the workers asked this pass (see begin_pass)
  // Since when each worker has not answered (kept by the executor across
  // passes; a restart starts the clock over, which only delays the verdict).
  std::map<uint32_t, Timestamp> unreachable_since;
  // The API server's refusal (a 4xx that a retry would not fix: a quota, an
  // admission webhook, Kyverno, Gatekeeper) of an object the run needs,
  // remembered by the executor from the pass that tried. A refusal is a
  // status, not a retry: nothing else would ever end the run.
  std::optional<CreateRefusal> create_refused;
  // What observe() read because lookups_for() said this pass needs it:
  // the baseline (spec.baseline) ...
  bool baseline_looked_up = false;
  std::optional<nlohmann::json> baseline_status;
  std::string baseline_name;
  // ... the newest passed run of the LoadTest's kubeload.dev/test label
  // (retention must not delete what a baseline may need) ...
  bool newest_pass_looked_up = false;
  std::string newest_pass_name;
  // ... and the target's resource use.
  std::optional<TargetMeasurement> target_measurement;
  Timestamp now;
};

// ---- actions, taken in order; the executor stops at the first that fails --------

// The Secret that hands the run's worker token to its pods: created before
// the Job so the pods never wait for it (409: it exists, with the same token,
// since the token is derived from the LoadTest's uid).
struct CreateTokenSecret {
  nlohmann::json secret;
};
// The run's own NetworkPolicy (--worker-network-policy-from), before the Job
// so no worker pod is ever open to the cluster (409: it exists).
struct CreateNetworkPolicy {
  nlohmann::json policy;
};
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
// Stores the running merge of the final results (kept_results_data) in the
// results ConfigMap before any of the newly folded workers may exit. The
// ConfigMap's resourceVersion is the precondition (none: create it), so two
// passes can never fold the same worker twice or lose one: the second write
// is refused and its pass observes again.
struct KeepResults {
  std::string config_map;
  nlohmann::json config_map_object;  // to create it (with `data`) when there is none yet
  std::string resource_version;      // of the ConfigMap read; empty: create
  nlohmann::json data;
  std::vector<uint32_t> added;  // the workers folded in by this write
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
// spec.ttlSecondsAfterFinished ran out: the LoadTest goes (only this uid).
struct DeleteLoadTest {
  std::string name;
  std::string uid;
};

using Action = std::variant<CreateNetworkPolicy, CreateTokenSecret, CreateJob, RecordStartAt,
                            StartWorker, KeepResults, FinishWorker, WriteStatus, RecordEvent,
                            DeleteJob, EndJob, DeleteLoadTest>;

struct ReconcilePlan {
  nlohmann::json status;  // what the status is now (written by a WriteStatus when it changed)
  std::vector<Action> actions;
  // Counted from the observation's `now`: see requeue_delay.
  std::optional<std::chrono::milliseconds> requeue_after;
  std::vector<std::string> warnings;  // for the log: unreadable kept or served results
  // A started run's deadline (its barrier + run_time_bound): past it, the run
  // fails RunDeadlineExceeded. Unset once final. The metrics export it.
  std::optional<Timestamp> run_deadline;
};

// ---- facts derived from the spec ------------------------------------------------

// Whether the API server's answer to a create is a refusal a retry would not
// fix: the object as built is not allowed (invalid, forbidden by a quota or an
// admission webhook), so the run fails with its message. 409 is the caller's
// (it exists); 401 (credentials expired: fetched again), 429 and 5xx are
// transient.
bool is_rejection(int http_status);
// The results ConfigMap of a LoadTest incarnation (name and uid).
std::string results_config_map_name(const std::string& loadtest_name, const std::string& uid);

// ---- the plan ---------------------------------------------------------------------

// The Job and pods of this incarnation of the LoadTest: the Job whose
// controller is the LoadTest's uid, the pods labelled with that uid or
// controlled by that Job. Never by name alone.
std::optional<JobView> own_job(const Observation& observed);
std::vector<PodView> own_pods(const Observation& observed);
// The Kubernetes limit on a ConfigMap's data (keys and values together).
inline constexpr std::size_t kConfigMapDataLimit = 1024 * 1024;

// The results ConfigMap's data for a running merge of final results
// (api::KeptResults): the merge, the workers folded into it with what the
// status needs of each, and the run's uid. Its size does not grow with the
// worker count beyond a few bytes per worker.
nlohmann::json kept_results_data(const WorkerResults& kept, const std::string& loadtest_uid);
// The size the API server counts against kConfigMapDataLimit.
std::size_t config_map_data_size(const nlohmann::json& data);
// The running merge kept in the results ConfigMap (empty when there is none
// yet). Data of another run or that does not parse is left out and named in
// `problems`.
WorkerResults kept_merge(const Observation& observed, std::vector<std::string>& problems);
// The keys of a results ConfigMap written before the running merge (one
// final document per worker, "worker-<index>"): kept_merge() reads them, so a
// run in flight across an operator upgrade keeps its results, and the next
// write removes them.
std::vector<std::string> legacy_result_keys(const nlohmann::json& config_map_data);
// The workers plan() wants /result from in this pass (index -> pod IP).
std::map<uint32_t, std::string> workers_to_ask(const Observation& observed);
// The empty answers of a pass over `observed` (its kept results and its run).
PassAnswers begin_pass(const Observation& observed);
// Worker `index`'s answer: its /result document, or why there was none.
// Parses it (any thread; throws nothing) ...
struct DigestedAnswer {
  WorkerAnswer answer;
  std::optional<CollectedResult> final_result;
};
DigestedAnswer digest_answer(const std::string& uid, const std::optional<nlohmann::json>& document,
                             std::string error, bool token_refused = false);
// ... and takes it into the pass (one at a time): a final result is folded
// into `finals` at once. An answer of a worker in `not_taken` is dropped.
void take_answer(PassAnswers& answers, uint32_t index, DigestedAnswer digested);

// What observe() must read, beyond the LoadTest, its Job and pods, the kept
// results and the workers' answers, for plan() to decide this pass, so that
// the plan is made once: the baseline once every worker's final result is in
// (kept, or folded in this pass), the test's newest passed run once a passed
// run's TTL is up, the target's resource use once a final run's window is
// three scrapes behind (plan_target_usage). Read from the status as stored;
// when plan() finds a lookup it needs missing (the status turned final in
// this very pass), it acts on nothing that depends on it and looks again
// within kPollForLookup.
struct Lookups {
  bool baseline = false;
  bool newest_pass = false;
  std::optional<TargetRequest> target;
};
Lookups lookups_for(const Observation& observed, const OperatorConfig& config);
inline constexpr std::chrono::milliseconds kPollForLookup{1000};

ReconcilePlan plan(const Observation& observed, const OperatorConfig& config);

// What is left at `now` of a plan's requeue_after, which counts from when the
// pass observed (`observed_at`). A pass over 1,000 workers' results takes a
// good part of a second; adding the delay after it would put the look at a
// run's planned end that much late.
std::chrono::milliseconds requeue_delay(std::chrono::milliseconds requeue_after,
                                        Timestamp observed_at, Timestamp now);

// How many actions from `first` on are calls to workers of one kind in a row
// (StartWorker, or FinishWorker): the executor makes those concurrently, as
// they are independent of each other. 0 when actions[first] is neither.
std::size_t worker_calls_at(const std::vector<Action>& actions, std::size_t first);

}  // namespace kubeload::controller
