#pragma once
// The result of a run: one schema for `loadgen --format json`, a worker's
// /result and a LoadTest's status.result. A result carries its histograms, so
// results from any number of workers merge exactly and a merge is again a result.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kubeload/histogram.hpp"

namespace kubeload {

// How a request can fail. Every attempted request ends in exactly one outcome:
// success or one of these.
enum class ErrorKind {
  connect,
  timeout,
  read,
  write,
  status,
  length,
  dropped,
  rst_stream,
  goaway,
  extract,
  check
};
inline constexpr int kErrorKindCount = 11;
// Every kind, in the order reports and metrics list them.
inline constexpr std::array<ErrorKind, kErrorKindCount> kAllErrorKinds = {
    ErrorKind::connect, ErrorKind::timeout, ErrorKind::read,    ErrorKind::write,
    ErrorKind::status,  ErrorKind::length,  ErrorKind::dropped, ErrorKind::rst_stream,
    ErrorKind::goaway,  ErrorKind::extract, ErrorKind::check};
const char* to_string(ErrorKind kind) noexcept;

struct ErrorCounts {
  uint64_t connect = 0;  // could not connect (or TLS handshake failed)
  uint64_t timeout = 0;  // no complete response within the per-request timeout
  uint64_t read = 0;     // connection lost or malformed response while reading
  uint64_t write = 0;    // connection lost while sending the request
  uint64_t status = 0;   // complete response, unexpected status code
  uint64_t length = 0;   // complete response, body length differs from the expected one
  // Open model: intended but never sent, because no connection came free
  // within the timeout of its intended time (or the run was interrupted).
  uint64_t dropped = 0;
  // HTTP/2: the server reset the request's stream (RST_STREAM) ...
  uint64_t rst_stream = 0;
  // ... or went away (GOAWAY) before answering it.
  uint64_t goaway = 0;
  // Scenarios (docs/scenarios.md): a step's complete response in which an
  // extraction found nothing ...
  uint64_t extract = 0;
  // ... or a check of the response failed (its status and length were as expected).
  uint64_t check = 0;

  uint64_t& operator[](ErrorKind kind) noexcept;
  uint64_t operator[](ErrorKind kind) const noexcept;
  uint64_t total() const noexcept {
    return connect + timeout + read + write + status + length + dropped + rst_stream + goaway +
           extract + check;
  }
  void add(const ErrorCounts& other) noexcept;
  bool operator==(const ErrorCounts&) const = default;
};

// Open model only. Requests never sent are errors of kind `dropped`.
struct RateCounts {
  double target = 0;  // requests/s that were asked for
  uint64_t late = 0;  // sent 1 ms or more after their intended time
  bool operator==(const RateCounts&) const = default;
};

// https only: how the TLS connections were set up.
struct TlsCounts {
  uint64_t handshakes = 0;       // completed TLS handshakes
  uint64_t sessions_reused = 0;  // of those, resumed sessions (abbreviated handshakes)
  // Of those, the connections whose records the kernel then encrypted and
  // decrypted (kTLS, each direction on its own).
  uint64_t kernel_send = 0;
  uint64_t kernel_receive = 0;
  bool operator==(const TlsCounts&) const = default;
};

// Latency statistics in milliseconds, computed from a histogram of microseconds.
struct LatencySummary {
  double min = 0, mean = 0, stddev = 0, p50 = 0, p66 = 0, p75 = 0, p80 = 0, p90 = 0, p95 = 0,
         p98 = 0, p99 = 0, p999 = 0, max = 0;
  static LatencySummary of(const Histogram& micros);
  // Named accessor for threshold evaluation ("p99", "mean", ...); nullopt for unknown names.
  std::optional<double> get(std::string_view name) const noexcept;
};

// Each figure of a summary and its name in JSON ("latencyMs": {"p99": ...}),
// in the order the documents list them: the one spelling for its writer, get()
// and the readers of a status's rows.
inline constexpr std::array<std::pair<std::string_view, double LatencySummary::*>, 13>
    kLatencyFigures{{{"min", &LatencySummary::min},
                     {"mean", &LatencySummary::mean},
                     {"stddev", &LatencySummary::stddev},
                     {"p50", &LatencySummary::p50},
                     {"p66", &LatencySummary::p66},
                     {"p75", &LatencySummary::p75},
                     {"p80", &LatencySummary::p80},
                     {"p90", &LatencySummary::p90},
                     {"p95", &LatencySummary::p95},
                     {"p98", &LatencySummary::p98},
                     {"p99", &LatencySummary::p99},
                     {"p999", &LatencySummary::p999},
                     {"max", &LatencySummary::max}}};

struct Result {
  // Relations: requests = successes + errors.total(); failures = errors.total();
  // sum(status_codes) = requests that received a complete response
  // (successes + errors.status + errors.length + errors.extract +
  // errors.check: a step fails extraction or a check only after its whole
  // response arrived, so it is measured like a success); latency/waiting/connect hold
  // one value per complete response; error_latency one value per failure
  // without a complete response (connect, timeout, read, write, dropped,
  // rst_stream, goaway).
  uint64_t requests = 0;
  uint64_t bytes_received = 0;       // everything read from the server, headers included
  uint64_t body_bytes_received = 0;  // decoded response bodies only (ab's "HTML transferred")
  uint64_t bytes_sent = 0;
  // Phase wall time: a time-bounded phase ends at its planned end, a
  // count-bounded one when its last request ended. Merge takes the longest.
  double duration_seconds = 0;
  // After the planned end, until the requests still in flight completed or
  // timed out (they are counted, but their time is not in duration_seconds).
  double drain_seconds = 0;
  Histogram latency;        // us, intended send (open model) or send start -> last byte
  Histogram connect;        // us, 0 for a reused keep-alive connection (ab's Connect)
  Histogram waiting;        // us, request written -> first response byte (ab's Waiting)
  Histogram error_latency;  // us, like latency, for failures without a complete response
  std::map<int, uint64_t> status_codes;
  ErrorCounts errors;
  std::optional<RateCounts> rate;
  // Requests sent a second time because a kept-alive connection closed before
  // any of the response arrived (idempotent methods only, unless asked). A
  // retried request is still one request.
  uint64_t retries = 0;
  std::optional<TlsCounts> tls;

  uint64_t failures() const noexcept { return errors.total(); }
  double error_rate() const noexcept;
  double rps() const noexcept;
  void merge(const Result& other);
  bool operator==(const Result& other) const;
};

struct StageResult {
  int index = 0;
  double duration_seconds_planned = 0;
  std::optional<uint64_t> connections;  // closed model
  std::optional<double> rate;           // open model
  Result result;
};

struct NamedResult {
  std::string name;
  Result result;
};

// A scenario's iterations (docs/scenarios.md). Its steps' requests are
// request rows (RunResult::request_results, named by step) and in the
// headline result; this row counts whole iterations.
struct ScenarioResult {
  std::string name;
  uint64_t iterations = 0;  // ended: completed, or ended early by a failed step
  // Of those, the ones with a failed step (any error kind) or ended early.
  uint64_t iterations_failed = 0;
  // us, one value per ended iteration: from its start (its intended start in
  // the open model) to the end of its last step, think times included.
  Histogram duration;

  void merge(const ScenarioResult& other);
  bool operator==(const ScenarioResult& other) const = default;
};

// What one run produced: the headline result, one row per stage, one row per
// named request (or step), one row per scenario. This is the JSON document
// that loadgen prints and workers serve.
struct RunResult {
  static constexpr const char* kVersion = "v1";
  Result result;
  std::vector<StageResult> stages;
  std::vector<NamedResult> request_results;
  std::vector<ScenarioResult> scenarios;  // empty unless the run ran scenarios
  uint64_t warmup_requests = 0;           // sent during warm-up, not in `result`
  bool finished = true;                   // false for a partial result taken while running

  // Exact merge of concurrent runs (workers): stages by index, requests and
  // scenarios by name.
  void merge(const RunResult& other);
  // Every scenario's iteration durations in one histogram (`iteration.p95`).
  Histogram iteration_durations() const;
};

// JSON (api.md field names). with_histograms=false drops the histogram strings,
// for places (like a CR status) that show numbers only.
void to_json(nlohmann::json& out, const Result& r, bool with_histograms = true);
nlohmann::json to_json(const RunResult& run, bool with_histograms = true);
// Its "stages", "requestResults" and "scenarioResults" rows alone (a
// LoadTest's status shows them as numbers only). "scenarioResults" is in a
// document only when the run ran scenarios.
nlohmann::json stages_json(const RunResult& run, bool with_histograms);
nlohmann::json request_results_json(const RunResult& run, bool with_histograms);
nlohmann::json scenario_results_json(const RunResult& run, bool with_histograms);

// The exchange encoding (a worker's final result to the operator): the same
// fields and histograms a merge adds up, none of what a report derives from
// them (percentiles, rates, failure totals, scenario durations in ms), and
// no error kind that never happened nor empty histogram: run_result_from_json
// reads what is left out as zero or empty, so it reads back the same
// RunResult in a third of the text, which is most of what the operator's
// last pass over a thousand workers costs. Its histograms are compressed by
// default (what the operator keeps in a ConfigMap, whose size is limited); a
// worker sends them uncompressed (ResultDocumentWriter).
nlohmann::json to_exchange_json(const RunResult& run,
                                Histogram::Encoding histograms = Histogram::Encoding::compressed);

// The exchange document as text, written piece by piece so that a worker
// serves its final result without ever holding the whole text: the
// top-level fields and "result", then one piece per row of "stages", of
// "requestResults" and of "scenarioResults" (and the brackets between).
// `head` (a JSON object) adds top-level fields, such as a worker's index.
// Concatenated, the pieces parse to to_exchange_json(*run,
// Histogram::Encoding::uncompressed) with `head`'s fields added: a sixth to a
// third more text (recorded 10-stage, 5-request results: 13.5 -> 15.8 KB,
// 15.2 -> 18.9 KB, 16.9 -> 22.5 KB) that the operator reads without
// inflating, and the worker writes without deflating.
class ResultDocumentWriter {
 public:
  ResultDocumentWriter(std::shared_ptr<const RunResult> run, const nlohmann::json& head);
  // Replaces `piece` with the next piece; false once the document is complete.
  bool next(std::string& piece);

 private:
  std::shared_ptr<const RunResult> run_;
  std::string head_;  // the top-level fields, without the closing brace
  std::size_t next_ = 0;
};

// Throws std::invalid_argument naming the bad field.
Result result_from_json(const nlohmann::json& in);
RunResult run_result_from_json(const nlohmann::json& in);

}  // namespace kubeload
