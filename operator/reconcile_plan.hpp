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
#include "operator/observation.hpp"
#include "operator/run_timing.hpp"
#include "operator/status.hpp"
#include "operator/target_usage.hpp"
#include "operator/views.hpp"
#include "operator/worker_results.hpp"

namespace kubeload::controller {

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
// The ConfigMap that hands the workers their manifest, before the Job so
// its pods never wait for it (409: it exists, made from the same spec).
struct CreateSpecConfigMap {
  nlohmann::json config_map;
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
  api::LoadTestStatus status;
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
// Writes the run's LoadTestResult record (result_record.hpp), before the
// status that names it; one that exists (409) is the same record.
struct CreateResultRecord {
  api::LoadTestResult record;
};
// Brings the record's copy of the final status up to date (the target's
// resource use arrives after the run ended).
struct UpdateResultRecord {
  std::string name;
  api::LoadTestStatus run;
};
// Deletes a test's records past its history limits (test_history.hpp); the
// executor remembers the run's history as pruned.
struct PruneResultRecords {
  std::vector<std::string> names;
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
// The GitOps tool that applied a LoadTest, from the labels and annotations
// Flux and Argo CD put on what they apply ("Flux (label
// kustomize.toolkit.fluxcd.io/name)"); nullopt: none seen. Such a LoadTest
// is not deleted by its TTL: the tool would apply it again, a run nobody planned.
std::optional<std::string> applied_by_gitops(const api::ObjectMeta& meta);
// spec.ttlSecondsAfterFinished ran out: the LoadTest goes (only this uid).
struct DeleteLoadTest {
  std::string name;
  std::string uid;
};

using Action = std::variant<CreateNetworkPolicy, CreateTokenSecret, CreateSpecConfigMap, CreateJob,
                            RecordStartAt, StartWorker, KeepResults, FinishWorker, WriteStatus,
                            RecordEvent, CreateResultRecord, UpdateResultRecord, PruneResultRecords,
                            DeleteJob, EndJob, DeleteLoadTest>;

struct ReconcilePlan {
  api::LoadTestStatus status;  // what the status is now (written by a WriteStatus when it changed)
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
// The results ConfigMap of the run's name is not controlled by this
// LoadTest (made by someone else): nothing of it is read, the run fails
// ObjectNameTaken.
bool kept_results_taken(const Observation& observed);
// The keys of a results ConfigMap written before the running merge (one
// final document per worker, "worker-<index>"): kept_merge() reads them, so a
// run in flight across an operator upgrade keeps its results, and the next
// write removes them.
std::vector<std::string> legacy_result_keys(const nlohmann::json& config_map_data);
// The workers plan() wants /result from in this pass (index -> pod IP).
std::map<uint32_t, std::string> workers_to_ask(const Observation& observed);
// Until when this pass's /result calls may wait for a worker's final result
// (GET /result?wait=), or nullopt to take what each worker has now: from just
// before a time-bounded run's planned end, so that each final result arrives
// (and is folded) as its worker ends rather than at the next poll.
std::optional<Timestamp> result_wait_until(const Observation& observed);
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
// (kept, or folded in this pass), the test's records and what baselines pin
// once the run's record is written (retention), the target's resource use once a final run's window
// is three scrapes behind (plan_target_usage). Read from the status as stored; when plan() finds a
// lookup it needs missing (the status turned final in this very pass), it acts on nothing that
// depends on it and looks again within kPollForLookup.
struct Lookups {
  bool baseline = false;
  bool history = false;
  // The Service the target may be, while the run's objects are still to be
  // created: plan() decides where the run's traffic goes before any exists.
  std::optional<ClusterHost> target_service;
  // The Secrets the spec names, at the same time: the metadata of each, for
  // their owners' consent (secret_consent.hpp).
  std::set<std::string> secrets;
  // And the ConfigMaps whose keys it mounts into the worker pods: whether
  // each is there (config_map_refs.hpp).
  std::set<std::string> config_maps;
  std::optional<TargetRequest> target;
  // The other runs, to decide whether they shared the target
  // (plan_shared_target), from the LoadTest watch cache.
  bool other_runs = false;
};
Lookups lookups_for(const Observation& observed, const OperatorConfig& config);
inline constexpr std::chrono::milliseconds kPollForLookup{1000};
// How far a worker's clock may be off the operator's: the start barrier is
// kStartLead ahead, and a worker off by more starts out of step.
inline constexpr std::chrono::milliseconds kMaxWorkerClockOffset{10000};

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
