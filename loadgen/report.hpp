#pragma once
// Reports are pure functions of a finished run: the merged RunResult plus the
// few facts about the run that are not numbers (target, concurrency, ...).
// Each writer reads only these; none does I/O beyond the stream it is given.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "kubeload/result.hpp"

namespace kubeload::loadgen {

// text, ab, jmeter and json report a run's numbers; junit, markdown and html
// report a gate (thresholds, baseline, verdict) with them (gate_report.hpp).
enum class ReportFormat { text, ab, jmeter, json, junit, markdown, html };
// "text" | "ab" | "jmeter" | "json" | "junit" | "markdown" | "html"; nullopt otherwise.
std::optional<ReportFormat> parse_report_format(std::string_view name);

struct RunInfo {
  std::string url;     // as given, e.g. "http://127.0.0.1:8080/index.html"
  std::string scheme;  // "http" | "https"
  std::string host;    // "127.0.0.1"
  uint16_t port = 80;
  std::string path;  // "/index.html" (with query)
  // Server header of the first complete response ("" if none).
  std::string server_software;
  // Body length of the first complete response (ab's "Document Length").
  uint64_t document_length = 0;
  // Closed model concurrency (first stage's, when stages). The open model has no
  // fixed concurrency: its connection cap, if any, else 0.
  uint64_t connections = 0;
  std::optional<double> rate;  // open model target rate (requests/s)
  uint32_t threads = 1;
  // A LoadTest's worker pods: reported instead of threads when set.
  std::optional<uint32_t> workers;
  bool keep_alive = true;
  // e.g. "TLSv1.3,TLS_AES_256_GCM_SHA384,..." ("" for http)
  std::string tls_protocol;
};

// Writes the report of the whole run in the given format (a gate format
// without thresholds: verdict None).
void write_report(std::ostream& out, ReportFormat format, const RunInfo& info,
                  const RunResult& run);

}  // namespace kubeload::loadgen
