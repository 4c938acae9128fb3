// loadgen: the command line. Parses options, runs the plan, writes the report.

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "kubeload/api/status.hpp"
#include "kubeload/names.hpp"
#include "kubeload/spec.hpp"
#include "kubeload/threshold.hpp"
#include "loadgen/cli/cli.hpp"
#include "loadgen/engine/cpu_quota.hpp"
#include "loadgen/engine/metrics.hpp"
#include "loadgen/engine/runner.hpp"
#include "loadgen/worker_server/worker_server.hpp"
#include "reports/gate_report.hpp"

namespace kl = kubeload::loadgen;

namespace {

constexpr int kExitRan = 0;
constexpr int kExitGateFailed = 1;
constexpr int kExitUsage = 2;

// The spec parser reads spec.scenarios (docs/scenarios.md); until the engine
// runs them, a scenario run is refused here rather than started with no
// request to send.
constexpr const char* kScenariosNotRunYet =
    "spec.scenarios: this loadgen does not run scenarios yet (issue 28)";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "loadgen: %s\n", message.c_str());
  return kExitUsage;
}

// SIGINT and SIGTERM are blocked in every thread and taken here, so the
// handler is an ordinary thread that sets the run's stop flag.
class SignalWatcher {
 public:
  explicit SignalWatcher(std::atomic<bool>& stop) {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    thread_ = std::thread([this, &stop] {
      const timespec poll = {0, 100'000'000};
      while (!finished_.load()) {
        if (sigtimedwait(&signals_, nullptr, &poll) > 0) stop.store(true);
      }
    });
  }
  ~SignalWatcher() {
    finished_.store(true);
    thread_.join();
  }
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  sigset_t signals_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

bool write_hdr_log(const std::string& path, const kubeload::RunResult& run) {
  std::ofstream out(path);
  if (!out) return false;
  out << "#[Histogram log format version 1.3]\n";
  out << "#[StartTime: " << std::time(nullptr) << " (seconds since epoch)]\n";
  out << "#[Latency values are in microseconds; Interval_Max in milliseconds]\n";
  out << "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_"
         "Histogram\"\n";
  double offset = 0;
  char line[96];
  for (const auto& stage : run.stages) {
    const auto& r = stage.result;
    std::snprintf(line, sizeof line, "%.3f,%.3f,%.3f,", offset, r.duration_seconds,
                  static_cast<double>(r.latency.max()) / 1000.0);
    out << line << r.latency.encode_base64() << "\n";
    offset += r.duration_seconds;
  }
  return static_cast<bool>(out);
}

std::optional<kubeload::LoadTestSpec> load_manifest(const std::string& path,
                                                    const std::string& target_override,
                                                    const std::string& ca_file) {
  std::ifstream file(path);
  if (!file) {
    usage_error("cannot read \"" + path + "\"");
    return std::nullopt;
  }
  std::ostringstream text;
  text << file.rdbuf();
  kubeload::ParsedLoadTest parsed = kubeload::parse_loadtest(text.str());
  if (!parsed.ok()) {
    for (const auto& e : parsed.errors) {
      std::fprintf(stderr, "loadgen: %s: %s\n", path.c_str(), e.to_string().c_str());
    }
    return std::nullopt;
  }
  auto& spec = parsed.spec;
  if (!spec.scenarios.empty()) {
    usage_error(path + ": " + kScenariosNotRunYet);
    return std::nullopt;
  }
  if (!target_override.empty()) {
    spec.url = target_override;
    spec.service.reset();
  }
  if (spec.service) {
    usage_error(path +
                ": spec.target.service: a Service is reachable only in a cluster; "
                "give --target URL to run on this machine");
    return std::nullopt;
  }
  if (spec.tls.ca_from && ca_file.empty()) {
    usage_error(
        path + ": spec.target.tls.caFrom: a " +
        (spec.tls.ca_from->kind == kubeload::ObjectKeyRef::Kind::secret ? "Secret" : "ConfigMap") +
        " is readable only in a cluster; give --cacert FILE to run on this machine");
    return std::nullopt;
  }
  for (size_t i = 0; i < spec.requests.size(); ++i) {
    if (!spec.requests[i].headers_from.empty()) {
      usage_error(path + ": spec.requests[" + std::to_string(i) +
                  "].headersFrom: Secrets are readable only in a cluster");
      return std::nullopt;
    }
  }
  return parsed.spec;
}

int run_worker_mode(const kl::CliOptions& options) {
  kubeload::ParsedLoadTest parsed = kubeload::parse_loadtest(options.spec_json);
  if (!parsed.ok()) {
    for (const auto& e : parsed.errors)
      std::fprintf(stderr, "loadgen worker: %s\n", e.to_string().c_str());
    return kExitUsage;
  }
  if (!parsed.spec.scenarios.empty()) {
    return usage_error(std::string("loadgen worker: ") + kScenariosNotRunYet);
  }
  kl::WorkerConfig config;
  config.spec = std::move(parsed.spec);
  // Header values from Secrets arrive as env vars KUBELOAD_HEADER_<n>, numbered
  // over all requests' headersFrom in document order (the operator's Job
  // builder numbers them the same way); the spec itself holds only references.
  size_t ordinal = 0;
  for (auto& request : config.spec.requests) {
    for (const auto& from : request.headers_from) {
      const std::string variable = "KUBELOAD_HEADER_" + std::to_string(ordinal++);
      const char* value = std::getenv(variable.c_str());
      if (value == nullptr) {
        return usage_error("loadgen worker: " + variable + " (header " + from.name +
                           " from secret " + from.secret_key_ref.name + ") is not set");
      }
      // The value itself is never echoed: it is a secret.
      if (kubeload::header_value_breaks_line(value)) {
        return usage_error("loadgen worker: " + variable + " (header " + from.name +
                           " from secret " + from.secret_key_ref.name + ", key " +
                           from.secret_key_ref.key +
                           "): the value contains CR, LF or NUL, which would split the request");
      }
      request.headers.emplace_back(from.name, value);
    }
  }
  config.target_url =
      options.target_override.empty() ? config.spec.url.value_or("") : options.target_override;
  if (config.target_url.empty())
    return usage_error("loadgen worker: --target URL is required for a Service target");
  if (const char* token = std::getenv(kubeload::kWorkerTokenEnv); token != nullptr)
    config.token = token;
  config.listen = options.listen;
  config.target_policy = options.target_policy;
  config.index = options.worker_index;
  config.count = options.worker_count;
  config.threads = options.threads.value_or(kl::default_thread_count());
  config.ca_file = options.ca_file;
  config.termination_log = options.termination_log;
  config.linger = options.linger;
  if (const char* uid = std::getenv("KUBELOAD_LOADTEST_UID")) config.loadtest_uid = uid;
  std::atomic<bool> stop(false);
  SignalWatcher signals(stop);
  try {
    return kl::run_worker(config, stop);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  kl::CliOptions options;
  try {
    options = kl::parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const kl::UsageError& e) {
    return usage_error(e.what());
  }
  if (options.mode == kl::CliOptions::Mode::help) {
    std::fputs(kl::usage_text(), stdout);
    return kExitRan;
  }
  if (options.mode == kl::CliOptions::Mode::version) {
    std::puts("loadgen 0.1.0");
    return kExitRan;
  }
  if (options.mode == kl::CliOptions::Mode::worker) return run_worker_mode(options);
  if (options.mode == kl::CliOptions::Mode::run) {
    auto spec = load_manifest(options.manifest_path, options.target_override, options.ca_file);
    if (!spec) return kExitUsage;
    options.spec = std::move(*spec);
    try {
      kl::check_threads_usable(options.spec.load, options.threads, kl::LoadSource::manifest);
    } catch (const kl::UsageError& e) {
      return usage_error(options.manifest_path + ": " + e.what());
    }
  }

  std::string error;
  const auto target = kl::parse_target(*options.spec.url, error);
  if (!target) return usage_error(error);
  const uint32_t threads = options.threads.value_or(kl::default_thread_count());
  kl::RunPlan plan = kl::plan_from_spec(options.spec, *target, threads);
  if (!target->tls() && (options.insecure || !options.ca_file.empty() || !options.tls_resume)) {
    return usage_error(std::string(options.insecure           ? "--insecure"
                                   : !options.ca_file.empty() ? "--cacert"
                                                              : "--no-tls-resume") +
                       ": only for https:// targets, got " + target->url);
  }
  if (options.insecure) plan.tls.verify = false;
  plan.tls.ca_file = options.ca_file;
  plan.tls.resume = options.tls_resume;
  plan.retry_non_idempotent = options.retry_non_idempotent;
  // `loadgen run --target` replaces the manifest's URL after its checks.
  if (plan.protocol == kubeload::Protocol::http2 && !target->tls()) {
    return usage_error("protocol http2 is HTTP/2 over TLS: it needs an https:// target, got " +
                       target->url + " (h2c for cleartext HTTP/2)");
  }
  if (plan.protocol == kubeload::Protocol::h2c && target->tls()) {
    return usage_error("protocol h2c is cleartext HTTP/2: it needs an http:// target, got " +
                       target->url + " (http2 for HTTP/2 over TLS)");
  }
  if (options.allow_http1 && plan.protocol != kubeload::Protocol::http2) {
    return usage_error(std::string("--allow-http1: only for an http2 target (--h2, "
                                   "spec.target.protocol: http2), got ") +
                       kubeload::to_string(plan.protocol));
  }
  plan.allow_http1 = options.allow_http1;
  // Decided once, before any worker starts; the probe only when io_uring is in question.
  const kubeload::EngineRequest requested = options.engine.value_or(options.spec.load.engine);
  const int probe_error =
      kl::may_use_io_uring(requested, plan.traffic()) ? kl::probe_io_uring() : 0;
  const kl::EngineDecision engine = kl::decide_engine(requested, probe_error, plan.traffic());
  if (engine.refused) return usage_error(engine.reason);
  plan.engine = engine.engine;
  if (!engine.reason.empty() && !options.quiet) {
    std::fprintf(stderr, "loadgen: engine %s: %s\n", kl::to_string(engine.engine),
                 engine.reason.c_str());
  }

  std::atomic<bool> stop(false);
  SignalWatcher signals(stop);
  std::unique_ptr<kl::LiveMetrics> metrics;
  kl::RunOutcome outcome;
  try {
    if (!options.metrics_address.empty()) {
      std::vector<std::string> names;
      for (const auto& r : plan.requests) names.push_back(r.name);
      metrics = std::make_unique<kl::LiveMetrics>(
          options.metrics_address,
          kl::MetricLabels{options.spec.name, options.spec.namespace_, "0",
                           kubeload::to_string(options.spec.protocol),
                           kl::to_string(plan.engine_used())},
          names);
    }
    kl::RunOptions run_options;
    run_options.progress = !options.quiet;
    run_options.metrics = metrics.get();
    run_options.stop = &stop;
    outcome = kl::run_plan(plan, run_options);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }

  std::vector<kubeload::ThresholdOutcome> gates;
  for (const auto& t : options.spec.thresholds)
    gates.push_back(kubeload::evaluate(t, outcome.result));
  const bool passed =
      std::all_of(gates.begin(), gates.end(), [](const auto& g) { return g.passed; });

  if (options.format == kl::ReportFormat::json) {
    nlohmann::json document = kubeload::to_json(outcome.result);
    document["protocol"] = outcome.info.protocol;  // as write_report's json
    if (!outcome.info.engine.empty()) document["engine"] = outcome.info.engine;
    if (!gates.empty()) {
      document["thresholds"] = nlohmann::json::array();
      for (const auto& g : gates) {
        document["thresholds"].push_back(
            {{"expression", g.expression}, {"observed", g.observed}, {"passed", g.passed}});
      }
      document["verdict"] =
          kubeload::api::name(passed ? kubeload::api::Verdict::Pass : kubeload::api::Verdict::Fail);
    }
    std::cout << document.dump(2) << "\n";
  } else {
    const auto label = options.spec.labels.find(std::string(kubeload::kTestLabel));
    const kl::GateReport gate = kl::gate_report_from_run(
        options.spec.name, label == options.spec.labels.end() ? "" : label->second, outcome.info,
        outcome.result, gates, outcome.cpu);
    switch (options.format) {
      case kl::ReportFormat::junit:
        kl::write_junit_report(std::cout, gate);
        break;
      case kl::ReportFormat::markdown:
        kl::write_markdown_report(std::cout, gate);
        break;
      case kl::ReportFormat::html:
        kl::write_html_report(std::cout, gate);
        break;
      default:
        kl::write_report(std::cout, options.format, outcome.info, outcome.result);
        if (!gates.empty()) kl::write_gate_text(std::cout, gate);
    }
  }
  std::cout.flush();
  if (!options.hdr_log_path.empty() && !write_hdr_log(options.hdr_log_path, outcome.result)) {
    return usage_error("cannot write \"" + options.hdr_log_path + "\"");
  }
  if (outcome.interrupted)
    std::fprintf(stderr, "loadgen: interrupted; the report covers what was done\n");
  if (!outcome.engine_note.empty() && !options.quiet) {
    std::fprintf(stderr, "loadgen: note: %s\n", outcome.engine_note.c_str());
  }
  // Even with -q: it says what the numbers above are worth.
  if (const std::string warning =
          outcome.cpu ? kl::generator_saturation_warning(*outcome.cpu) : std::string();
      !warning.empty()) {
    std::fprintf(stderr, "loadgen: warning: %s\n", warning.c_str());
  }
  return passed ? kExitRan : kExitGateFailed;
}
