#pragma once
// Command-line parsing: argv -> what to do. Every bad value is a UsageError
// whose message names the option and the value.

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kubeload/spec.hpp"
#include "loadgen/report.hpp"

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
  // worker mode
  std::string spec_json;  // the LoadTest (from --spec FILE or --spec-env VAR)
  std::string listen = "0.0.0.0:8080";
  uint32_t worker_index = 0;
  uint32_t worker_count = 1;
  std::string termination_log = "/dev/termination-log";
  std::chrono::seconds linger{300};
};

// Throws UsageError.
CliOptions parse_command_line(const std::vector<std::string>& args);

const char* usage_text();

}  // namespace kubeload::loadgen
