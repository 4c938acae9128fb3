#include "reports/report.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "reports/gate_report.hpp"
#include "reports/report_writers.hpp"

namespace kubeload::loadgen {

void write_report(std::ostream& out, ReportFormat format, const RunInfo& info,
                  const RunResult& run) {
  switch (format) {
    case ReportFormat::json:
      report::write_json_report(out, info, run);
      return;
    case ReportFormat::text:
      report::write_text_report(out, report::build_report_model(info, run));
      return;
    case ReportFormat::ab:
      report::write_ab_report(out, report::build_report_model(info, run));
      return;
    case ReportFormat::jmeter:
      report::write_jmeter_report(out, report::build_report_model(info, run));
      return;
    case ReportFormat::junit:
      write_junit_report(out, gate_report_from_run("", "", info, run, {}));
      return;
    case ReportFormat::markdown:
      write_markdown_report(out, gate_report_from_run("", "", info, run, {}));
      return;
    case ReportFormat::html:
      write_html_report(out, gate_report_from_run("", "", info, run, {}));
      return;
  }
  throw std::invalid_argument("write_report: unknown report format");
}

namespace report {
namespace {

// Zero, not nan or inf, when nothing was measured: an empty run reports zeros.
double ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0.0;
}

double positive_or_zero(double value) {
  return value > 0 ? value : 0.0;
}

uint64_t responses_on_reused_connections(const Histogram& connect_micros) {
  // A response on a kept-alive connection records a connect time of exactly
  // 0 us, and 0 has a bucket of its own (lowest discernible value is 1 us).
  uint64_t reused = 0;
  connect_micros.for_each_nonempty([&](int64_t low, int64_t /*high*/, uint64_t count) {
    if (low == 0) reused += count;
  });
  return reused;
}

}  // namespace

// ab reports Processing = total - connect per request; we keep only the two
// distributions, not the pairs, so:
//  - mean: mean(total) - mean(connect), exact (means subtract);
//  - stddev: sqrt(var(total) - var(connect)), exact when processing time is
//    independent of connect time (the usual case: the server's work does not
//    depend on how long the handshake took);
//  - min, median, max: the same quantile of each subtracted. Exact when the
//    connect time is constant (all requests on reused connections, or every
//    connect equally fast), and never negative, because every total contains
//    its own connect time, so each quantile of total is at least the same
//    quantile of connect.

ProcessingEstimate processing_estimate(const LatencySummary& total, const LatencySummary& connect) {
  ProcessingEstimate p;
  p.min = positive_or_zero(total.min - connect.min);
  p.mean = positive_or_zero(total.mean - connect.mean);
  p.stddev =
      std::sqrt(positive_or_zero(total.stddev * total.stddev - connect.stddev * connect.stddev));
  p.median = positive_or_zero(total.p50 - connect.p50);
  p.max = positive_or_zero(total.max - connect.max);
  return p;
}

namespace {

// Closed model: connections x wall time, summed over the stages, since
// with stages the concurrency changes from one to the next.
double connection_seconds(const RunInfo& info, const RunResult& run) {
  const bool every_stage_has_connections =
      !run.stages.empty() &&
      std::all_of(run.stages.begin(), run.stages.end(),
                  [](const StageResult& s) { return s.connections.has_value(); });
  if (!every_stage_has_connections) {
    return static_cast<double>(info.connections) * positive_or_zero(run.result.duration_seconds);
  }
  double sum = 0;
  for (const StageResult& stage : run.stages) {
    sum +=
        static_cast<double>(*stage.connections) * positive_or_zero(stage.result.duration_seconds);
  }
  return sum;
}

}  // namespace

ResultView view_of(const Result& result) {
  ResultView v;
  v.requests = result.requests;
  v.failures = result.failures();
  v.successes = v.requests > v.failures ? v.requests - v.failures : 0;
  v.failure_percent =
      100.0 * ratio(static_cast<double>(v.failures), static_cast<double>(v.requests));
  v.errors = result.errors;
  v.status_codes = result.status_codes;
  v.complete_responses = result.latency.total_count();
  for (const auto& [code, count] : result.status_codes) {
    if (code < 200 || code > 299) v.non_2xx_responses += count;
  }
  v.reused_connection_responses = responses_on_reused_connections(result.connect);
  // A negative or nan duration can only come from a corrupt document; treat it as unmeasured.
  v.duration_seconds = positive_or_zero(result.duration_seconds);
  v.drain_seconds = positive_or_zero(result.drain_seconds);
  v.requests_per_second = ratio(static_cast<double>(v.requests), v.duration_seconds);
  v.bytes_received = result.bytes_received;
  v.body_bytes_received = result.body_bytes_received;
  v.bytes_sent = result.bytes_sent;
  v.bytes_received_per_second = ratio(static_cast<double>(v.bytes_received), v.duration_seconds);
  v.bytes_sent_per_second = ratio(static_cast<double>(v.bytes_sent), v.duration_seconds);
  v.total = LatencySummary::of(result.latency);
  v.waiting = LatencySummary::of(result.waiting);
  v.connect = LatencySummary::of(result.connect);
  v.failed_without_response = result.error_latency.total_count();
  v.failed = LatencySummary::of(result.error_latency);
  v.processing = processing_estimate(v.total, v.connect);
  v.rate = result.rate;
  v.retries = result.retries;
  v.tls = result.tls;
  return v;
}

ReportModel build_report_model(const RunInfo& info, const RunResult& run) {
  ReportModel model;
  model.info = info;
  model.open_model = info.rate.has_value() || run.result.rate.has_value();
  if (run.result.rate) {
    model.target_rate = run.result.rate->target;
  } else if (info.rate) {
    model.target_rate = *info.rate;
  }
  model.target_rate = positive_or_zero(model.target_rate);
  model.warmup_requests = run.warmup_requests;
  model.finished = run.finished;
  model.run = view_of(run.result);
  const double requests = static_cast<double>(model.run.requests);
  model.time_per_request_across_ms = ratio(model.run.duration_seconds * 1000.0, requests);
  model.time_per_request_ms = model.open_model
                                  ? model.run.total.mean
                                  : ratio(connection_seconds(info, run) * 1000.0, requests);
  for (const StageResult& stage : run.stages) {
    model.stages.push_back(StageView{stage.index, positive_or_zero(stage.duration_seconds_planned),
                                     stage.connections, stage.rate, view_of(stage.result)});
  }
  for (const NamedResult& named : run.request_results) {
    model.requests.push_back(NamedView{named.name, view_of(named.result)});
  }
  model.scenarios = scenario_rows_of(run);
  return model;
}

void write_json_report(std::ostream& out, const RunInfo& info, const RunResult& run) {
  nlohmann::json document = to_json(run);
  document["protocol"] = info.protocol;
  if (!info.engine.empty()) document["engine"] = info.engine;
  // Request names come from user input: replace invalid UTF-8 rather than throw.
  out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

std::string protocol_description(const RunInfo& info) {
  if (info.protocol == "http1") return "HTTP/1.1";
  const std::string streams =
      std::to_string(info.max_streams) + (info.max_streams == 1 ? " stream" : " streams");
  return (info.protocol == "h2c" ? "HTTP/2 cleartext (h2c), " : "HTTP/2 over TLS (h2), ") +
         streams + " per connection";
}

std::string rounded_ms(double ms) {
  if (!std::isfinite(ms)) return "-";
  return std::to_string(std::llround(ms));
}

std::string grouped(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string text;
  text.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

std::string grouped_fixed(double value, int decimals) {
  std::string text = fixed(value, decimals);
  if (text == "-") return text;
  const size_t sign = text.front() == '-' ? 1 : 0;
  size_t end = text.find('.');
  if (end == std::string::npos) end = text.size();
  for (size_t digits = end - sign; digits > 3; digits -= 3) text.insert(sign + digits - 3, ",");
  return text;
}

std::string human_bytes(uint64_t bytes) {
  constexpr std::array<const char*, 6> kUnits = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  // Integer division picks the unit, so the choice is exact for all 64-bit
  // values; only the two printed decimals go through a double.
  size_t unit = 0;
  uint64_t divisor = 1024;
  while (unit + 1 < kUnits.size() && bytes / divisor >= 1024) {
    divisor *= 1024;
    ++unit;
  }
  return fixed(static_cast<double>(bytes) / static_cast<double>(divisor), 2) + " " + kUnits[unit];
}

std::string compact_number(double value) {
  std::string text = fixed(value, 2);
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string pad_left(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string pad_right(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size()) {
    throw std::invalid_argument("TextTable: row has " + std::to_string(cells.size()) +
                                " cells for " + std::to_string(columns_.size()) + " columns");
  }
  rows_.push_back(std::move(cells));
}

void TextTable::write(std::ostream& out, const std::string& indent) const {
  std::vector<size_t> widths;
  for (const Column& column : columns_) widths.push_back(column.header.size());
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  auto write_line = [&](auto cell_of) {
    std::string line = indent;
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (i != 0) line += "  ";
      const std::string& cell = cell_of(i);
      line +=
          columns_[i].align == Align::left ? pad_right(cell, widths[i]) : pad_left(cell, widths[i]);
    }
    // A left-aligned last column would leave trailing blanks.
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  write_line([&](size_t i) -> const std::string& { return columns_[i].header; });
  for (const auto& row : rows_) {
    write_line([&](size_t i) -> const std::string& { return row[i]; });
  }
}

}  // namespace report
}  // namespace kubeload::loadgen
