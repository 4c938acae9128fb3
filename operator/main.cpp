// kubeload-operator: watches LoadTests (and the Jobs and Pods it makes for
// them) and reconciles each one. Flags in usage() below.

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cpprest/http_listener.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include "kubeload/duration.hpp"
#include "operator/controller.hpp"
#include "operator/event_filter.hpp"
#include "operator/leader_election.hpp"
#include "operator/work_queue.hpp"

namespace kc = kubeload::controller;
namespace kube = kubeload::kube;

namespace {

constexpr const char* kUsage = R"(usage: kubeload-operator --loadgen-image IMAGE [options]
  --kubeconfig PATH        kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster)
  --namespace NS           watch one namespace (default: all)
  --loadgen-image IMAGE    the worker image (required)
  --metrics-addr ADDR      Prometheus metrics (default 0.0.0.0:8080)
  --health-addr ADDR       /healthz and /readyz (default 0.0.0.0:8081)
  --leader-elect           only the holder of the Lease reconciles
  --leader-election-namespace NS   where the Lease lives (default: --namespace or "default")
  --concurrency N          reconciles in parallel (default 2)
  --worker-threads N       loadgen threads per worker pod (default: from its CPU limit)
  --worker-calls N         worker /result calls in flight per reconcile (default 32)
  --resync-period DURATION reconcile every LoadTest this often even without events (default 10m)
  --worker-unreachable-timeout DURATION  fail a started run whose worker has not answered
                           on its port this long (WorkersUnreachable; default 60s)
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
  std::chrono::seconds worker_unreachable_timeout{60};
};

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
    else if (arg == "--resync-period") {
      const std::string text = next();
      const auto period = kubeload::parse_duration(text);
      if (!period || *period < std::chrono::seconds(1)) {
        throw std::invalid_argument(arg + ": must be a duration of at least 1s (e.g. 10m), got \"" +
                                    text + "\"");
      }
      flags.resync_period = *period;
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
  return flags;
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
  const std::string selector = "app.kubernetes.io/managed-by=kubeload-operator";
  kube::ListWatchOptions loadtest_options;
  loadtest_options.resource = kube::resources::loadtests(flags.namespace_);
  kc::LoadTestEventFilter loadtest_events;
  kube::ListWatch loadtests(client, loadtest_options,
                            [&](kube::WatchEventType type, const nlohmann::json& object) {
                              if (loadtest_events.should_reconcile(type, object)) {
                                queue.add(kube::object_key(object));
                              }
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
  kube::ListWatch pods(client, pod_options,
                       [&](kube::WatchEventType, const nlohmann::json& object) {
                         if (auto key = kc::owning_loadtest(object, &jobs)) queue.add(*key);
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

  kc::OperatorConfig config;
  config.loadgen_image = flags.loadgen_image;
  config.worker_threads = flags.worker_threads;
  config.worker_unreachable_timeout = flags.worker_unreachable_timeout;
  config.worker_calls_in_flight = flags.worker_calls;
  kc::WorkerClient worker_client;
  kc::Reconciler reconciler(
      client, jobs, pods, config, worker_client, log, metrics,
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

  // Level-triggered safety net, like controller-runtime's SyncPeriod: every
  // LoadTest is looked at again now and then, even when no event arrived.
  std::jthread resync([&](std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any wake;
    std::unique_lock lock(mutex);
    while (!wake.wait_for(lock, stop, flags.resync_period, [&] { return stop.stop_requested(); })) {
      for (const auto& object : loadtests.items()) queue.add(kube::object_key(object));
    }
  });

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  log.info("stopping", {{"signal", signal_number}});
  resync.request_stop();
  resync.join();
  queue.shut_down();
  for (auto& w : workers) w.join();
  health.close().wait();
  return 0;
}
