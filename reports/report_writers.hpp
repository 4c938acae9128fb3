#pragma once
// Private to the report writers (report*.cpp) and their tests.
//
// Every report is computed in two steps: build_report_model() turns the merged
// RunResult into the numbers a reader sees (rates, percentages, latency
// summaries, the ab-style Processing estimate), doing every division once and
// guarding each against zero; then one writer per format lays those numbers
// out. Writers never look at histograms or divide by a measured quantity, so
// no format can print nan/inf, and the formats cannot disagree about a number.

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kubeload/result.hpp"
#include "kubeload/text.hpp"
#include "reports/run_info.hpp"
#include "reports/scenario_row.hpp"

namespace kubeload::loadgen::report {

// ab's Processing row is per-request (total - connect); we only keep the two
// histograms, so build_report_model() estimates it (see processing_estimate).
struct ProcessingEstimate {
  double min = 0, mean = 0, stddev = 0, median = 0, max = 0;  // ms
};

// The derived numbers of one Result: the whole run, a stage or a named request.
struct ResultView {
  uint64_t requests = 0;
  uint64_t successes = 0;
  uint64_t failures = 0;
  double failure_percent = 0;
  ErrorCounts errors;
  std::map<int, uint64_t> status_codes;
  uint64_t complete_responses = 0;  // responses with a status line: one latency sample each
  uint64_t non_2xx_responses = 0;
  uint64_t reused_connection_responses = 0;  // connect time 0: sent on a kept-alive connection
  double duration_seconds = 0;
  double drain_seconds = 0;  // after the planned end, until the last request ended
  double requests_per_second = 0;
  uint64_t bytes_received = 0;
  uint64_t body_bytes_received = 0;
  uint64_t bytes_sent = 0;
  double bytes_received_per_second = 0;
  double bytes_sent_per_second = 0;
  LatencySummary total;  // ms, from the latency histogram
  LatencySummary waiting;
  LatencySummary connect;
  uint64_t failed_without_response = 0;  // one error_latency sample each
  LatencySummary failed;                 // ms, how long those failures took
  ProcessingEstimate processing;
  std::optional<RateCounts> rate;  // open model only
  uint64_t retries = 0;            // resent after a kept-alive connection closed under them
  std::optional<TlsCounts> tls;    // https only
};

struct StageView {
  int index = 0;
  double planned_seconds = 0;
  std::optional<uint64_t> connections;
  std::optional<double> rate;
  ResultView result;
};

struct NamedView {
  std::string name;
  ResultView result;
};

struct ReportModel {
  RunInfo info;
  bool open_model = false;
  double target_rate = 0;  // open model: requests/s asked for
  uint64_t warmup_requests = 0;
  bool finished = true;
  // ab's two "Time per request" lines. The first is concurrency x wall time /
  // requests, Little's law's estimate of the mean latency; the open model has
  // no fixed concurrency, so there it is the measured mean latency instead.
  double time_per_request_ms = 0;
  double time_per_request_across_ms = 0;  // wall time / requests
  ResultView run;
  std::vector<StageView> stages;
  std::vector<NamedView> requests;  // named requests, or a scenario run's steps
  std::vector<ScenarioRow> scenarios;
};

ReportModel build_report_model(const RunInfo& info, const RunResult& run);
ResultView view_of(const Result& result);
// ab's Processing row from the total and connect summaries (report.cpp says how).
ProcessingEstimate processing_estimate(const LatencySummary& total, const LatencySummary& connect);

void write_text_report(std::ostream& out, const ReportModel& model);
void write_ab_report(std::ostream& out, const ReportModel& model);
void write_jmeter_report(std::ostream& out, const ReportModel& model);
// The JSON document is the result schema itself (api.md), not a view of it.
void write_json_report(std::ostream& out, const RunInfo& info, const RunResult& run);

// Number formatting shared by the writers. Locale-independent (std::to_chars),
// and a non-finite value prints as "-" so no report ever shows nan or inf.
using kubeload::fixed;
std::string rounded_ms(double ms);                      // ab and JMeter print whole ms
std::string grouped(uint64_t value);                    // 1234567 -> "1,234,567"
std::string grouped_fixed(double value, int decimals);  // 12500.04, 1 -> "12,500.0"
std::string human_bytes(uint64_t bytes);                // "512 B", "1.50 KiB", ..., "16.00 EiB"
std::string compact_number(double value);               // at most 2 decimals, no trailing zeros
// "HTTP/1.1", "HTTP/2 over TLS (h2), 8 streams per connection", "HTTP/2
// cleartext (h2c), 1 stream per connection".
std::string protocol_description(const RunInfo& info);
std::string pad_left(const std::string& text, size_t width);   // right-aligns
std::string pad_right(const std::string& text, size_t width);  // left-aligns

// A plain-text table: columns as wide as their widest cell, separated by two
// spaces; left-aligned columns for labels, right-aligned for numbers.
class TextTable {
 public:
  enum class Align { left, right };
  struct Column {
    std::string header;
    Align align = Align::right;
  };
  explicit TextTable(std::vector<Column> columns);
  void add_row(std::vector<std::string> cells);  // one cell per column
  void write(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// JMeter's Aggregate Report table, empty, and one row of it: what
// write_jmeter_report lays out, for an experiment's one row per variant.
TextTable jmeter_table();
std::vector<std::string> jmeter_row(std::string label, const ResultView& result);

// The text report's table of scenario rows (name, iterations, per second,
// failed, failed %, duration p50/p95/p99/max in ms), after a title line;
// the gate text shares it.
void write_scenario_table(std::ostream& out, const std::vector<ScenarioRow>& scenarios);

}  // namespace kubeload::loadgen::report
