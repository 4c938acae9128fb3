// kubeload-operator: watches LoadTests (and the Jobs and Pods it makes for
// them) and reconciles each one. Flags in usage() below.

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cpprest/http_listener.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include "kubeload/api/meta.hpp"
#include "kubeload/duration.hpp"
#include "kubeload/names.hpp"
#include "kubeload/target_policy.hpp"
#include "operator/api_server_addresses.hpp"
#include "operator/controller.hpp"
#include "operator/event_filter.hpp"
#include "operator/leader_election.hpp"
#include "operator/prometheus_client.hpp"
#include "operator/schedule_controller.hpp"
#include "operator/work_queue.hpp"
#include "operator/worker_token_key.hpp"

namespace kc = kubeload::controller;
namespace kube = kubeload::kube;

namespace {

constexpr const char* kUsage = R"(usage: kubeload-operator --loadgen-image IMAGE [options]
  --kubeconfig PATH        kubeconfig (default: $KUBECONFIG, its files merged, else in-cluster,
                           else ~/.kube/config); exec credential plugins, proxy-url and
                           HTTPS_PROXY/NO_PROXY work as in kubectl
  --namespace NS           watch one namespace (default: all)
  --loadgen-image IMAGE    the worker image (required)
  --allowed-worker-images LIST  other images spec.workerTemplate.image may name, comma-separated
                           (default: none; the operator always runs /usr/local/bin/loadgen in them)
  --metrics-addr ADDR      Prometheus metrics (default 0.0.0.0:8080)
  --health-addr ADDR       /healthz and /readyz (default 0.0.0.0:8081)
  --leader-elect           only the holder of the Lease reconciles
  --leader-election-namespace NS   where the Lease lives (default: --namespace or "default")
  --concurrency N          reconciles in parallel (default 2)
  --worker-threads N       loadgen threads per worker pod (default: from its CPU limit)
  --worker-calls N         worker /result calls in flight per reconcile (default 32)
  --worker-result-budget MIB  memory the /result answers in flight may take, all reconciles
                           together (default 256); each call reserves what its answer's length
                           says it will take before it reads it, and waits while the budget is taken
  --resync-period DURATION reconcile every LoadTest this often even without events (default 10m)
  --target-deny-cidr CIDR  refuse load to this range too (repeatable); always denied: link-local
                           (cloud metadata), loopback, unspecified, and the API server's addresses
  --target-allow-cidr CIDR load only to these ranges (repeatable; default: anywhere not denied)
  --allow-other-namespace-services  let a target (spec.target.service, or a url naming a
                           Service or pod) be of another namespace (default: the LoadTest's own)
  --target-deny-host NAME  refuse load to this host name (repeatable; any case, with or without
                           the final dot); its addresses are decided by the rules above too
  --cluster-cidr CIDR      the cluster's own range: pods, Services, nodes (repeatable). An
                           address in one is a target only as the Service a LoadTest names (its
                           cluster IPs and endpoints, each decided); default: none given
  --cluster-domain DOMAIN  the cluster's DNS domain, for telling Service names (default
                           cluster.local)
  --deny-service NS/NAME   deny this Service's cluster IPs and endpoints as targets, read at
                           start (repeatable; the chart names the operator's metrics Service);
                           the operator's own pod (POD_IP) is always denied
  --worker-egress-dns-to JSON  the NetworkPolicy peers (a JSON list) of the cluster's DNS: with
                           it, each run's NetworkPolicy also limits its workers' egress to DNS,
                           the target Service's pods and, outside --cluster-cidr, what the
                           target rules allow (default: no egress rules)
  --worker-token-key-secret NAME  the Secret (its data.key) holding the key each run's worker
                           token is derived from; created with a random 32-byte key when missing,
                           so every replica and every restart uses the same one (default
                           kubeload-worker-token-key; the operator needs get and create on it)
  --worker-token-key-secret-namespace NS  where that Secret is (default: in a pod its service
                           account's namespace; on a host --namespace, else the kubeconfig
                           context's namespace)
  --worker-token-key-file PATH  read the key from this file instead (at least 16 bytes; wins
                           over the Secret); every replica must read the same one
  --worker-network-policy-from JSON  give each run a NetworkPolicy letting only these peers
                           (a JSON list of NetworkPolicy `from` entries: the operator's pods,
                           metrics scrapers) reach its workers' port (default: none)
  --worker-unreachable-timeout DURATION  fail a started run whose worker has not answered
                           on its port this long (WorkersUnreachable; default 60s)
  --worker-default-requests R=Q,...  worker requests when a LoadTest sets no resources
                           (default cpu=250m,memory=128Mi; "" for none)
  --worker-default-limits R=Q,...    worker limits when a LoadTest sets no resources
                           (default cpu=1,memory=512Mi; "" for none)
  --max-workers N          refuse LoadTests with more workers (PolicyViolation; default: no ceiling)
  --max-rate R             refuse a rate (requests/s, all workers) above R
  --max-connections N      refuse connections or maxConnections above N
  --max-duration DURATION  refuse runs planned longer (warm-up + duration or stages; for a run
                           bounded by requests, its run timeout)
  --history-keep N         LoadTestResult records kept per test: the newest N (default 50) ...
  --history-max-age DURATION  ... and all younger than this (default: none), always with the
                           ones baselines point at; spec.history sets its own within:
  --history-max-keep N     the most spec.history.keep may ask (default 1000; PolicyViolation)
  --history-max-age-limit DURATION  the longest spec.history.maxAge may ask (default: no limit)
  --history-namespace NS:keep=N,maxKeep=N,maxAge=D,maxAgeLimit=D  one namespace's own
                           history policy (repeatable; keys not given: the flags above)
  --worker-scheduling-overrides LIST  the workerTemplate fields LoadTests may set, of
                           nodeSelector,tolerations,affinity (default all three; "" for none)
  --allow-control-plane-workers  let those fields put workers onto control-plane nodes
  --prometheus-url URL     read each run's target pods' CPU, memory and restarts from this
                           Prometheus (cAdvisor series) into status.target (default: not read)
  --prometheus-scrape-interval DURATION  how often it scrapes the kubelets' cAdvisor
                           (default 30s): sizes the rate windows and the wait for the last samples
)";

struct Flags {
  std::string kubeconfig;
  std::string namespace_;
  std::string loadgen_image;
  std::string metrics_address = "0.0.0.0:8080";
  std::string health_address = "0.0.0.0:8081";
  bool leader_elect = false;
  std::string lease_namespace;
  unsigned concurrency = 2;
  std::optional<uint32_t> worker_threads;
  unsigned worker_calls = 32;
  std::chrono::nanoseconds resync_period = std::chrono::minutes(10);
  kc::WorkerTokenKeyFlags worker_token_key;
  std::vector<std::string> target_deny_cidrs;
  std::vector<std::string> target_allow_cidrs;
  std::chrono::seconds worker_unreachable_timeout{60};
  std::vector<std::pair<std::string, std::string>> deny_services;  // namespace, name
  // Worker defaults, ceilings and scheduling rules, straight into the config.
  kc::OperatorConfig limits;
};

// A flag's JSON list of NetworkPolicy peers (objects of podSelector,
// namespaceSelector, ipBlock), or invalid_argument naming the flag and value.
nlohmann::json network_policy_peers(const std::string& flag, const std::string& text) {
  const auto is_peer = [](const nlohmann::json& peer) {
    if (!peer.is_object() || peer.empty()) return false;
    for (const auto& [key, value] : peer.items()) {
      if ((key != "podSelector" && key != "namespaceSelector" && key != "ipBlock") ||
          !value.is_object()) {
        return false;
      }
    }
    return true;
  };
  nlohmann::json peers = nlohmann::json::parse(text, nullptr, false);
  if (!peers.is_array() || peers.empty() || !std::all_of(peers.begin(), peers.end(), is_peer)) {
    throw std::invalid_argument(flag +
                                ": a JSON list of NetworkPolicy peers (objects of podSelector, "
                                "namespaceSelector, ipBlock); got \"" +
                                text + "\"");
  }
  return peers;
}

// A flag's address or CIDR, or invalid_argument naming the flag and value.
std::string cidr_flag(const std::string& flag, const std::string& text) {
  if (!kubeload::Cidr::parse(text)) {
    throw std::invalid_argument(flag + ": not an address or CIDR: \"" + text + "\"");
  }
  return text;
}

// "cpu=250m,memory=128Mi" -> {cpu: 250m, memory: 128Mi}; "" -> none.
std::map<std::string, std::string> resource_list(const std::string& flag, const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size() ||
        item.find_first_of(" \t\"") != std::string::npos) {
      throw std::invalid_argument(
          flag + ": must be NAME=QUANTITY,... (e.g. cpu=1,memory=512Mi), got \"" + text + "\"");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

uint64_t ceiling(const std::string& flag, const std::string& text) {
  try {
    size_t used = 0;
    const unsigned long long value = std::stoull(text, &used);
    if (used == text.size() && value > 0 && text.find('-') == std::string::npos) return value;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(flag + ": must be a whole number > 0, got \"" + text + "\"");
}

std::chrono::nanoseconds positive_duration(const std::string& flag, const std::string& text) {
  const auto duration = kubeload::parse_duration(text);
  if (!duration || duration->count() <= 0) {
    throw std::invalid_argument(flag + ": must be a duration like 720h or 30m, got \"" + text +
                                "\"");
  }
  return *duration;
}

// One namespace's history policy: "NS:keep=N,maxKeep=N,maxAge=D,maxAgeLimit=D",
// the keys not given taken from `base` (the flags for every namespace).
std::pair<std::string, kc::HistoryPolicy> namespace_history(const std::string& flag,
                                                            const std::string& text,
                                                            kc::HistoryPolicy base) {
  const std::size_t colon = text.find(':');
  const std::string namespace_ = text.substr(0, colon);
  if (colon == std::string::npos || !kubeload::is_dns1123_label(namespace_)) {
    throw std::invalid_argument(flag +
                                ": must be NAMESPACE:keep=N,maxKeep=N,maxAge=D,"
                                "maxAgeLimit=D, got \"" +
                                text + "\"");
  }
  std::istringstream items(text.substr(colon + 1));
  for (std::string item; std::getline(items, item, ',');) {
    const std::size_t equals = item.find('=');
    const std::string key = item.substr(0, equals);
    const std::string value = equals == std::string::npos ? "" : item.substr(equals + 1);
    const std::string where = flag + " " + namespace_ + " " + key;
    if (key == "keep") {
      base.keep = static_cast<uint32_t>(std::min<uint64_t>(ceiling(where, value), 10000));
    } else if (key == "maxKeep") {
      base.max_keep = static_cast<uint32_t>(std::min<uint64_t>(ceiling(where, value), 10000));
    } else if (key == "maxAge") {
      base.max_age = positive_duration(where, value);
    } else if (key == "maxAgeLimit") {
      base.max_age_limit = positive_duration(where, value);
    } else {
      throw std::invalid_argument(flag + ": unknown key \"" + key + "\" in \"" + text +
                                  "\" (keep, maxKeep, maxAge, maxAgeLimit)");
    }
  }
  return {namespace_, base};
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "kubeload-operator: %s\n%s", message.c_str(), kUsage);
  return 2;
}

unsigned positive(const std::string& flag, const std::string& text) {
  try {
    size_t used = 0;
    const unsigned long value = std::stoul(text, &used);
    if (used == text.size() && value > 0 && value <= 1000) return static_cast<unsigned>(value);
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(flag + ": must be a number from 1 to 1000, got \"" + text + "\"");
}

Flags parse_flags(int argc, char** argv) {
  Flags flags;
  std::vector<std::string> history_namespaces;  // read over the other flags, in any order
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto next = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw std::invalid_argument(arg + ": missing value");
      return argv[++i];
    };
    if (arg == "--kubeconfig")
      flags.kubeconfig = next();
    else if (arg == "--namespace")
      flags.namespace_ = next();
    else if (arg == "--loadgen-image")
      flags.loadgen_image = next();
    else if (arg == "--metrics-addr")
      flags.metrics_address = next();
    else if (arg == "--health-addr")
      flags.health_address = next();
    else if (arg == "--leader-elect")
      flags.leader_elect = true;
    else if (arg == "--leader-election-namespace")
      flags.lease_namespace = next();
    else if (arg == "--concurrency")
      flags.concurrency = positive(arg, next());
    else if (arg == "--worker-threads")
      flags.worker_threads = positive(arg, next());
    else if (arg == "--worker-calls")
      flags.worker_calls = positive(arg, next());
    else if (arg == "--worker-result-budget")
      flags.limits.worker_result_budget_bytes =
          static_cast<std::size_t>(positive(arg, next())) * 1024 * 1024;
    else if (arg == "--resync-period") {
      const std::string text = next();
      const auto period = kubeload::parse_duration(text);
      if (!period || *period < std::chrono::seconds(1)) {
        throw std::invalid_argument(arg + ": must be a duration of at least 1s (e.g. 10m), got \"" +
                                    text + "\"");
      }
      flags.resync_period = *period;
    } else if (arg == "--target-deny-cidr" || arg == "--target-allow-cidr") {
      (arg == "--target-deny-cidr" ? flags.target_deny_cidrs : flags.target_allow_cidrs)
          .push_back(cidr_flag(arg, next()));
    } else if (arg == "--worker-network-policy-from") {
      flags.limits.worker_ingress_from = network_policy_peers(arg, next());
    } else if (arg == "--cluster-cidr") {
      flags.limits.cluster_cidrs.push_back(cidr_flag(arg, next()));
    } else if (arg == "--cluster-domain") {
      const std::string text = next();
      if (!kubeload::is_host_name(text) || text.front() == '.' || text.back() == '.') {
        throw std::invalid_argument(arg + ": not a DNS domain: \"" + text + "\"");
      }
      flags.limits.cluster_domain = text;
    } else if (arg == "--deny-service") {
      const std::string text = next();
      const auto slash = text.find('/');
      if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() ||
          text.find('/', slash + 1) != std::string::npos) {
        throw std::invalid_argument(arg + ": not NAMESPACE/NAME: \"" + text + "\"");
      }
      flags.deny_services.emplace_back(text.substr(0, slash), text.substr(slash + 1));
    } else if (arg == "--worker-egress-dns-to") {
      flags.limits.worker_egress_dns_to = network_policy_peers(arg, next());
    } else if (arg == "--allow-other-namespace-services") {
      flags.limits.allow_other_namespace_services = true;
    } else if (arg == "--target-deny-host") {
      const std::string text = next();
      if (!kubeload::is_host_name(text)) {
        throw std::invalid_argument(arg + ": not a host name: \"" + text + "\"");
      }
      flags.limits.target_deny_hosts.push_back(text);
    } else if (arg == "--worker-default-requests") {
      flags.limits.worker_default_requests = resource_list(arg, next());
    } else if (arg == "--worker-default-limits") {
      flags.limits.worker_default_limits = resource_list(arg, next());
    } else if (arg == "--max-workers") {
      const uint64_t value = ceiling(arg, next());
      if (value > 1000) throw std::invalid_argument(arg + ": at most 1000 (the CRD's own bound)");
      flags.limits.max_workers = static_cast<uint32_t>(value);
    } else if (arg == "--max-connections") {
      flags.limits.max_connections = ceiling(arg, next());
    } else if (arg == "--max-rate") {
      const std::string text = next();
      double value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc{} || end != text.data() + text.size() || !(value > 0) ||
          !std::isfinite(value)) {
        throw std::invalid_argument(arg + ": must be a number > 0 (requests/s), got \"" + text +
                                    "\"");
      }
      flags.limits.max_rate = value;
    } else if (arg == "--max-duration") {
      flags.limits.max_duration = positive_duration(arg, next());
    } else if (arg == "--history-keep") {
      flags.limits.history.keep =
          static_cast<uint32_t>(std::min<uint64_t>(ceiling(arg, next()), 10000));
    } else if (arg == "--history-max-keep") {
      flags.limits.history.max_keep =
          static_cast<uint32_t>(std::min<uint64_t>(ceiling(arg, next()), 10000));
    } else if (arg == "--history-max-age") {
      flags.limits.history.max_age = positive_duration(arg, next());
    } else if (arg == "--history-max-age-limit") {
      flags.limits.history.max_age_limit = positive_duration(arg, next());
    } else if (arg == "--history-namespace") {
      history_namespaces.push_back(next());
    } else if (arg == "--worker-scheduling-overrides") {
      const std::string text = next();
      flags.limits.worker_scheduling_overrides.clear();
      std::istringstream items(text);
      for (std::string item; std::getline(items, item, ',');) {
        if (item != "nodeSelector" && item != "tolerations" && item != "affinity") {
          throw std::invalid_argument(
              arg + ": a list of nodeSelector, tolerations, affinity; got \"" + item + "\"");
        }
        flags.limits.worker_scheduling_overrides.insert(item);
      }
    } else if (arg == "--allowed-worker-images") {
      const std::string text = next();
      flags.limits.allowed_worker_images.clear();
      std::istringstream items(text);
      for (std::string item; std::getline(items, item, ',');) {
        if (item.empty() || item.find_first_of(" \t\"'") != std::string::npos) {
          throw std::invalid_argument(arg + ": a comma-separated list of images; got \"" + item +
                                      "\" in \"" + text + "\"");
        }
        flags.limits.allowed_worker_images.push_back(item);
      }
    } else if (arg == "--prometheus-url") {
      const std::string text = next();
      if (const auto problem = kc::prometheus_url_problem(text)) {
        throw std::invalid_argument(arg + ": " + *problem);
      }
      flags.limits.prometheus_url = text;
    } else if (arg == "--prometheus-scrape-interval") {
      const std::string text = next();
      const auto interval = kubeload::parse_duration(text);
      if (!interval || *interval < std::chrono::seconds(1) || *interval > std::chrono::hours(1) ||
          *interval % std::chrono::seconds(1) != std::chrono::nanoseconds(0)) {
        throw std::invalid_argument(
            arg + ": must be whole seconds from 1s to 1h (e.g. 30s), got \"" + text + "\"");
      }
      flags.limits.prometheus_scrape_interval =
          std::chrono::duration_cast<std::chrono::seconds>(*interval);
    } else if (arg == "--allow-control-plane-workers") {
      flags.limits.allow_control_plane_workers = true;
    } else if (arg == "--worker-token-key-file") {
      flags.worker_token_key.file = next();
      if (flags.worker_token_key.file.empty()) throw std::invalid_argument(arg + ": empty path");
    } else if (arg == "--worker-token-key-secret") {
      flags.worker_token_key.secret = next();
      if (!kubeload::is_dns1123_subdomain(flags.worker_token_key.secret)) {
        throw std::invalid_argument(arg + ": not a Secret name: \"" +
                                    flags.worker_token_key.secret + "\"");
      }
    } else if (arg == "--worker-token-key-secret-namespace") {
      flags.worker_token_key.secret_namespace = next();
      if (!kubeload::is_dns1123_label(flags.worker_token_key.secret_namespace)) {
        throw std::invalid_argument(arg + ": not a namespace name: \"" +
                                    flags.worker_token_key.secret_namespace + "\"");
      }
    } else if (arg == "--worker-unreachable-timeout") {
      const std::string text = next();
      const auto timeout = kubeload::parse_duration(text);
      if (!timeout || *timeout < std::chrono::seconds(1)) {
        throw std::invalid_argument(arg + ": must be a duration of at least 1s (e.g. 60s), got \"" +
                                    text + "\"");
      }
      flags.worker_unreachable_timeout = std::chrono::duration_cast<std::chrono::seconds>(*timeout);
    } else if (arg == "-h" || arg == "--help")
      throw std::invalid_argument("");
    else
      throw std::invalid_argument("unknown flag \"" + arg + "\"");
  }
  if (flags.loadgen_image.empty()) throw std::invalid_argument("--loadgen-image is required");
  if (flags.lease_namespace.empty()) {
    flags.lease_namespace = flags.namespace_.empty() ? "default" : flags.namespace_;
  }
  for (const std::string& text : history_namespaces) {
    flags.limits.namespace_history.insert(
        namespace_history("--history-namespace", text, flags.limits.history));
  }
  return flags;
}

// Waits `wait` unless SIGINT or SIGTERM comes first (both are blocked, to be
// taken by sigwait in main); true when one came.
bool signalled_within(const sigset_t& signals, std::chrono::seconds wait) {
  const timespec timeout{static_cast<time_t>(wait.count()), 0};
  return sigtimedwait(&signals, nullptr, &timeout) > 0;
}

// The worker token key from its source: the file, or the Secret, read and,
// when missing, created (next_key_secret_step decides each step). Throws
// std::runtime_error with the message to stop on; nullopt when a signal
// came while the API server was unavailable.
std::optional<std::string> load_worker_token_key(kube::Client& client,
                                                 const kc::WorkerTokenKeySource& source,
                                                 kc::Logger& log, const sigset_t& signals) {
  if (!source.file.empty()) {
    std::ifstream file(source.file, std::ios::binary);
    std::ostringstream raw;
    raw << file.rdbuf();
    if (!file)
      throw std::runtime_error("--worker-token-key-file \"" + source.file + "\": cannot read");
    std::string key = kc::trim_worker_token_key(raw.str());
    if (auto problem =
            kc::worker_token_key_problem(key, "--worker-token-key-file \"" + source.file + "\"")) {
      throw std::runtime_error(*problem);
    }
    return key;
  }
  const kube::ResourceRef secrets = kube::resources::secrets(source.secret_namespace);
  auto call = kc::KeySecretCall::Get;
  // Get, create, get again after another replica's create: a few steps at
  // most, unless the Secret is deleted and made again under us all along.
  for (int step = 0; step < 8;) {
    kube::Response answer;
    try {
      if (call == kc::KeySecretCall::Get) {
        answer = client.get(secrets, source.secret_name);
      } else {
        std::array<unsigned char, 32> random_key{};
        if (RAND_bytes(random_key.data(), static_cast<int>(random_key.size())) != 1) {
          throw std::runtime_error("cannot generate a worker token key (RAND_bytes)");
        }
        answer = client.create(
            secrets, kc::build_worker_token_key_secret(
                         source, std::string_view(reinterpret_cast<const char*>(random_key.data()),
                                                  random_key.size())));
      }
    } catch (const kube::TransportError& e) {
      answer = kube::make_response(503, e.what());
    }
    const kc::KeySecretStep next = kc::next_key_secret_step(source, call, answer);
    switch (next.next) {
      case kc::KeySecretStep::Next::Use:
        log.info("worker token key",
                 {{"source", source.describe()}, {"created", call == kc::KeySecretCall::Create}});
        return next.key;
      case kc::KeySecretStep::Next::Fail:
        throw std::runtime_error(next.message);
      case kc::KeySecretStep::Next::Retry:
        log.warn("waiting for the API server to read the worker token key",
                 {{"secret", source.describe()}, {"error", next.message}});
        if (signalled_within(signals, std::chrono::seconds(2))) return std::nullopt;
        call = kc::KeySecretCall::Get;
        continue;  // not a step: the API server is away, not the Secret changing
      case kc::KeySecretStep::Next::Create:
        call = kc::KeySecretCall::Create;
        break;
      case kc::KeySecretStep::Next::GetAgain:
        log.info("another operator created the worker token key first; reading it",
                 {{"secret", source.describe()}});
        call = kc::KeySecretCall::Get;
        break;
    }
    ++step;
  }
  throw std::runtime_error(source.describe() +
                           " (the worker token key) was deleted and created again under the "
                           "operator's reads; start it again");
}

// The API server's addresses as pods reach it (the default/kubernetes
// Service's cluster IPs) and where it serves (that Service's EndpointSlices),
// whether this operator runs in a pod or not. What cannot be read (no RBAC)
// is logged and left out: the addresses from the kubeconfig and the
// environment are denied anyway.
// A Service's cluster IPs and its endpoints' addresses (its EndpointSlices).
// `what` names it in the warning when it cannot be read.
std::vector<std::string> read_service_addresses(kube::Client& client, const std::string& namespace_,
                                                const std::string& name, const std::string& what,
                                                kc::Logger& log) {
  std::vector<std::string> addresses;
  const auto warn = [&](const std::string& part, const std::string& error) {
    log.warn("cannot read " + part + " of " + what + " (" + namespace_ + "/" + name +
                 "); those addresses are not denied as targets",
             {{"error", error}});
  };
  try {
    const kube::Response service = client.get(kube::resources::services(namespace_), name);
    if (service.ok()) {
      for (auto& address : kc::kubernetes_service_addresses(service.body)) {
        addresses.push_back(std::move(address));
      }
    } else {
      warn("the Service (needs get on it)", service.describe());
    }
    kube::ListOptions options;
    options.label_selector = "kubernetes.io/service-name=" + name;
    const kube::Response slices = client.list(kube::resources::endpointslices(namespace_), options);
    if (slices.ok()) {
      for (auto& address : kc::endpoint_slice_addresses(slices.body)) {
        addresses.push_back(std::move(address));
      }
    } else {
      warn("the EndpointSlices (needs list on endpointslices there)", slices.describe());
    }
  } catch (const kube::TransportError& e) {
    warn("the Service and EndpointSlices", e.what());
  }
  return addresses;
}

// The API server as kube-public/cluster-info publishes it (readable by
// anyone on kubeadm clusters; absent on many others, which is no problem).
std::vector<std::string> read_cluster_info_servers(kube::Client& client, kc::Logger& log) {
  try {
    const kube::Response read =
        client.get(kube::resources::configmaps("kube-public"), "cluster-info");
    if (read.ok()) return kc::cluster_info_servers(read.body);
    if (!read.is_not_found()) {
      log.warn(
          "cannot read kube-public/cluster-info; the API server address it publishes is "
          "not denied as a target",
          {{"error", read.describe()}});
    }
  } catch (const kube::TransportError& e) {
    log.warn("cannot read kube-public/cluster-info", {{"error", e.what()}});
  }
  return {};
}

std::pair<std::string, std::string> split_key(const std::string& key) {
  const auto slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  try {
    flags = parse_flags(argc, argv);
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).empty()) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    return usage_error(e.what());
  }

  // Signals are taken by sigwait below, in an ordinary thread of control.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  kc::Logger log;
  kube::ClusterConfig cluster;
  try {
    cluster = kube::load_config(flags.kubeconfig);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  log.info("starting", {{"server", cluster.server},
                        {"config", cluster.source},
                        {"namespace", flags.namespace_.empty() ? "(all)" : flags.namespace_},
                        {"loadgenImage", flags.loadgen_image}});

  kube::Client client(cluster);
  const kc::WorkerTokenKeySource key_source = kc::choose_worker_token_key_source(
      flags.worker_token_key, kc::OperatorPlace{cluster.source == "in-cluster",
                                                cluster.default_namespace, flags.namespace_});
  if (key_source.secret_flag_ignored) {
    log.warn("--worker-token-key-file given: --worker-token-key-secret is not read",
             {{"file", key_source.file}});
  }
  std::string worker_token_key;
  try {
    auto key = load_worker_token_key(client, key_source, log, signals);
    if (!key) return 0;
    worker_token_key = std::move(*key);
  } catch (const std::runtime_error& e) {
    log.error("no worker token key", {{"error", e.what()}});
    return 1;
  }
  kc::OperatorMetrics metrics;
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(flags.metrics_address);
  } catch (const std::exception& e) {
    return usage_error("--metrics-addr \"" + flags.metrics_address + "\": " + e.what());
  }
  const std::shared_ptr<prometheus::Collectable> collectable = metrics.registry();
  exposer->RegisterCollectable(collectable);

  kc::WorkQueue queue;
  const std::string selector =
      std::string(kubeload::api::kManagedByLabel) + "=" + std::string(kubeload::api::kManagedBy);
  kube::ListWatchOptions loadtest_options;
  loadtest_options.resource = kube::resources::loadtests(flags.namespace_);
  // Keys, the event filter's metadata, the phase (a run's end wakes its
  // schedule: schedule_to_wake) and each run's window and target addresses
  // (whether runs shared a target: shared_target.hpp) are all this cache
  // serves: each reconcile reads its LoadTest fresh, so no spec (no request
  // body) and no result is held.
  loadtest_options.keep = kube::CacheKeep::metadata_and_status_fields;
  loadtest_options.status_fields = {"phase", "startTime", "completionTime", "target.addresses"};
  kc::LoadTestEventFilter loadtest_events;
  // LoadTestSchedules have a queue of their own, served by one thread: a
  // schedule's pass is one read, one list and a few writes, and apart from
  // the LoadTests' queue its keys (the same "namespace/name" form) never
  // meet a LoadTest's, nor wait behind a pass that calls a thousand workers.
  kc::WorkQueue schedule_queue;
  kube::ListWatch loadtests(client, loadtest_options,
                            [&](kube::WatchEventType type, const nlohmann::json& object) {
                              if (loadtest_events.should_reconcile(type, object)) {
                                queue.add(kube::object_key(object));
                              }
                              // A round of an experiment (a step of a search) started or ended: it
                              // goes on.
                              if (auto key = kc::experiment_to_wake(type, object)) queue.add(*key);
                              // A run of a schedule changed: its schedule's status follows.
                              if (auto key = kc::schedule_to_wake(type, object)) {
                                schedule_queue.add(*key);
                              }
                            });
  kube::ListWatchOptions schedule_options;
  schedule_options.resource = kube::resources::loadtestschedules(flags.namespace_);
  schedule_options.keep = kube::CacheKeep::metadata;
  kube::ListWatch schedules(client, schedule_options,
                            [&](kube::WatchEventType, const nlohmann::json& object) {
                              schedule_queue.add(kube::object_key(object));
                            });
  kube::ListWatchOptions job_options;
  job_options.resource = kube::resources::jobs(flags.namespace_);
  job_options.label_selector = selector;
  kube::ListWatch jobs(client, job_options,
                       [&](kube::WatchEventType, const nlohmann::json& object) {
                         if (auto key = kc::owning_loadtest(object, nullptr)) queue.add(*key);
                       });
  kube::ListWatchOptions pod_options;
  pod_options.resource = kube::resources::pods(flags.namespace_);
  pod_options.label_selector = selector;
  pod_options.keep = kube::CacheKeep::metadata_and_status;
  // Pod events come in bursts (a Job's 1,000 pods created, scheduled and
  // ready one by one). As the Job controller batches them
  // (syncJobBatchPeriod), the first schedules a pass and the rest of the
  // burst joins it: a burst costs a few passes, each a LoadTest read and
  // perhaps a status write, not one per event.
  constexpr std::chrono::milliseconds kPodEventBatch{500};
  kube::ListWatch pods(client, pod_options,
                       [&](kube::WatchEventType, const nlohmann::json& object) {
                         if (auto key = kc::owning_loadtest(object, &jobs)) {
                           queue.add_after(*key, kPodEventBatch);
                         }
                       });

  std::unique_ptr<kc::LeaderElector> elector;
  if (flags.leader_elect) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    elector = std::make_unique<kc::LeaderElector>(
        client,
        kc::LeaseOptions{flags.lease_namespace, "kubeload-operator",
                         std::string(host) + "_" + std::to_string(getpid())},
        log);
  }

  std::atomic<bool> synced(false);
  web::http::experimental::listener::http_listener health("http://" + flags.health_address);
  health.support(web::http::methods::GET, [&](const web::http::http_request& request) {
    const std::string path = request.relative_uri().path();
    if (path == "/healthz") return (void)request.reply(web::http::status_codes::OK, "ok\n");
    if (path == "/readyz") {
      const bool ready = synced.load();
      return (void)request.reply(
          ready ? web::http::status_codes::OK : web::http::status_codes::ServiceUnavailable,
          ready ? "ok\n" : "caches not synced\n");
    }
    request.reply(web::http::status_codes::NotFound, "no such path\n");
  });
  try {
    health.open().wait();
  } catch (const std::exception& e) {
    return usage_error("--health-addr \"" + flags.health_address + "\": " + e.what());
  }

  for (auto* watch : {&loadtests, &jobs, &pods}) {
    while (!watch->wait_until_synced(std::chrono::seconds(5))) {
      log.warn("waiting for the API server", {{"error", watch->last_error()}});
    }
  }
  synced.store(true);
  log.info("caches synced", {{"loadtests", loadtests.items().size()}});
  // Schedules do not hold the LoadTests up: a cluster upgraded by Helm,
  // which never upgrades a chart's CRDs, may lack the LoadTestSchedule CRD
  // until `kubectl apply -f crds/` (docs/deploy.md); its watch keeps trying.
  if (!schedules.wait_until_synced(std::chrono::seconds(5))) {
    log.warn("LoadTestSchedules are not watched yet: is the CRD installed?",
             {{"crd", std::string(kubeload::api::kSchedulePlural) + "." +
                          std::string(kubeload::api::kGroup)},
              {"error", schedules.last_error()}});
  }

  kc::OperatorConfig config = flags.limits;
  config.loadgen_image = flags.loadgen_image;
  config.worker_threads = flags.worker_threads;
  config.target_deny_cidrs = flags.target_deny_cidrs;
  config.target_allow_cidrs = flags.target_allow_cidrs;
  // The API server is never a target: its address as this operator reaches it,
  // the `kubernetes` Service's address that pods use, and where it serves.
  std::vector<std::string> api_server =
      read_service_addresses(client, "default", "kubernetes", "the API server", log);
  api_server.push_back(kc::api_server_host(cluster.server));
  if (const char* host = std::getenv("KUBERNETES_SERVICE_HOST")) api_server.emplace_back(host);
  for (std::string& host : read_cluster_info_servers(client, log)) {
    api_server.push_back(std::move(host));
  }
  // A name (a load balancer's, say) is denied as a name; its addresses are
  // whatever it resolves to then, decided by the rules like any other.
  for (const std::string& candidate : api_server) {
    if (!kubeload::Cidr::parse(candidate) && kubeload::is_host_name(candidate) &&
        std::find(config.target_deny_hosts.begin(), config.target_deny_hosts.end(), candidate) ==
            config.target_deny_hosts.end()) {
      config.target_deny_hosts.push_back(candidate);
    }
  }
  api_server = kc::address_deny_entries(api_server);
  log.info("the API server's addresses are denied as targets", {{"addresses", api_server}});
  config.target_deny_cidrs.insert(config.target_deny_cidrs.end(), api_server.begin(),
                                  api_server.end());
  // The operator itself: its pod (POD_IP, from the downward API) and the
  // Services in front of it (--deny-service: its metrics Service).
  std::vector<std::string> own;
  if (const char* pod_ip = std::getenv("POD_IP")) own.emplace_back(pod_ip);
  for (const auto& [namespace_, name] : flags.deny_services) {
    for (std::string& address :
         read_service_addresses(client, namespace_, name, "a --deny-service Service", log)) {
      own.push_back(std::move(address));
    }
  }
  own = kc::address_deny_entries(own);
  if (!own.empty())
    log.info("the operator's own addresses are denied as targets", {{"addresses", own}});
  config.target_deny_cidrs.insert(config.target_deny_cidrs.end(), own.begin(), own.end());
  config.worker_token_key = std::move(worker_token_key);
  config.worker_unreachable_timeout = flags.worker_unreachable_timeout;
  config.worker_calls_in_flight = flags.worker_calls;
  kc::WorkerClient worker_client;
  kc::Reconciler reconciler(
      client, loadtests, jobs, pods, config, worker_client, log, metrics,
      [] { return std::chrono::system_clock::now(); },
      [&elector] { return !elector || elector->leading(); });

  std::vector<std::thread> workers;
  for (unsigned i = 0; i < flags.concurrency; ++i) {
    workers.emplace_back([&] {
      while (auto key = queue.get()) {
        if (elector && !elector->leading()) {
          queue.done(*key);
          queue.add_after(*key, std::chrono::seconds(2));
          continue;
        }
        const auto [namespace_, name] = split_key(*key);
        const auto started = std::chrono::steady_clock::now();
        std::string result = "success";
        try {
          const kc::ReconcileOutcome outcome = reconciler.reconcile(namespace_, name);
          queue.forget(*key);
          if (outcome.requeue_after) {
            queue.add_after(*key, *outcome.requeue_after);
            result = "requeue";
          }
        } catch (const std::exception& e) {
          result = "error";
          log.error("reconcile failed", {{"loadtest", *key}, {"error", e.what()}});
          queue.add_rate_limited(*key);
        }
        queue.done(*key);
        metrics.observe_reconcile(
            result,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        metrics.set_queue_depth(static_cast<double>(queue.depth()));
      }
    });
  }

  kc::ScheduleReconciler schedule_reconciler(
      client, log, [] { return std::chrono::system_clock::now(); },
      [&elector] { return !elector || elector->leading(); });
  std::thread schedule_worker([&] {
    while (auto key = schedule_queue.get()) {
      if (elector && !elector->leading()) {
        schedule_queue.done(*key);
        schedule_queue.add_after(*key, std::chrono::seconds(2));
        continue;
      }
      const auto [namespace_, name] = split_key(*key);
      try {
        const kc::ReconcileOutcome outcome = schedule_reconciler.reconcile(namespace_, name);
        schedule_queue.forget(*key);
        if (outcome.requeue_after) schedule_queue.add_after(*key, *outcome.requeue_after);
      } catch (const std::exception& e) {
        log.error("schedule reconcile failed", {{"schedule", *key}, {"error", e.what()}});
        schedule_queue.add_rate_limited(*key);
      }
      schedule_queue.done(*key);
    }
  });

  // Level-triggered safety net, like controller-runtime's SyncPeriod: every
  // LoadTest and schedule is looked at again now and then, even when no
  // event arrived.
  std::jthread resync([&](std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any wake;
    std::unique_lock lock(mutex);
    while (!wake.wait_for(lock, stop, flags.resync_period, [&] { return stop.stop_requested(); })) {
      for (const auto& object : loadtests.items()) queue.add(kube::object_key(*object));
      for (const auto& object : schedules.items()) {
        schedule_queue.add(kube::object_key(*object));
      }
    }
  });

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  log.info("stopping", {{"signal", signal_number}});
  resync.request_stop();
  resync.join();
  queue.shut_down();
  schedule_queue.shut_down();
  for (auto& w : workers) w.join();
  schedule_worker.join();
  health.close().wait();
  return 0;
}
