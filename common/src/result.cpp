#include "kubeload/result.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "kubeload/json_fields.hpp"
#include "kubeload/limits.hpp"

namespace kubeload {
namespace {

using nlohmann::json;

double micros_to_ms(int64_t micros) {
  return static_cast<double>(micros) / 1000.0;
}

// Rounds to the microsecond, so JSON shows "12.345" rather than binary noise.
double round_ms(double ms) {
  return std::round(ms * 1000.0) / 1000.0;
}

json latency_json(const Histogram& h) {
  const LatencySummary s = LatencySummary::of(h);
  json out = json::object();
  for (const auto& [name, figure] : kLatencyFigures) out[std::string(name)] = s.*figure;
  return out;
}

using fields::bad_field;

// A count or number of the encoding: 0 when it is not there.
uint64_t get_count(const json& in, const char* key, const std::string& path) {
  return fields::count(in, key, path).value_or(0);
}

double get_number(const json& in, const char* key, const std::string& path) {
  return fields::number(in, key, path).value_or(0);
}

Histogram get_histogram(const json& in, const char* key, const std::string& path,
                        HistogramDecoder& decoder) {
  if (!in.contains(key)) return Histogram{};
  const json& v = in.at(key);
  if (!v.is_string()) bad_field(path + "." + key, "must be a string");
  try {
    // Workers record only the default layout; any other is refused before its
    // counts are allocated.
    return decoder.decode_base64(v.get_ref<const std::string&>(), Histogram::Layout{});
  } catch (const std::invalid_argument& e) {
    bad_field(path + "." + key, e.what());
  }
}

Result result_from_json_at(const json& in, const std::string& path, HistogramDecoder& decoder) {
  if (!in.is_object()) bad_field(path, "must be an object");
  Result r;
  r.requests = get_count(in, "requests", path);
  r.bytes_received = get_count(in, "bytesReceived", path);
  r.body_bytes_received = get_count(in, "bodyBytesReceived", path);
  r.bytes_sent = get_count(in, "bytesSent", path);
  r.duration_seconds = get_number(in, "durationSeconds", path);
  r.drain_seconds = get_number(in, "drainSeconds", path);
  r.latency = get_histogram(in, "histogram", path, decoder);
  r.connect = get_histogram(in, "connectHistogram", path, decoder);
  r.waiting = get_histogram(in, "waitingHistogram", path, decoder);
  r.error_latency = get_histogram(in, "errorHistogram", path, decoder);
  if (in.contains("statusCodes")) {
    const json& codes = in.at("statusCodes");
    if (!codes.is_object()) bad_field(path + ".statusCodes", "must be an object");
    for (const auto& [code, count] : codes.items()) {
      int status = 0;
      try {
        size_t used = 0;
        status = std::stoi(code, &used);
        if (used != code.size()) throw std::invalid_argument(code);
      } catch (const std::exception&) {
        bad_field(path + ".statusCodes", "key \"" + code + "\" is not a status code");
      }
      if (!count.is_number_unsigned()) {
        bad_field(path + ".statusCodes." + code, "must be a non-negative integer");
      }
      r.status_codes[status] = count.get<uint64_t>();
    }
  }
  if (in.contains("errors")) {
    const json& errors = in.at("errors");
    if (!errors.is_object()) bad_field(path + ".errors", "must be an object");
    for (ErrorKind kind : kAllErrorKinds) {
      r.errors[kind] = get_count(errors, to_string(kind), path + ".errors");
    }
  }
  if (in.contains("rate")) {
    const json& rate = in.at("rate");
    if (!rate.is_object()) bad_field(path + ".rate", "must be an object");
    // rate.dropped is written for readers of the rate block; the count
    // itself is errors.dropped.
    r.rate = RateCounts{get_number(rate, "target", path + ".rate"),
                        get_count(rate, "late", path + ".rate")};
  }
  r.retries = get_count(in, "retries", path);
  if (in.contains("tls")) {
    const json& tls = in.at("tls");
    if (!tls.is_object()) bad_field(path + ".tls", "must be an object");
    r.tls = TlsCounts{get_count(tls, "handshakes", path + ".tls"),
                      get_count(tls, "sessionsReused", path + ".tls"),
                      get_count(tls, "kernelSend", path + ".tls"),
                      get_count(tls, "kernelReceive", path + ".tls")};
    for (const auto& [key, count] : {std::pair{"sessionsReused", r.tls->sessions_reused},
                                     std::pair{"kernelSend", r.tls->kernel_send},
                                     std::pair{"kernelReceive", r.tls->kernel_receive}}) {
      if (count > r.tls->handshakes) {
        bad_field(path + ".tls." + key, "is " + std::to_string(count) + " but only " +
                                            std::to_string(r.tls->handshakes) +
                                            " handshakes completed");
      }
    }
  }
  const uint64_t failures = get_count(in, "failures", path);
  if (in.contains("failures") && failures != r.errors.total()) {
    bad_field(path + ".failures", "is " + std::to_string(failures) + " but the errors add up to " +
                                      std::to_string(r.errors.total()));
  }
  return r;
}

ScenarioResult scenario_from_json_at(const json& in, const std::string& path,
                                     HistogramDecoder& decoder) {
  if (!in.is_object()) bad_field(path, "must be an object");
  if (!in.contains("name") || !in.at("name").is_string()) bad_field(path + ".name", "is required");
  ScenarioResult scenario;
  scenario.name = in.at("name").get<std::string>();
  scenario.iterations = get_count(in, "iterations", path);
  scenario.iterations_failed = get_count(in, "failedIterations", path);
  if (scenario.iterations_failed > scenario.iterations) {
    bad_field(path + ".failedIterations", "is " + std::to_string(scenario.iterations_failed) +
                                              ", more than the " +
                                              std::to_string(scenario.iterations) + " iterations");
  }
  scenario.duration = get_histogram(in, "histogram", path, decoder);
  // One duration per ended iteration (a row without its histogram, as a
  // status shows it, has none to compare).
  if (in.contains("histogram") && scenario.duration.total_count() != scenario.iterations) {
    bad_field(path + ".histogram", "holds " + std::to_string(scenario.duration.total_count()) +
                                       " durations for " + std::to_string(scenario.iterations) +
                                       " iterations");
  }
  return scenario;
}

std::string layout_of(const Histogram& h) {
  return std::to_string(h.lowest_discernible()) + "/" + std::to_string(h.highest_trackable()) +
         "/" + std::to_string(h.significant_digits());
}

void require_same_layout(const Histogram& reference, const Histogram& h, const std::string& where) {
  if (!reference.same_layout(h)) {
    throw std::invalid_argument("cannot merge results: a histogram of " + where + " has layout " +
                                layout_of(h) + " (lowest/highest/digits), expected " +
                                layout_of(reference));
  }
}

void require_same_layouts(const Histogram& reference, const Result& r, const std::string& where) {
  for (const Histogram* h : {&r.latency, &r.connect, &r.waiting}) {
    require_same_layout(reference, *h, where);
  }
}

}  // namespace

const char* to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::connect:
      return "connect";
    case ErrorKind::timeout:
      return "timeout";
    case ErrorKind::read:
      return "read";
    case ErrorKind::write:
      return "write";
    case ErrorKind::status:
      return "status";
    case ErrorKind::length:
      return "length";
    case ErrorKind::dropped:
      return "dropped";
    case ErrorKind::rst_stream:
      return "rstStream";
    case ErrorKind::goaway:
      return "goaway";
    case ErrorKind::extract:
      return "extract";
    case ErrorKind::check:
      return "check";
  }
  return "unknown";
}

uint64_t& ErrorCounts::operator[](ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::connect:
      return connect;
    case ErrorKind::timeout:
      return timeout;
    case ErrorKind::read:
      return read;
    case ErrorKind::write:
      return write;
    case ErrorKind::status:
      return status;
    case ErrorKind::length:
      return length;
    case ErrorKind::dropped:
      return dropped;
    case ErrorKind::rst_stream:
      return rst_stream;
    case ErrorKind::goaway:
      return goaway;
    case ErrorKind::extract:
      return extract;
    case ErrorKind::check:
      return check;
  }
  return read;
}

uint64_t ErrorCounts::operator[](ErrorKind kind) const noexcept {
  return const_cast<ErrorCounts&>(*this)[kind];
}

void ErrorCounts::add(const ErrorCounts& other) noexcept {
  for (ErrorKind kind : kAllErrorKinds) (*this)[kind] += other[kind];
}

LatencySummary LatencySummary::of(const Histogram& micros) {
  LatencySummary s;
  if (micros.total_count() == 0) return s;
  auto at = [&](double p) { return micros_to_ms(micros.value_at_percentile(p)); };
  s.min = micros_to_ms(micros.min());
  s.mean = round_ms(micros.mean() / 1000.0);
  s.stddev = round_ms(micros.stddev() / 1000.0);
  s.p50 = at(50);
  s.p66 = at(66);
  s.p75 = at(75);
  s.p80 = at(80);
  s.p90 = at(90);
  s.p95 = at(95);
  s.p98 = at(98);
  s.p99 = at(99);
  s.p999 = at(99.9);
  s.max = micros_to_ms(micros.max());
  return s;
}

std::optional<double> LatencySummary::get(std::string_view name) const noexcept {
  for (const auto& [field, figure] : kLatencyFigures) {
    if (field == name) return this->*figure;
  }
  return std::nullopt;
}

double Result::error_rate() const noexcept {
  return requests == 0 ? 0.0 : static_cast<double>(failures()) / static_cast<double>(requests);
}

double Result::rps() const noexcept {
  return duration_seconds <= 0 ? 0.0 : static_cast<double>(requests) / duration_seconds;
}

void Result::merge(const Result& other) {
  // Checked before anything changes, so a result that cannot merge leaves this one as it was.
  require_same_layouts(latency, other, "the result");
  require_same_layouts(latency, *this, "the result");
  requests += other.requests;
  bytes_received += other.bytes_received;
  body_bytes_received += other.body_bytes_received;
  bytes_sent += other.bytes_sent;
  // Workers run side by side: the merged run lasted as long as the longest one.
  duration_seconds = std::max(duration_seconds, other.duration_seconds);
  drain_seconds = std::max(drain_seconds, other.drain_seconds);
  latency.add(other.latency);
  error_latency.add(other.error_latency);
  connect.add(other.connect);
  waiting.add(other.waiting);
  for (const auto& [code, count] : other.status_codes) status_codes[code] += count;
  errors.add(other.errors);
  if (other.rate) {
    if (!rate) rate = RateCounts{};
    rate->target += other.rate->target;
    rate->late += other.rate->late;
  }
  retries += other.retries;
  if (other.tls) {
    if (!tls) tls = TlsCounts{};
    tls->handshakes += other.tls->handshakes;
    tls->sessions_reused += other.tls->sessions_reused;
    tls->kernel_send += other.tls->kernel_send;
    tls->kernel_receive += other.tls->kernel_receive;
  }
}

bool Result::operator==(const Result& other) const {
  return requests == other.requests && bytes_received == other.bytes_received &&
         body_bytes_received == other.body_bytes_received && bytes_sent == other.bytes_sent &&
         duration_seconds == other.duration_seconds && drain_seconds == other.drain_seconds &&
         latency == other.latency && error_latency == other.error_latency &&
         connect == other.connect && waiting == other.waiting &&
         status_codes == other.status_codes && errors == other.errors && rate == other.rate &&
         retries == other.retries && tls == other.tls;
}

void ScenarioResult::merge(const ScenarioResult& other) {
  require_same_layout(duration, other.duration, "scenario \"" + other.name + "\"");
  iterations += other.iterations;
  iterations_failed += other.iterations_failed;
  duration.add(other.duration);
}

Histogram RunResult::iteration_durations() const {
  Histogram all;
  for (const ScenarioResult& scenario : scenarios) all.add(scenario.duration);
  return all;
}

void RunResult::merge(const RunResult& other) {
  // Every histogram of both runs is checked before anything changes: a run
  // that cannot merge (a histogram of another layout, decoded from a
  // worker's document) leaves this one as it was.
  for (const RunResult* run : {static_cast<const RunResult*>(this), &other}) {
    require_same_layouts(result.latency, run->result, "the result");
    for (const StageResult& stage : run->stages) {
      require_same_layouts(result.latency, stage.result, "stage " + std::to_string(stage.index));
    }
    for (const NamedResult& named : run->request_results) {
      require_same_layouts(result.latency, named.result, "request \"" + named.name + "\"");
    }
    for (const ScenarioResult& scenario : run->scenarios) {
      require_same_layout(result.latency, scenario.duration, "scenario \"" + scenario.name + "\"");
    }
  }
  result.merge(other.result);
  warmup_requests += other.warmup_requests;
  finished = finished && other.finished;
  for (const StageResult& theirs : other.stages) {
    auto mine = std::find_if(stages.begin(), stages.end(),
                             [&](const StageResult& s) { return s.index == theirs.index; });
    if (mine == stages.end()) {
      stages.push_back(theirs);
      continue;
    }
    mine->result.merge(theirs.result);
    if (theirs.connections) mine->connections = mine->connections.value_or(0) + *theirs.connections;
    if (theirs.rate) mine->rate = mine->rate.value_or(0) + *theirs.rate;
    mine->duration_seconds_planned =
        std::max(mine->duration_seconds_planned, theirs.duration_seconds_planned);
  }
  std::sort(stages.begin(), stages.end(),
            [](const StageResult& a, const StageResult& b) { return a.index < b.index; });
  for (const NamedResult& theirs : other.request_results) {
    auto mine = std::find_if(request_results.begin(), request_results.end(),
                             [&](const NamedResult& r) { return r.name == theirs.name; });
    if (mine == request_results.end()) {
      request_results.push_back(theirs);
    } else {
      mine->result.merge(theirs.result);
    }
  }
  for (const ScenarioResult& theirs : other.scenarios) {
    auto mine = std::find_if(scenarios.begin(), scenarios.end(),
                             [&](const ScenarioResult& s) { return s.name == theirs.name; });
    if (mine == scenarios.end()) {
      scenarios.push_back(theirs);
    } else {
      mine->merge(theirs);
    }
  }
}

namespace {

// What a row carries: a report's (counters and every summary, with or
// without the histograms), or the exchange's (what merges exactly and
// nothing derived from it), its histograms compressed (kept in a ConfigMap,
// whose size is limited) or not (a worker's final result: no zlib either side).
enum class RowForm { report, report_with_histograms, exchange, exchange_uncompressed };

bool is_exchange(RowForm form) {
  return form == RowForm::exchange || form == RowForm::exchange_uncompressed;
}

// Whether a row of this form carries histogram `h`: a report's with
// histograms always; the exchange's unless it is empty, which a reader
// takes as empty when it is left out (result_from_json_at).
bool carries(RowForm form, const Histogram& h) {
  return form == RowForm::report_with_histograms || (is_exchange(form) && h.total_count() != 0);
}

std::string encoded(RowForm form, const Histogram& h) {
  return h.encode_base64(form == RowForm::exchange_uncompressed ? Histogram::Encoding::uncompressed
                                                                : Histogram::Encoding::compressed);
}

// The facts a merge adds up, as every form spells them. The exchange leaves
// out what reads as zero or empty when absent (result_from_json_at's
// defaults): an error kind that never happened, an empty histogram.
void write_mergeable(json& out, const Result& r, RowForm form) {
  const bool exchange = is_exchange(form);
  out["requests"] = r.requests;
  out["durationSeconds"] = r.duration_seconds;
  out["drainSeconds"] = r.drain_seconds;
  out["bytesReceived"] = r.bytes_received;
  out["bodyBytesReceived"] = r.body_bytes_received;
  out["bytesSent"] = r.bytes_sent;
  json codes = json::object();
  for (const auto& [code, count] : r.status_codes) codes[std::to_string(code)] = count;
  out["statusCodes"] = std::move(codes);
  json errors = json::object();
  for (ErrorKind kind : kAllErrorKinds) {
    if (!exchange || r.errors[kind] != 0) errors[to_string(kind)] = r.errors[kind];
  }
  out["errors"] = std::move(errors);
  if (r.rate) {
    out["rate"] = {{"target", r.rate->target}, {"late", r.rate->late}};
    // For readers of the rate block; the count itself is errors.dropped.
    if (!exchange) out["rate"]["dropped"] = r.errors.dropped;
  }
  out["retries"] = r.retries;
  if (r.tls) {
    out["tls"] = {{"handshakes", r.tls->handshakes},
                  {"sessionsReused", r.tls->sessions_reused},
                  {"kernelSend", r.tls->kernel_send},
                  {"kernelReceive", r.tls->kernel_receive}};
  }
  const auto histogram = [&](const char* key, const Histogram& h) {
    if (carries(form, h)) out[key] = encoded(form, h);
  };
  histogram("histogram", r.latency);
  histogram("connectHistogram", r.connect);
  histogram("waitingHistogram", r.waiting);
  histogram("errorHistogram", r.error_latency);
}

// What a report shows beside the facts, all derived from them.
void write_summaries(json& out, const Result& r) {
  out["failures"] = r.failures();
  out["errorRate"] = r.error_rate();
  out["rps"] = std::round(r.rps() * 10.0) / 10.0;
  out["latencyMs"] = latency_json(r.latency);
  out["connectMs"] = latency_json(r.connect);
  out["waitingMs"] = latency_json(r.waiting);
  out["errorLatencyMs"] = latency_json(r.error_latency);
}

void write_row(json& out, const Result& r, RowForm form) {
  write_mergeable(out, r, form);
  if (!is_exchange(form)) write_summaries(out, r);
}

RowForm report_form(bool with_histograms) {
  return with_histograms ? RowForm::report_with_histograms : RowForm::report;
}

// The document's rows, shared by to_json, to_exchange_json and
// ResultDocumentWriter.
json document_head(const RunResult& run) {
  return {{"version", RunResult::kVersion},
          {"finished", run.finished},
          {"warmupRequests", run.warmup_requests}};
}

json result_row(const Result& result, RowForm form) {
  json row;
  write_row(row, result, form);
  return row;
}

json stage_row(const StageResult& stage, RowForm form) {
  json row;
  row["index"] = stage.index;
  row["plannedDurationSeconds"] = stage.duration_seconds_planned;
  if (stage.connections) row["connections"] = *stage.connections;
  if (stage.rate) row["targetRate"] = *stage.rate;
  write_row(row, stage.result, form);
  return row;
}

json request_row(const NamedResult& named, RowForm form) {
  json row;
  row["name"] = named.name;
  write_row(row, named.result, form);
  return row;
}

json scenario_row(const ScenarioResult& scenario, RowForm form) {
  json row;
  row["name"] = scenario.name;
  row["iterations"] = scenario.iterations;
  row["failedIterations"] = scenario.iterations_failed;
  if (!is_exchange(form)) row["durationMs"] = latency_json(scenario.duration);
  if (carries(form, scenario.duration)) row["histogram"] = encoded(form, scenario.duration);
  return row;
}

template <typename Row, typename Write>
json rows_json(const std::vector<Row>& rows, RowForm form, Write write) {
  json out = json::array();
  for (const Row& row : rows) out.push_back(write(row, form));
  return out;
}

json document_json(const RunResult& run, RowForm form) {
  json out = document_head(run);
  out["result"] = result_row(run.result, form);
  out["stages"] = rows_json(run.stages, form, stage_row);
  out["requestResults"] = rows_json(run.request_results, form, request_row);
  if (!run.scenarios.empty()) out["scenarioResults"] = rows_json(run.scenarios, form, scenario_row);
  return out;
}

}  // namespace

void to_json(json& out, const Result& r, bool with_histograms) {
  write_row(out, r, report_form(with_histograms));
}

json stages_json(const RunResult& run, bool with_histograms) {
  return rows_json(run.stages, report_form(with_histograms), stage_row);
}

json request_results_json(const RunResult& run, bool with_histograms) {
  return rows_json(run.request_results, report_form(with_histograms), request_row);
}

json scenario_results_json(const RunResult& run, bool with_histograms) {
  return rows_json(run.scenarios, report_form(with_histograms), scenario_row);
}

json to_json(const RunResult& run, bool with_histograms) {
  return document_json(run, report_form(with_histograms));
}

json to_exchange_json(const RunResult& run, Histogram::Encoding histograms) {
  return document_json(run, histograms == Histogram::Encoding::uncompressed
                                ? RowForm::exchange_uncompressed
                                : RowForm::exchange);
}

ResultDocumentWriter::ResultDocumentWriter(std::shared_ptr<const RunResult> run, const json& head)
    : run_(std::move(run)) {
  if (!head.is_object()) throw std::invalid_argument("a result document's head must be an object");
  json fields = document_head(*run_);
  fields.update(head);
  head_ = fields.dump();
  head_.pop_back();  // the closing brace: the rows follow
}

bool ResultDocumentWriter::next(std::string& piece) {
  // Pieces: the head, "result" and the opening of "stages"; a piece per
  // stage row; the step from "stages" to "requestResults"; a piece per
  // request row; with scenarios, the step to "scenarioResults" and a piece
  // per scenario row; the end.
  const std::size_t stages = run_->stages.size();
  const std::size_t requests = run_->request_results.size();
  const std::size_t scenarios = run_->scenarios.size();
  // The first piece after the request rows.
  const std::size_t after_requests = stages + requests + 2;
  const std::size_t at = next_;
  constexpr RowForm kForm = RowForm::exchange_uncompressed;
  piece.clear();
  if (at == 0) {
    piece = head_ + ",\"result\":" + result_row(run_->result, kForm).dump() + ",\"stages\":[";
  } else if (at <= stages) {
    if (at > 1) piece = ",";
    piece += stage_row(run_->stages[at - 1], kForm).dump();
  } else if (at == stages + 1) {
    piece = "],\"requestResults\":[";
  } else if (at <= stages + 1 + requests) {
    if (at > stages + 2) piece = ",";
    piece += request_row(run_->request_results[at - stages - 2], kForm).dump();
  } else if (scenarios > 0 && at == after_requests) {
    piece = "],\"scenarioResults\":[";
  } else if (scenarios > 0 && at <= after_requests + scenarios) {
    if (at > after_requests + 1) piece = ",";
    piece += scenario_row(run_->scenarios[at - after_requests - 1], kForm).dump();
  } else if (at == after_requests + (scenarios > 0 ? scenarios + 1 : 0)) {
    piece = "]}";
  } else {
    return false;
  }
  ++next_;
  return true;
}

Result result_from_json(const json& in) {
  HistogramDecoder decoder;
  return result_from_json_at(in, "result", decoder);
}

RunResult run_result_from_json(const json& in) {
  if (!in.is_object()) bad_field("", "a result document must be a JSON object");
  // Checked for their type before they are read: json::value() throws
  // nlohmann's type_error, not the invalid_argument every reader catches.
  const auto version = in.find("version");
  if (version == in.end() || !version->is_string() || *version != RunResult::kVersion) {
    bad_field("version", std::string("must be \"") + RunResult::kVersion + "\", got " +
                             (version == in.end() ? "nothing" : version->dump()));
  }
  HistogramDecoder decoder;  // one for the document's dozens of histograms
  RunResult run;
  if (const auto finished = in.find("finished"); finished != in.end()) {
    if (!finished->is_boolean()) bad_field("finished", "must be true or false");
    run.finished = finished->get<bool>();
  }
  run.warmup_requests = get_count(in, "warmupRequests", "");
  if (!in.contains("result")) bad_field("result", "is required");
  run.result = result_from_json_at(in.at("result"), "result", decoder);
  if (in.contains("stages")) {
    const json& stages = in.at("stages");
    if (!stages.is_array()) bad_field("stages", "must be an array");
    if (stages.size() > kMaxStages) {
      bad_field("stages", "at most " + std::to_string(kMaxStages) + " rows (one per stage of a " +
                              "spec), got " + std::to_string(stages.size()));
    }
    for (size_t i = 0; i < stages.size(); ++i) {
      const std::string path = "stages[" + std::to_string(i) + "]";
      const json& row = stages[i];
      StageResult stage;
      stage.result = result_from_json_at(row, path, decoder);
      stage.index = static_cast<int>(get_count(row, "index", path));
      stage.duration_seconds_planned = get_number(row, "plannedDurationSeconds", path);
      if (row.contains("connections")) stage.connections = get_count(row, "connections", path);
      if (row.contains("targetRate")) stage.rate = get_number(row, "targetRate", path);
      run.stages.push_back(std::move(stage));
    }
  }
  if (in.contains("requestResults")) {
    const json& rows = in.at("requestResults");
    if (!rows.is_array()) bad_field("requestResults", "must be an array");
    if (rows.size() > kMaxRequests) {
      bad_field("requestResults", "at most " + std::to_string(kMaxRequests) +
                                      " rows (one per request of a spec), got " +
                                      std::to_string(rows.size()));
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string path = "requestResults[" + std::to_string(i) + "]";
      if (!rows[i].is_object() || !rows[i].contains("name") || !rows[i].at("name").is_string()) {
        bad_field(path + ".name", "is required");
      }
      run.request_results.push_back(NamedResult{rows[i].at("name").get<std::string>(),
                                                result_from_json_at(rows[i], path, decoder)});
    }
  }
  if (in.contains("scenarioResults")) {
    const json& rows = in.at("scenarioResults");
    if (!rows.is_array()) bad_field("scenarioResults", "must be an array");
    if (rows.size() > kMaxScenarios) {
      bad_field("scenarioResults", "at most " + std::to_string(kMaxScenarios) +
                                       " rows (one per scenario of a spec), got " +
                                       std::to_string(rows.size()));
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      run.scenarios.push_back(
          scenario_from_json_at(rows[i], "scenarioResults[" + std::to_string(i) + "]", decoder));
    }
  }
  return run;
}

}  // namespace kubeload
