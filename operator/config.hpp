#pragma once
// What the operator is told at startup (flags) that shapes the objects it
// creates. One value, passed down explicitly: the builders read nothing else.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kubeload::controller {

// The admin's policy for a test's LoadTestResult records (--history-keep,
// --history-max-keep, --history-max-age, --history-max-age-limit; per
// namespace --history-namespace).
struct HistoryPolicy {
  uint32_t keep = 50;        // the newest records kept when spec.history.keep is unset
  uint32_t max_keep = 1000;  // the most spec.history.keep may ask
  // Records younger than this are kept too when spec.history.maxAge is unset.
  std::optional<std::chrono::nanoseconds> max_age;
  // The longest spec.history.maxAge may ask; unset: no limit.
  std::optional<std::chrono::nanoseconds> max_age_limit;
  bool operator==(const HistoryPolicy&) const = default;
};

struct OperatorConfig {
  // The loadgen image for worker pods unless a LoadTest's
  // spec.workerTemplate.image names another (--loadgen-image).
  std::string loadgen_image;
  // The other images spec.workerTemplate.image may name
  // (--allowed-worker-images); a LoadTest naming any other fails with
  // PolicyViolation. Whatever the image, the operator sets the container's
  // command (kWorkerCommand), so an allowed image runs loadgen, nothing else.
  std::vector<std::string> allowed_worker_images;
  std::string image_pull_policy = "IfNotPresent";
  // The port each worker serves /healthz, /start, /result and /metrics on.
  uint16_t worker_port = 8080;
  // NetworkPolicy `from` peers that may reach a run's workers on worker_port
  // (--worker-network-policy-from): the operator's pods and the metrics
  // scrapers. An array: every run gets a NetworkPolicy of its own, created
  // before its Job and owned by its LoadTest, so workers in any namespace are
  // closed to the rest of the cluster. null: none.
  nlohmann::json worker_ingress_from;
  // Empty: the namespace's default service account. Workers never talk to
  // the API server (the token is not mounted); this only matters for
  // imagePullSecrets and admission policies bound to a service account.
  std::string service_account;
  // Event-loop threads per worker (loadgen -t). Unset: derived from the
  // worker's CPU limit (or request) when there is one, else loadgen's own
  // default, the node's core count, which oversubscribes a CPU-limited pod.
  std::optional<uint32_t> worker_threads;
  // The worker container's resources when spec.workerTemplate.resources is
  // unset or empty (--worker-default-requests, --worker-default-limits): a
  // worker without requests lands anywhere and is evicted first, one without
  // limits may take a whole node. Resource name -> quantity, as Kubernetes
  // writes them.
  std::map<std::string, std::string> worker_default_requests{{"cpu", "250m"}, {"memory", "128Mi"}};
  std::map<std::string, std::string> worker_default_limits{{"cpu", "1"}, {"memory", "512Mi"}};
  // The admin's ceilings per LoadTest (--max-workers, --max-rate,
  // --max-connections, --max-duration); unset: none. A LoadTest above one
  // fails before anything is created (PolicyViolation, naming the value).
  std::optional<uint32_t> max_workers;
  std::optional<double> max_rate;  // requests/s, all workers together
  std::optional<uint64_t> max_connections;
  std::optional<std::chrono::nanoseconds> max_duration;
  // How many LoadTestResult records of a test are kept: `history` unless the
  // namespace has its own policy.
  HistoryPolicy history;
  std::map<std::string, HistoryPolicy> namespace_history;
  const HistoryPolicy& history_policy(const std::string& namespace_) const {
    const auto own = namespace_history.find(namespace_);
    return own == namespace_history.end() ? history : own->second;
  }
  // The scheduling fields of spec.workerTemplate a LoadTest may set
  // (--worker-scheduling-overrides): nodeSelector, tolerations, affinity.
  std::set<std::string> worker_scheduling_overrides{"affinity", "nodeSelector", "tolerations"};
  // Whether they may put workers onto control-plane nodes (tolerate their
  // taint, select their label); never by default (--allow-control-plane-workers).
  bool allow_control_plane_workers = false;
  // The key every run's worker token is derived from (worker_token): the same
  // for every replica and across restarts (worker_token_key.hpp says where it
  // comes from).
  std::string worker_token_key;
  // The admin's target policy, passed to every worker (loadgen worker
  // --guard-targets --deny-cidr ... --allow-cidr ...): ranges denied on top of
  // the defaults (link-local and cloud metadata, loopback, unspecified), the API
  // server's addresses among them, and, when not empty, the only ranges allowed.
  std::vector<std::string> target_deny_cidrs;
  std::vector<std::string> target_allow_cidrs;
  // Whether spec.target.service may name a Service of another namespace
  // (--allow-other-namespace-services); never by default. A url target is
  // decided by its address, like any other.
  bool allow_other_namespace_services = false;
  // Host names refused before they resolve (--target-deny-host; loadgen
  // worker --deny-host): what the chart's policy.targets.denyHosts lists.
  std::vector<std::string> target_deny_hosts;
  // The cluster's own ranges (--cluster-cidr: pods, Services, and nodes if
  // the admin lists them). An address in one is a load target only when the
  // operator decided it: the target Service's cluster IPs and endpoints
  // (target_destinations.hpp). Empty: the workers decide cluster addresses by
  // the deny and allow lists alone.
  std::vector<std::string> cluster_cidrs;
  // The cluster's DNS domain (--cluster-domain), for telling Service names.
  std::string cluster_domain = "cluster.local";
  // NetworkPolicy `to` peers the workers resolve names with
  // (--worker-egress-dns-to), on port 53: with them, each run's NetworkPolicy
  // also limits the workers' egress (the target's pods, DNS, and outside the
  // cluster what the deny and allow lists allow). null: no egress rules.
  nlohmann::json worker_egress_dns_to;
  // A started run whose worker has not answered on worker_port for this long
  // fails with WorkersUnreachable (--worker-unreachable-timeout).
  std::chrono::seconds worker_unreachable_timeout{60};
  // GET /result calls a reconcile has in flight at once (--worker-calls):
  // a pass over many workers takes about one call's time, not the sum.
  uint32_t worker_calls_in_flight = 32;
  // Memory the /result answers in flight may take, all reconciles together
  // (--worker-result-budget, byte_budget.hpp).
  std::size_t worker_result_budget_bytes = std::size_t{256} * 1024 * 1024;
  // ttlSecondsAfterFinished of a worker Job the cleanup policy keeps (a
  // failed run's, under OnSuccess): kept to look into, not forever.
  int64_t kept_job_ttl_seconds = 24 * 3600;
  // The Prometheus the target's resource use is read from after each run
  // (--prometheus-url, status.target); empty: not read.
  std::string prometheus_url;
  // How often that Prometheus scrapes the kubelets' cAdvisor
  // (--prometheus-scrape-interval): it sizes the rate windows and how long
  // after a run the operator waits for the last samples.
  std::chrono::seconds prometheus_scrape_interval{30};
};

}  // namespace kubeload::controller
