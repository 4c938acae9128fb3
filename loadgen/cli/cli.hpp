#pragma once
// Command-line parsing: argv -> what to do. Every bad value is a UsageError
// whose message names the option and the value.

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kubeload/spec.hpp"
#include "kubeload/target_policy.hpp"
#include "loadgen/engine/engine_choice.hpp"
#include "reports/report.hpp"

namespace kubeload::loadgen {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CliOptions {
  enum class Mode { quick, run, worker, help, version } mode = Mode::quick;
  LoadTestSpec spec;            // quick mode: built from the flags
  std::string manifest_path;    // run mode
  std::string target_override;  // run mode: --target URL replaces spec.target
  std::optional<uint32_t> threads;
  ReportFormat format = ReportFormat::text;
  bool quiet = false;
  std::string metrics_address;  // empty: no live metrics
  std::string hdr_log_path;     // empty: no interval log
  // How the target is reached (quick, run and worker mode).
  std::string ca_file;                // --cacert: verify against this CA bundle
  bool insecure = false;              // --insecure: do not verify certificates
  bool tls_resume = true;             // --no-tls-resume: a full handshake every connection
  bool retry_non_idempotent = false;  // --retry-non-idempotent
  bool allow_http1 = false;           // --allow-http1: http2 may fall back to http/1.1 (ALPN)
  // --engine: replaces spec.load.engine (quick mode: the spec's; run mode: the manifest's).
  std::optional<EngineRequest> engine;
  // worker mode
  std::string spec_json;  // the LoadTest (from --spec FILE or --spec-env VAR)
  std::string listen = "0.0.0.0:8080";
  uint32_t worker_index = 0;
  uint32_t worker_count = 1;
  std::string termination_log = "/dev/termination-log";
  std::chrono::seconds linger{300};
  // --guard-targets / --deny-cidr / --allow-cidr: the admin's target policy
  // (the operator always passes it); unset without any of them.
  std::optional<TargetPolicy> target_policy;
};

// Throws UsageError.
CliOptions parse_command_line(const std::vector<std::string>& args);

// Where a run's load was given, for naming it in usage errors.
enum class LoadSource { options, manifest };

// Throws UsageError naming the value when an explicit thread count (-t) could
// never be used: above the closed model's connections (-c, or the largest
// stage's), or above the open model's connection cap.
void check_threads_usable(const LoadSpec& load, std::optional<uint32_t> threads, LoadSource source);

const char* usage_text();

}  // namespace kubeload::loadgen
