#pragma once
// Reconcile(namespace, name): observe -> plan -> act. observe() reads the
// world fresh (the LoadTest from the API server, its Job and pods from the
// watch caches, the kept results, the workers' /result answers) into an
// Observation; plan() (reconcile_plan.hpp) decides everything; act() does
// the I/O, in order, stopping at the first failure. Level-triggered and
// idempotent: every fact the plan needs lives in the cluster (the Job, its
// start-at annotation, the results ConfigMap, the workers' answers).

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "operator/byte_budget.hpp"
#include "operator/config.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/list_watch.hpp"
#include "operator/log.hpp"
#include "operator/operator_metrics.hpp"
#include "operator/prometheus_client.hpp"
#include "operator/reconcile_plan.hpp"
#include "operator/status.hpp"
#include "operator/worker_client.hpp"
#include "operator/worker_results.hpp"

namespace kubeload::controller {

// The LoadTest a Job or worker Pod belongs to ("namespace/name"), if any: a
// Job through its owner reference, a Pod through its Job's (looked up in
// `jobs`; a Job needs no cache, so null is fine there).
std::optional<std::string> owning_loadtest(const nlohmann::json& object,
                                           const kube::ListWatch* jobs);

// The experiment or capacity search ("namespace/name") whose round or step
// this LoadTest event is, when it is one that changes it: the LoadTest's
// creation, its end (a final phase) or its deletion.
std::optional<std::string> experiment_to_wake(kube::WatchEventType type,
                                              const nlohmann::json& loadtest);

// A merge patch of the status subresource that turns `current` into `next`:
// keys that disappear are set to null (RFC 7386), everything else is
// replaced wholesale. The resourceVersion makes it conditional: 409 when the
// object changed since the status was computed.
nlohmann::json status_patch(const nlohmann::json& current, const nlohmann::json& next,
                            const std::string& resource_version);

struct ReconcileOutcome {
  std::optional<std::chrono::milliseconds> requeue_after;
};

class Reconciler {
 public:
  using ClockFn = std::function<Timestamp()>;
  // Whether this replica may still write (the leader elector's verdict);
  // checked before every action, so a replica that lost its lease stops
  // mid-reconcile.
  using MayActFn = std::function<bool()>;

  // `loadtests` is the LoadTest watch cache (with each run's startTime,
  // completionTime and status.target): the other runs a run may have shared
  // its target with.
  Reconciler(kube::Client& client, const kube::ListWatch& loadtests, const kube::ListWatch& jobs,
             const kube::ListWatch& pods, OperatorConfig config, const WorkerClient& workers,
             Logger& log, OperatorMetrics& metrics, ClockFn clock, MayActFn may_act = {});

  // Throws on transient failures (the API server did not answer, a write
  // conflicted): the caller retries with backoff.
  ReconcileOutcome reconcile(const std::string& namespace_, const std::string& name);

 private:
  std::optional<Observation> observe(const std::string& namespace_, const std::string& name);
  // A LoadTest with spec.variants (experiment_plan.hpp) or spec.search
  // (search_plan.hpp): its rounds or steps are LoadTests of their own,
  // listed here; no Job, no workers.
  ReconcileOutcome reconcile_experiment(const Observation& observed);
  void ask_workers(const std::string& key, Observation& observed);
  // Runs the actions in order. Returns false when it stopped at a refused
  // create (remembered for the next pass, which fails the run with it).
  bool act(const ReconcilePlan& plan, Observation& observed);
  // StartWorker or FinishWorker calls, up to --worker-calls in flight.
  void call_workers(std::span<const Action> calls, const std::string& uid,
                    const std::string& where);
  // The lookups lookups_for() asks observe() for.
  void look_up_baseline(Observation& observed);
  // The run's test's records and the namespace's LoadTests (what their
  // baselines point at), for retention.
  void look_up_history(Observation& observed);
  // The target pods (by the Service's selector or spec.target.podSelector)
  // and their resource use from Prometheus, into observed.target_measurement.
  void measure_target(const TargetRequest& request, Observation& observed);
  // The Service the target names and its EndpointSlices, into
  // observed.target_service.
  void look_up_target_service(const ClusterHost& host, Observation& observed);
  // The metadata (never the data) of the Secrets the spec names, into
  // observed.secrets: 403 is recorded as unreadable, 404 as not found.
  void look_up_secrets(const std::set<std::string>& names, Observation& observed);
  void look_up_config_maps(const std::set<std::string>& names, Observation& observed);
  // The other LoadTests as the watch cache holds them, into
  // observed.other_runs.
  void look_up_other_runs(Observation& observed);
  // A worker of the LoadTest with this uid, with the run's token.
  WorkerAddress worker_address(const std::string& ip, const std::string& uid) const;

  kube::Client& client_;
  const kube::ListWatch& loadtests_;
  const kube::ListWatch& jobs_;
  const kube::ListWatch& pods_;
  const OperatorConfig config_;
  const WorkerClient& workers_;
  Logger& log_;
  OperatorMetrics& metrics_;
  ClockFn clock_;
  MayActFn may_act_;
  std::optional<PrometheusClient> prometheus_;  // set with --prometheus-url
  // What the /result answers in flight may hold, shared by every reconcile.
  ByteBudget result_budget_;
  // Memory across passes, not decisions (an operator restarted without it
  // only decides later): since when each worker of each run (by uid) has not
  // answered, and the API server's refusal of an object a run needs.
  std::mutex memory_mutex_;
  std::map<std::string, std::map<uint32_t, Timestamp>> unreachable_since_;
  std::map<std::string, CreateRefusal> create_refused_;
  // By experiment (or search) uid: the API server's refusal of a round's (a step's) LoadTest.
  std::map<std::string, std::string> round_refused_;
  // By LoadTest key (namespace/name), for the incarnation of that uid: the
  // refusal of its record, and that its test's records were pruned after it.
  // Forgotten when the LoadTest goes.
  struct RecordMemory {
    std::string uid;
    std::optional<std::string> refused;
    bool pruned = false;
  };
  std::map<std::string, RecordMemory> records_;
};

}  // namespace kubeload::controller
