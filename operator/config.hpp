#pragma once
// What the operator is told at startup (flags) that shapes the objects it
// creates. One value, passed down explicitly: the builders read nothing else.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace kubeload::controller {

struct OperatorConfig {
  // The loadgen image for worker pods unless a LoadTest's
  // spec.workerTemplate.image names another (--loadgen-image).
  std::string loadgen_image;
  std::string image_pull_policy = "IfNotPresent";
  // The port each worker serves /healthz, /start, /result and /metrics on.
  uint16_t worker_port = 8080;
  // Empty: the namespace's default service account. Workers never talk to
  // the API server (the token is not mounted); this only matters for
  // imagePullSecrets and admission policies bound to a service account.
  std::string service_account;
  // Event-loop threads per worker (loadgen -t). Unset: derived from the
  // worker's CPU limit (or request) when there is one, else loadgen's own
  // default, the node's core count, which oversubscribes a CPU-limited pod.
  std::optional<uint32_t> worker_threads;
  // A started run whose worker has not answered on worker_port for this long
  // fails with WorkersUnreachable (--worker-unreachable-timeout).
  std::chrono::seconds worker_unreachable_timeout{60};
  // GET /result calls a reconcile has in flight at once (--worker-calls):
  // a pass over many workers takes about one call's time, not the sum.
  uint32_t worker_calls_in_flight = 32;
  // ttlSecondsAfterFinished of a worker Job the cleanup policy keeps (a
  // failed run's, under OnSuccess): kept to look into, not forever.
  int64_t kept_job_ttl_seconds = 24 * 3600;
};

}  // namespace kubeload::controller
