// The default report: what a person reads after a run, top to bottom in the
// order of the questions they ask (what was tested, how much got through, did
// it fail, how fast was it), with every number in a unit that needs no
// mental arithmetic.

#include <array>
#include <string>
#include <vector>

#include "reports/report_writers.hpp"

namespace kubeload::loadgen::report {
namespace {

constexpr size_t kLabelWidth = 12;

void line(std::ostream& out, const std::string& label, const std::string& value) {
  const std::string text = pad_right(label, kLabelWidth) + value;
  out << text.substr(0, text.find_last_not_of(' ') + 1) << '\n';
}

std::string plural(uint64_t count, const std::string& singular, const std::string& plural_form) {
  return grouped(count) + " " + (count == 1 ? singular : plural_form);
}

std::string percent(double value) {
  // A handful of errors in millions of requests must not read as none.
  if (value > 0 && value < 0.005) return "<0.01%";
  return fixed(value, 2) + "%";
}

std::string per_second(double rate) {
  return grouped_fixed(rate, 1) + "/s";
}

std::string ms(double value) {
  return fixed(value, 3);
}

std::string load_of(const StageView& stage) {
  if (stage.rate) return compact_number(*stage.rate) + "/s";
  if (stage.connections) return plural(*stage.connections, "conn", "conns");
  return "-";
}

std::string load_description(const ReportModel& model) {
  // A scenario run's connections are its virtual users, its arrivals iterations.
  const bool scenarios = !model.scenarios.empty();
  const char* per_second = scenarios ? " iterations/s" : " requests/s";
  const auto users = [&](uint64_t n) {
    return scenarios ? plural(n, "virtual user", "virtual users")
                     : plural(n, "connection", "connections");
  };
  std::string text = model.open_model ? "open model, " : "closed model, ";
  if (model.stages.size() > 1) {
    // The headline numbers cover every stage; name them all, not just the first.
    std::string levels;
    for (const StageView& stage : model.stages) {
      if (!levels.empty()) levels += '/';
      levels += stage.rate          ? compact_number(*stage.rate)
                : stage.connections ? grouped(*stage.connections)
                                    : "-";
    }
    text += std::to_string(model.stages.size()) + " stages of " + levels +
            (model.open_model ? per_second
             : scenarios      ? " virtual users"
                              : " connections");
  } else if (model.open_model) {
    text += compact_number(model.target_rate) + per_second;
    if (model.info.connections > 0) text += ", up to " + users(model.info.connections);
  } else {
    text += users(model.info.connections);
  }
  text += model.info.workers ? ", " + plural(*model.info.workers, "worker", "workers")
                             : ", " + plural(model.info.threads, "thread", "threads");
  text += model.info.keep_alive ? ", keep-alive" : ", no keep-alive";
  if (!model.info.engine.empty()) text += ", " + model.info.engine;
  return text;
}

std::string outcome(const ResultView& r) {
  if (r.failures == 0) return grouped(r.successes) + " ok, 0 errors";
  std::string text = grouped(r.successes) + " ok, " + plural(r.failures, "error", "errors") + " (" +
                     percent(r.failure_percent) + "):";
  bool first = true;
  for (ErrorKind kind : kAllErrorKinds) {
    if (r.errors[kind] == 0) continue;
    text += (first ? " " : ", ") + grouped(r.errors[kind]) + " " + to_string(kind);
    first = false;
  }
  return text;
}

std::string status_codes(const ResultView& r) {
  if (r.status_codes.empty()) return "no complete responses";
  std::string text;
  for (const auto& [code, count] : r.status_codes) {
    if (!text.empty()) text += "  ";
    text += std::to_string(code) + ": " + grouped(count);
  }
  return text;
}

std::string transfer(uint64_t bytes, double bytes_per_second, double duration_seconds) {
  std::string text = human_bytes(bytes) + " (" + plural(bytes, "byte", "bytes") + ")";
  if (duration_seconds > 0) {
    text += " at " + human_bytes(static_cast<uint64_t>(bytes_per_second)) + "/s";
  }
  return text;
}

void write_latency_table(std::ostream& out, const ResultView& r) {
  if (r.complete_responses == 0 && r.failed_without_response == 0) {
    line(out, "Latency", "no complete responses");
    return;
  }
  TextTable table({{"Latency (ms)", TextTable::Align::left},
                   {"min"},
                   {"mean"},
                   {"stddev"},
                   {"p50"},
                   {"p90"},
                   {"p95"},
                   {"p99"},
                   {"p99.9"},
                   {"max"}});
  auto row = [&](const char* name, const LatencySummary& s) {
    table.add_row({name, ms(s.min), ms(s.mean), ms(s.stddev), ms(s.p50), ms(s.p90), ms(s.p95),
                   ms(s.p99), ms(s.p999), ms(s.max)});
  };
  if (r.complete_responses > 0) {
    row("total", r.total);
    row("waiting", r.waiting);
    row("connect", r.connect);
  }
  // Failures without a response (timeouts, resets, dropped) are not in the
  // rows above; how long they took is its own row.
  if (r.failed_without_response > 0) row("failed", r.failed);
  table.write(out);
}

// The columns shared by the per-stage and per-request tables, after the label ones.
std::vector<TextTable::Column> breakdown_columns(std::vector<TextTable::Column> label_columns) {
  for (const char* header : {"requests", "rps", "errors", "err %", "p50", "p90", "p99", "max"}) {
    label_columns.push_back({header});
  }
  return label_columns;
}

std::vector<std::string> breakdown_cells(std::vector<std::string> labels, const ResultView& r) {
  for (std::string cell : {grouped(r.requests), grouped_fixed(r.requests_per_second, 1),
                           grouped(r.failures), percent(r.failure_percent)}) {
    labels.push_back(std::move(cell));
  }
  // Without a complete response there is no latency; "-" rather than a fake 0.
  const bool measured = r.complete_responses > 0;
  for (double value : {r.total.p50, r.total.p90, r.total.p99, r.total.max}) {
    labels.push_back(measured ? ms(value) : "-");
  }
  return labels;
}

void write_stage_table(std::ostream& out, const ReportModel& model) {
  out << "\nStages (latency in ms)\n";
  TextTable table(breakdown_columns({{"stage"}, {"load", TextTable::Align::left}, {"seconds"}}));
  for (const StageView& stage : model.stages) {
    table.add_row(breakdown_cells(
        {std::to_string(stage.index), load_of(stage), fixed(stage.result.duration_seconds, 3)},
        stage.result));
  }
  table.write(out, "  ");
}

void write_request_table(std::ostream& out, const ReportModel& model) {
  out << (model.scenarios.empty() ? "\nRequests by name (latency in ms)\n"
                                  : "\nSteps (latency in ms)\n");
  TextTable table(breakdown_columns({{"name", TextTable::Align::left}}));
  for (const NamedView& named : model.requests) {
    table.add_row(breakdown_cells({named.name}, named.result));
  }
  table.write(out, "  ");
}

}  // namespace

void write_scenario_table(std::ostream& out, const std::vector<ScenarioRow>& scenarios) {
  out << "\nScenarios (iteration duration in ms)\n";
  TextTable table({{"name", TextTable::Align::left},
                   {"iterations"},
                   {"per s"},
                   {"failed"},
                   {"failed %"},
                   {"p50"},
                   {"p95"},
                   {"p99"},
                   {"max"}});
  for (const ScenarioRow& s : scenarios) {
    std::vector<std::string> cells = {s.name, grouped(s.iterations),
                                      grouped_fixed(s.iterations_per_second, 1), grouped(s.failed),
                                      percent(s.failed_percent)};
    // No iteration ended: no duration, "-" rather than a fake 0.
    for (double value :
         {s.duration_ms.p50, s.duration_ms.p95, s.duration_ms.p99, s.duration_ms.max}) {
      cells.push_back(s.duration_measured ? ms(value) : "-");
    }
    table.add_row(std::move(cells));
  }
  table.write(out, "  ");
}

void write_text_report(std::ostream& out, const ReportModel& model) {
  const ResultView& run = model.run;
  line(out, "Target", model.info.url);
  line(out, "Load", load_description(model));
  line(out, "Protocol", protocol_description(model.info));
  if (!model.info.tls_protocol.empty() || run.tls) {
    std::string tls = model.info.tls_protocol;
    if (run.tls) {
      tls += (tls.empty() ? "" : "; ") + plural(run.tls->handshakes, "handshake", "handshakes") +
             ", " + grouped(run.tls->sessions_reused) + " resumed";
      if (run.tls->kernel_send > 0 || run.tls->kernel_receive > 0) {
        tls += "; records in the kernel (kTLS): " + grouped(run.tls->kernel_send) + " sending, " +
               grouped(run.tls->kernel_receive) + " receiving";
      }
    }
    line(out, "TLS", tls);
  }
  std::string duration = fixed(run.duration_seconds, 3) + " s";
  if (run.drain_seconds > 0) {
    duration += ", then " + fixed(run.drain_seconds, 3) +
                " s draining the requests in flight (counted, not in the duration)";
  }
  line(out, "Duration", duration);
  if (model.warmup_requests > 0) {
    line(out, "Warm-up", plural(model.warmup_requests, "request", "requests") + ", not counted");
  }
  if (!model.finished) line(out, "Partial", "the run was still going when this was taken");
  out << '\n';

  line(out, "Requests", grouped(run.requests) + " (" + per_second(run.requests_per_second) + ")");
  line(out, "Outcome", outcome(run));
  line(out, "Status", status_codes(run));
  if (run.retries > 0) {
    line(out, "Retries",
         grouped(run.retries) +
             " sent again after a kept-alive connection closed (not extra "
             "requests)");
  }
  line(out, "Received",
       transfer(run.bytes_received, run.bytes_received_per_second, run.duration_seconds) +
           ", bodies " + human_bytes(run.body_bytes_received));
  line(out, "Sent", transfer(run.bytes_sent, run.bytes_sent_per_second, run.duration_seconds));
  if (model.open_model) {
    const uint64_t late = run.rate ? run.rate->late : 0;
    const uint64_t dropped = run.errors.dropped;
    line(out, "Rate",
         "target " + per_second(model.target_rate) + ", achieved " +
             per_second(run.requests_per_second) + ", " + grouped(late) + " late, " +
             grouped(dropped) + " dropped");
  }
  out << '\n';

  write_latency_table(out, run);
  if (model.stages.size() > 1) write_stage_table(out, model);
  // A scenario run lists its steps even when there is one: the row is the step's.
  if (model.requests.size() > 1 || (!model.scenarios.empty() && !model.requests.empty())) {
    write_request_table(out, model);
  }
  if (!model.scenarios.empty()) write_scenario_table(out, model.scenarios);
}

}  // namespace kubeload::loadgen::report
