#pragma once
// What one reconcile pass observed of a LoadTest, parsed once into typed
// values: the LoadTest, its Job and pods, the kept results, the workers'
// answers, what lookups_for() asked to be read, and the clock. plan() reads
// nothing else (reconcile_plan.hpp); compute_status reads it too
// (status.hpp).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/loadtest_result.hpp"
#include "kubeload/spec.hpp"
#include "operator/config_map_refs.hpp"
#include "operator/secret_consent.hpp"
#include "operator/shared_target.hpp"
#include "operator/target_destinations.hpp"
#include "operator/target_usage.hpp"
#include "operator/timestamp.hpp"
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
  // The worker's clock in its answer (unix ms) and the operator's when the
  // answer arrived: their difference is how far the worker's clock is off.
  std::optional<int64_t> clock_ms;
  std::optional<Timestamp> answered_at;
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
  enum class Object { Job, NetworkPolicy, TokenSecret, SpecConfigMap };
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
  api::LoadTest loadtest;      // as the API returns it (fresh read, not the cache)
  ParsedLoadTest parsed;       // parse_loadtest(loadtest.spec)
  std::optional<JobView> job;  // the Job of the worker Job's name, whoever owns it
  std::vector<PodView> pods;   // pods labelled with the LoadTest's name (any incarnation)
  // The results ConfigMap as read (the running merge of the final results
  // kept so far, see kept_merge); unset when there is none yet.
  std::optional<ConfigMapView> kept_results;
  PassAnswers answers;  // the workers asked this pass (see begin_pass)
  // Since when each worker has not answered (kept by the executor across
  // passes; a restart starts the clock over, which only delays the verdict).
  std::map<uint32_t, Timestamp> unreachable_since;
  // The API server's refusal (a 4xx that a retry would not fix: a quota, an
  // admission webhook, Kyverno, Gatekeeper) of an object the run needs,
  // remembered by the executor from the pass that tried. A refusal is a
  // status, not a retry: nothing else would ever end the run.
  std::optional<CreateRefusal> create_refused;
  // The API server's refusal of the run's LoadTestResult record (the CRD not
  // installed, a quota), remembered the same way: the final status is
  // written without it, and the LoadTest, the only copy, is kept.
  std::optional<std::string> record_refused;
  // This process pruned the test's records after this run's record was
  // written (remembered by the executor; a restart prunes once more).
  bool history_pruned = false;
  // What observe() read because lookups_for() said this pass needs it:
  // the records the baseline compares with (spec.baseline), newest first ...
  bool baseline_looked_up = false;
  std::vector<api::LoadTestResult> baseline_records;
  // ... once the run's record is written: its test's records and the ones
  // the namespace's baselines point at (retention, test_history.hpp) ...
  bool history_looked_up = false;
  std::vector<api::LoadTestResult> history;
  std::set<std::string> pinned_records;
  // ... the target Service and its endpoints, before the Job is created
  // (target_destinations.hpp) ...
  bool target_service_looked_up = false;
  std::optional<TargetServiceView> target_service;
  // ... the metadata of the Secrets the spec names (headersFrom, caFrom), by
  // name, before the Job is created: whether their owners consent
  // (secret_consent.hpp) ...
  bool secrets_looked_up = false;
  std::map<std::string, SecretMetadataView> secrets;
  // ... the ConfigMaps whose keys the worker pods mount (spec.data,
  // caFrom), by name, at the same time: whether each key is there
  // (config_map_refs.hpp) ...
  bool config_maps_looked_up = false;
  std::map<std::string, ConfigMapKeysView> config_maps;
  // ... the target's resource use ...
  std::optional<TargetMeasurement> target_measurement;
  // ... and, once the run ended (or all its results are in), the other
  // LoadTests of the operator's watch cache: whether they loaded the same
  // target meanwhile (shared_target.hpp).
  bool other_runs_looked_up = false;
  std::vector<OtherRun> other_runs;
  Timestamp now;
};

// The Job and pods of this incarnation of the LoadTest: the Job whose
// controller is the LoadTest's uid, the pods whose controller is that Job.
// Never by name or labels alone.
std::optional<JobView> own_job(const Observation& observed);
std::vector<PodView> own_pods(const Observation& observed);

}  // namespace kubeload::controller
