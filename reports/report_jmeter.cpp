// The report as JMeter's Aggregate Report table: one row per stage (the
// concurrency sweep people ran by hand, one JMeter run per thread count),
// one per named request or scenario step (as JMeter's per sampler label),
// one per scenario (as a Transaction Controller's: its samples are ended
// iterations, its times their durations, its errors the failed iterations;
// no bytes of its own), and a TOTAL row for the whole run's requests. Units as JMeter's: latencies
// in whole milliseconds, error percentage with two decimals, throughput in requests per second with
// one, and received kilobytes (1024 bytes) per second. JMeter's table has no protocol column: an
// HTTP/2 run names its protocol in a line above the table (an HTTP/1.1 run keeps the table alone,
// as ab's report keeps its layout).

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

std::vector<std::string> scenario_row(const ScenarioRow& scenario) {
  const LatencySummary& s = scenario.duration_ms;
  const auto time = [&](double value) {
    return scenario.duration_measured ? rounded_ms(value) : std::string("-");
  };
  return {"scenario " + scenario.name,
          std::to_string(scenario.iterations),
          time(s.mean),
          time(s.p50),
          time(s.p90),
          time(s.p95),
          time(s.p99),
          time(s.min),
          time(s.max),
          fixed(scenario.failed_percent, 2) + "%",
          fixed(scenario.iterations_per_second, 1) + "/sec",
          "-"};
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
  // One request alone is the TOTAL row already.
  if (model.requests.size() > 1 || !model.scenarios.empty()) {
    for (const NamedView& named : model.requests) {
      table.add_row(jmeter_row(named.name, named.result));
    }
  }
  for (const ScenarioRow& scenario : model.scenarios) table.add_row(scenario_row(scenario));
  table.add_row(jmeter_row("TOTAL", model.run));
  table.write(out);
}

}  // namespace kubeload::loadgen::report
