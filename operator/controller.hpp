#pragma once
// Reconcile(namespace, name): read the world fresh, act (create the worker
// Job, start the workers together, collect their results, clean up), and
// write the status that compute_status derives from what was observed.
// Level-triggered and idempotent: any step may be repeated after a crash or
// restart with the same outcome, because every fact it needs lives in the
// cluster (the Job, its start-at annotation, the workers' results).

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "operator/config.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/list_watch.hpp"
#include "operator/log.hpp"
#include "operator/operator_metrics.hpp"
#include "operator/status.hpp"
#include "operator/worker_client.hpp"

namespace kubeload::controller {

// The Job annotation holding the barrier's wall time (unix ms): the one fact
// about the start that is not visible otherwise.
inline constexpr std::string_view kStartAtAnnotation = "kubeload.dev/start-at";
inline constexpr std::string_view kCompletionIndexAnnotation =
    "batch.kubernetes.io/job-completion-index";

// The LoadTest a Job or worker Pod belongs to ("namespace/name"), if any: a
// Job through its owner reference, a Pod through its Job's (looked up in
// `jobs`; a Job needs no cache, so null is fine there).
std::optional<std::string> owning_loadtest(const nlohmann::json& object,
                                           const kube::ListWatch* jobs);

struct ReconcileOutcome {
  std::optional<std::chrono::milliseconds> requeue_after;
};

class Reconciler {
 public:
  using ClockFn = std::function<Timestamp()>;

  Reconciler(kube::Client& client, const kube::ListWatch& jobs, const kube::ListWatch& pods,
             OperatorConfig config, const WorkerClient& workers, Logger& log,
             OperatorMetrics& metrics, ClockFn clock);

  // Throws on transient failures (the API server did not answer): the caller
  // retries with backoff.
  ReconcileOutcome reconcile(const std::string& namespace_, const std::string& name);

 private:
  std::vector<nlohmann::json> worker_pods(const std::string& namespace_,
                                          const std::string& name) const;
  std::optional<nlohmann::json> ensure_job(const nlohmann::json& loadtest,
                                           const LoadTestSpec& spec);
  std::optional<Timestamp> start_workers(const nlohmann::json& job,
                                         const std::vector<nlohmann::json>& pods, uint32_t workers);
  void collect_results(const std::vector<nlohmann::json>& pods, Observed& observed);
  void finish_workers(const nlohmann::json& loadtest, const std::vector<nlohmann::json>& pods);
  // The run's worker token (worker_token of the LoadTest's UID under the operator's key).
  std::string worker_token_of(const nlohmann::json& loadtest) const;
  void clean_up(const nlohmann::json& loadtest, const LoadTestSpec& spec,
                const nlohmann::json& status, const std::optional<nlohmann::json>& job);
  void write_status(const nlohmann::json& loadtest, const nlohmann::json& status);
  void find_baseline(const LoadTestSpec& spec, const nlohmann::json& loadtest, Observed& observed);

  kube::Client& client_;
  const kube::ListWatch& jobs_;
  const kube::ListWatch& pods_;
  const OperatorConfig config_;
  const WorkerClient& workers_;
  Logger& log_;
  OperatorMetrics& metrics_;
  ClockFn clock_;
};

}  // namespace kubeload::controller
