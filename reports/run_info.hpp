#pragma once
// What every report format is given besides the numbers: the formats'
// names and the few facts about the run that are not numbers (target,
// concurrency, ...).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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
  // What the requests were sent as: "http1" | "http2" | "h2c" (kubeload::to_string(Protocol)).
  std::string protocol = "http1";
  uint32_t max_streams = 1;  // HTTP/2: concurrent streams per connection
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
  // The loop that carried the connections: "io_uring" | "epoll" (plain
  // HTTP/1.1) | "asio" (TLS, HTTP/2); "" when not known (not reported).
  std::string engine;
};

}  // namespace kubeload::loadgen
