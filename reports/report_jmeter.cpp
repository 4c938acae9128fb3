// The report as JMeter's Aggregate Report table: one row per stage (the
// concurrency sweep people ran by hand, one JMeter run per thread count) and
// a TOTAL row for the whole run. Units as JMeter's: latencies in whole
// milliseconds, error percentage with two decimals, throughput in requests
// per second with one, and received kilobytes (1024 bytes) per second.
// JMeter's table has no protocol column: an HTTP/2 run names its protocol in
// a line above the table (an HTTP/1.1 run keeps the table alone, as ab's
// report keeps its layout).

#include <string>
#include <vector>

#include "reports/report_writers.hpp"

namespace kubeload::loadgen::report {
namespace {

std::string stage_label(const StageView& stage) {
  std::string label = "stage " + std::to_string(stage.index);
  if (stage.rate) return label + " (" + compact_number(*stage.rate) + "/s)";
  if (stage.connections) {
    return label + " (" + std::to_string(*stage.connections) +
           (*stage.connections == 1 ? " conn)" : " conns)");
  }
  return label;
}

}  // namespace

std::vector<std::string> jmeter_row(std::string label, const ResultView& r) {
  const LatencySummary& s = r.total;
  return {std::move(label),
          std::to_string(r.requests),
          rounded_ms(s.mean),
          rounded_ms(s.p50),
          rounded_ms(s.p90),
          rounded_ms(s.p95),
          rounded_ms(s.p99),
          rounded_ms(s.min),
          rounded_ms(s.max),
          fixed(r.failure_percent, 2) + "%",
          fixed(r.requests_per_second, 1) + "/sec",
          fixed(r.bytes_received_per_second / 1024.0, 2)};
}

TextTable jmeter_table() {
  return TextTable({{"Label", TextTable::Align::left},
                    {"Samples"},
                    {"Average"},
                    {"Median"},
                    {"90% Line"},
                    {"95% Line"},
                    {"99% Line"},
                    {"Min"},
                    {"Max"},
                    {"Error %"},
                    {"Throughput"},
                    {"KB/sec"}});
}

void write_jmeter_report(std::ostream& out, const ReportModel& model) {
  if (model.info.protocol != "http1")
    out << "Protocol: " << protocol_description(model.info) << '\n';
  TextTable table = jmeter_table();
  for (const StageView& stage : model.stages) {
    table.add_row(jmeter_row(stage_label(stage), stage.result));
  }
  table.add_row(jmeter_row("TOTAL", model.run));
  table.write(out);
}

}  // namespace kubeload::loadgen::report
