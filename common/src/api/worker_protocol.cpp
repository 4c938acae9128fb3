#include "kubeload/api/worker_protocol.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "kubeload/json_fields.hpp"

namespace kubeload::api {
namespace {

using nlohmann::json;

// The JSON names, once each.
constexpr const char* kStarted = "started";
constexpr const char* kWorker = "worker";
constexpr const char* kStartAt = "startAt";
constexpr const char* kLoadTestUid = "loadTestUid";
constexpr const char* kStartedAtMs = "startedAtMs";
constexpr const char* kClockMs = "clockMs";
constexpr const char* kError = "error";
constexpr const char* kVersion = "version";
constexpr const char* kFinished = "finished";
constexpr const char* kWarmupRequests = "warmupRequests";
constexpr const char* kResult = "result";
constexpr const char* kStage = "stage";
constexpr const char* kRequests = "requests";
constexpr const char* kFailures = "failures";
constexpr const char* kRps = "rps";
constexpr const char* kDurationSeconds = "durationSeconds";
constexpr const char* kP50Ms = "p50Ms";
constexpr const char* kP99Ms = "p99Ms";
constexpr const char* kMaxMs = "maxMs";
constexpr const char* kBytesReceived = "bytesReceived";
constexpr const char* kCpu = "cpu";
constexpr const char* kSeconds = "seconds";
constexpr const char* kWindowSeconds = "windowSeconds";
constexpr const char* kLimitCores = "limitCores";
constexpr const char* kCores = "cores";
constexpr const char* kUtilization = "utilization";

// A number of a CPU use: finite and not negative (a forged document may
// say anything).
std::optional<double> amount(const json& in, std::string_view key, const std::string& path) {
  const std::optional<double> value = fields::number(in, key, path);
  if (value && !(std::isfinite(*value) && *value >= 0)) {
    fields::bad_field(fields::at(path, key),
                      "must be a finite number of at least 0, got " + fields::shown(in.at(key)));
  }
  return value;
}

}  // namespace

// ---- POST /start

json to_json(const StartAnswer& answer) {
  return {{kStarted, answer.started}, {kWorker, answer.worker}, {kStartAt, answer.start_at_ms}};
}

StartAnswer start_answer_from_json(const json& in) {
  fields::require_object(in, "a /start answer");
  StartAnswer answer;
  answer.started = fields::boolean(in, kStarted, "").value_or(false);
  answer.worker = fields::index(in, kWorker, "").value_or(0);
  answer.start_at_ms = fields::integer(in, kStartAt, "").value_or(0);
  return answer;
}

// ---- GET /result

json to_json(const ResultHead& head) {
  json out = {{kWorker, head.worker},
              {kLoadTestUid, head.loadtest_uid},
              {kStartedAtMs, head.started_at_ms.value_or(0)}};
  if (!head.error.empty()) out[kError] = head.error;
  if (head.clock_ms) out[kClockMs] = *head.clock_ms;
  if (head.cpu) out[kCpu] = generator_cpu_json(*head.cpu);
  return out;
}

ResultHead result_head_from_json(const json& document) {
  fields::require_object(document, "a result document");
  ResultHead head;
  head.worker = fields::index(document, kWorker, "").value_or(0);
  head.loadtest_uid = fields::text(document, kLoadTestUid, "").value_or("");
  // Before the run starts a worker writes 0: unset.
  if (const auto started = fields::integer(document, kStartedAtMs, ""); started && *started > 0) {
    head.started_at_ms = started;
  }
  head.error = fields::text(document, kError, "").value_or("");
  head.clock_ms = fields::integer(document, kClockMs, "");
  if (const json* cpu = fields::find(document, kCpu)) {
    head.cpu = generator_cpu_from_json(*cpu, kCpu);
  }
  return head;
}

json to_json(const ResultDocument& document) {
  json out = to_exchange_json(document.run, Histogram::Encoding::uncompressed);
  out.update(to_json(document.head));
  return out;
}

ResultDocument result_document_from_json(const json& in) {
  ResultDocument document;
  document.head = result_head_from_json(in);
  document.run = run_result_from_json(in);
  return document;
}

json to_json(const ProgressDocument& progress) {
  json out;
  out[kVersion] = RunResult::kVersion;
  out[kFinished] = false;
  out[kWarmupRequests] = progress.warmup_requests;
  kubeload::to_json(out[kResult], progress.result, false);
  out[kStage] = progress.stage;
  out.update(to_json(progress.head));
  return out;
}

ProgressDocument progress_document_from_json(const json& in) {
  ProgressDocument progress;
  progress.head = result_head_from_json(in);
  // The version and the counters as every result document has them.
  const RunResult run = run_result_from_json(in);
  if (run.finished) fields::bad_field(kFinished, "must be false in a progress document");
  progress.warmup_requests = run.warmup_requests;
  progress.result = run.result;
  const std::optional<int64_t> stage = fields::integer(in, kStage, "");
  if (stage && (*stage < -1 || *stage > std::numeric_limits<int>::max())) {
    fields::bad_field(kStage,
                      "must be a stage's index or -1 (the warm-up), got " + std::to_string(*stage));
  }
  progress.stage = static_cast<int>(stage.value_or(-1));
  return progress;
}

json generator_cpu_json(const GeneratorCpu& cpu) {
  json out = {{kSeconds, cpu.seconds},
              {kWindowSeconds, cpu.window_seconds},
              {kCores, cpu.cores},
              {kUtilization, cpu.utilization}};
  if (cpu.limit_cores) out[kLimitCores] = *cpu.limit_cores;
  return out;
}

GeneratorCpu generator_cpu_from_json(const json& in, const std::string& path) {
  fields::require_object(in, path);
  GeneratorCpu cpu;
  const auto required = [&](std::string_view key) {
    const std::optional<double> value = amount(in, key, path);
    if (!value) fields::bad_field(fields::at(path, key), "is required");
    return *value;
  };
  cpu.seconds = required(kSeconds);
  cpu.window_seconds = required(kWindowSeconds);
  cpu.cores = required(kCores);
  if (!(cpu.cores > 0)) {
    fields::bad_field(fields::at(path, kCores),
                      "must be above 0, got " + fields::shown(in.at(kCores)));
  }
  cpu.utilization = required(kUtilization);
  cpu.limit_cores = amount(in, kLimitCores, path);
  if (cpu.limit_cores && !(*cpu.limit_cores > 0)) {
    fields::bad_field(fields::at(path, kLimitCores),
                      "must be above 0, got " + fields::shown(in.at(kLimitCores)));
  }
  return cpu;
}

// ---- POST /finish

json to_json(const FinishAnswer& answer) {
  return {{kFinished, answer.finished}};
}

FinishAnswer finish_answer_from_json(const json& in) {
  fields::require_object(in, "a /finish answer");
  return FinishAnswer{fields::boolean(in, kFinished, "").value_or(false)};
}

// ---- the termination message

TerminationSummary TerminationSummary::of(const RunResult& run, const std::string& error) {
  const Result& r = run.result;
  const LatencySummary latency = LatencySummary::of(r.latency);
  TerminationSummary summary;
  summary.requests = r.requests;
  summary.failures = r.failures();
  summary.rps = r.rps();
  summary.duration_seconds = r.duration_seconds;
  summary.p50_ms = latency.p50;
  summary.p99_ms = latency.p99;
  summary.max_ms = latency.max;
  summary.warmup_requests = run.warmup_requests;
  summary.bytes_received = r.bytes_received;
  summary.error = error;
  return summary;
}

json to_json(const TerminationSummary& summary) {
  json out = {{kRequests, summary.requests},
              {kFailures, summary.failures},
              {kRps, summary.rps},
              {kDurationSeconds, summary.duration_seconds},
              {kP50Ms, summary.p50_ms},
              {kP99Ms, summary.p99_ms},
              {kMaxMs, summary.max_ms},
              {kWarmupRequests, summary.warmup_requests},
              {kBytesReceived, summary.bytes_received}};
  if (!summary.error.empty()) out[kError] = summary.error;
  return out;
}

TerminationSummary termination_summary_from_json(const json& in) {
  fields::require_object(in, "a termination summary");
  TerminationSummary summary;
  summary.requests = fields::count(in, kRequests, "").value_or(0);
  summary.failures = fields::count(in, kFailures, "").value_or(0);
  summary.rps = fields::number(in, kRps, "").value_or(0);
  summary.duration_seconds = fields::number(in, kDurationSeconds, "").value_or(0);
  summary.p50_ms = fields::number(in, kP50Ms, "").value_or(0);
  summary.p99_ms = fields::number(in, kP99Ms, "").value_or(0);
  summary.max_ms = fields::number(in, kMaxMs, "").value_or(0);
  summary.warmup_requests = fields::count(in, kWarmupRequests, "").value_or(0);
  summary.bytes_received = fields::count(in, kBytesReceived, "").value_or(0);
  summary.error = fields::text(in, kError, "").value_or("");
  return summary;
}

}  // namespace kubeload::api
