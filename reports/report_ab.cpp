// The report in ApacheBench 2.3's layout, for people (and scripts) that read
// ab output: same labels, same order, same column widths, same units. Where
// ab's numbers were wrong (32-bit byte counters that went negative past 2 GiB)
// ours are 64-bit and exact.
//
// How our counters map onto ab's:
//  - Complete requests: every counted request (ab's "done"). Requests the
//    open model dropped (never sent within the timeout) are in it, as errors
//    with a line of their own ("Dropped requests"), like write errors.
//  - Failed requests: ab's "bad", the sum of its breakdown line:
//      Connect    = connect errors,
//      Receive    = read errors (connection lost or malformed response),
//      Length     = length errors (only with an expected length: opt-in),
//      Exceptions = timeouts (ab's name for a request that ended abnormally).
//  - Write errors: write errors, a line of its own and not "failed", as in ab.
//  - Scenario runs: extraction and check failures (complete responses a
//    step could not use) each a line of their own, and after ab's tables
//    one line per scenario with its iterations and their durations.
//  - Status failures are, as in ab, not "failed" but reported through
//    "Non-2xx responses" (every response outside 200-299, whatever was expected).
//  - Keep-Alive requests: responses that came on a reused connection (connect
//    time 0). ab counts responses that allowed keep-alive, which also includes
//    the first response of each connection; ours is lower by at most the
//    number of connections opened, and is 0 when the server closes every
//    connection, which is the case the line exists to reveal.
//  - Processing: estimated from the total and connect histograms, see
//    processing_estimate() in report.cpp.
// Left out: ab's banner and progress lines (progress goes to stderr), the
// "Total body sent" lines, and the median-vs-mean WARNING heuristics.

#include <array>
#include <string>
#include <utility>

#include "reports/report_writers.hpp"

namespace kubeload::loadgen::report {
namespace {

// ab prints every value from column 24 on.
constexpr size_t kAbLabelWidth = 24;

void field(std::ostream& out, const std::string& label, const std::string& value) {
  // An empty value (no Server header) leaves no trailing blanks behind.
  const std::string text = pad_right(label + ":", kAbLabelWidth) + value;
  out << text.substr(0, text.find_last_not_of(' ') + 1) << '\n';
}

// One row of "Connection Times (ms)": ab's "%5d %4d %5.1f %6d %7d" after a
// 12-character label.
void connection_times_row(std::ostream& out, const std::string& label, double min, double mean,
                          double stddev, double median, double max) {
  out << pad_right(label + ":", 12) << pad_left(rounded_ms(min), 5) << ' '
      << pad_left(rounded_ms(mean), 4) << ' ' << pad_left(fixed(stddev, 1), 5) << ' '
      << pad_left(rounded_ms(median), 6) << ' ' << pad_left(rounded_ms(max), 7) << '\n';
}

void connection_times_row(std::ostream& out, const std::string& label, const LatencySummary& s) {
  connection_times_row(out, label, s.min, s.mean, s.stddev, s.p50, s.max);
}

// ab's "Connection Times" and percentage tables: only with a complete response.
void write_ab_tables(std::ostream& out, const ReportModel& model);

}  // namespace

void write_ab_report(std::ostream& out, const ReportModel& model) {
  const RunInfo& info = model.info;
  const ResultView& run = model.run;
  const ErrorCounts& errors = run.errors;

  field(out, "Server Software", info.server_software);
  field(out, "Server Hostname", info.host);
  field(out, "Server Port", std::to_string(info.port));
  if (!info.tls_protocol.empty()) field(out, "SSL/TLS Protocol", info.tls_protocol);
  // ab speaks HTTP/1.1 only: its layout stays as it was for HTTP/1.1.
  if (info.protocol != "http1") field(out, "Protocol", protocol_description(info));
  // Not one of ab's fields: only when known, so ab's own layout is unchanged otherwise.
  if (!info.engine.empty()) field(out, "Engine", info.engine);
  out << '\n';
  field(out, "Document Path", info.path);
  field(out, "Document Length", std::to_string(info.document_length) + " bytes");
  out << '\n';
  field(out, "Concurrency Level", std::to_string(info.connections));
  field(out, "Time taken for tests", fixed(run.duration_seconds, 3) + " seconds");
  field(out, "Complete requests", std::to_string(run.requests));
  const uint64_t failed = errors.connect + errors.read + errors.length + errors.timeout;
  field(out, "Failed requests", std::to_string(failed));
  if (failed > 0) {
    out << "   (Connect: " << errors.connect << ", Receive: " << errors.read
        << ", Length: " << errors.length << ", Exceptions: " << errors.timeout << ")\n";
  }
  if (errors.write > 0) field(out, "Write errors", std::to_string(errors.write));
  if (errors.dropped > 0) field(out, "Dropped requests", std::to_string(errors.dropped));
  if (errors.rst_stream > 0) field(out, "Stream resets", std::to_string(errors.rst_stream));
  if (errors.goaway > 0) field(out, "GOAWAY errors", std::to_string(errors.goaway));
  if (errors.extract > 0) field(out, "Extraction failures", std::to_string(errors.extract));
  if (errors.check > 0) field(out, "Check failures", std::to_string(errors.check));
  if (run.retries > 0) field(out, "Retried requests", std::to_string(run.retries));
  if (run.tls) {
    field(out, "TLS handshakes",
          std::to_string(run.tls->handshakes) + " (" + std::to_string(run.tls->sessions_reused) +
              " resumed)");
    if (run.tls->kernel_send > 0 || run.tls->kernel_receive > 0) {
      field(out, "Kernel TLS (kTLS)",
            std::to_string(run.tls->kernel_send) + " sending, " +
                std::to_string(run.tls->kernel_receive) + " receiving");
    }
  }
  if (run.non_2xx_responses > 0) {
    field(out, "Non-2xx responses", std::to_string(run.non_2xx_responses));
  }
  if (info.keep_alive) {
    field(out, "Keep-Alive requests", std::to_string(run.reused_connection_responses));
  }
  field(out, "Total transferred", std::to_string(run.bytes_received) + " bytes");
  field(out, "HTML transferred", std::to_string(run.body_bytes_received) + " bytes");

  // As ab: the rates only when something was measured over some time.
  if (run.duration_seconds > 0 && run.requests > 0) {
    field(out, "Requests per second", fixed(run.requests_per_second, 2) + " [#/sec] (mean)");
    field(out, "Time per request", fixed(model.time_per_request_ms, 3) + " [ms] (mean)");
    field(out, "Time per request",
          fixed(model.time_per_request_across_ms, 3) +
              " [ms] (mean, across all concurrent requests)");
    field(out, "Transfer rate",
          fixed(run.bytes_received_per_second / 1024.0, 2) + " [Kbytes/sec] received");
  }

  if (run.complete_responses > 0) write_ab_tables(out, model);
  if (model.scenarios.empty()) return;
  out << '\n';
  for (const ScenarioRow& scenario : model.scenarios) {
    std::string line = std::to_string(scenario.iterations) + " iterations, " +
                       std::to_string(scenario.failed) + " failed";
    if (scenario.duration_measured) {
      const LatencySummary& d = scenario.duration_ms;
      line += "; duration (ms) 50% " + rounded_ms(d.p50) + ", 95% " + rounded_ms(d.p95) + ", 99% " +
              rounded_ms(d.p99) + ", 100% " + rounded_ms(d.max);
    }
    field(out, "Scenario " + scenario.name, line);
  }
}

namespace {

void write_ab_tables(std::ostream& out, const ReportModel& model) {
  const ResultView& run = model.run;
  out << "\nConnection Times (ms)\n";
  out << "              min  mean[+/-sd] median   max\n";
  connection_times_row(out, "Connect", run.connect);
  const ProcessingEstimate& p = run.processing;
  connection_times_row(out, "Processing", p.min, p.mean, p.stddev, p.median, p.max);
  connection_times_row(out, "Waiting", run.waiting);
  connection_times_row(out, "Total", run.total);

  out << "\nPercentage of the requests served within a certain time (ms)\n";
  const LatencySummary& total = run.total;
  const std::array<std::pair<int, double>, 8> percentiles = {{{50, total.p50},
                                                              {66, total.p66},
                                                              {75, total.p75},
                                                              {80, total.p80},
                                                              {90, total.p90},
                                                              {95, total.p95},
                                                              {98, total.p98},
                                                              {99, total.p99}}};
  for (const auto& [percent, value] : percentiles) {
    out << "  " << percent << "%  " << pad_left(rounded_ms(value), 5) << '\n';
  }
  out << " 100%  " << pad_left(rounded_ms(total.max), 5) << " (longest request)\n";
}

}  // namespace

}  // namespace kubeload::loadgen::report
