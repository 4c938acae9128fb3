#include "kubeload/api/kept_results.hpp"

#include <limits>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "kubeload/api/worker_protocol.hpp"
#include "kubeload/json_fields.hpp"
#include "kubeload/text.hpp"

namespace kubeload::api {
namespace {

using nlohmann::json;

// The JSON names, once each: the data's keys ...
constexpr const char* kUidKey = "loadTestUid";
constexpr const char* kWorkersKey = "workers";
constexpr const char* kMergedKey = "merged";
// ... and a worker's facts.
constexpr const char* kFinished = "finished";
constexpr const char* kStartedAtMs = "startedAtMs";
constexpr const char* kError = "error";
constexpr const char* kCpu = "cpu";

// A worker index written as decimal digits (at most uint32's).
std::optional<uint32_t> parse_index(std::string_view digits) {
  if (digits.empty() || digits.size() > 10) return std::nullopt;
  uint64_t value = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > std::numeric_limits<uint32_t>::max()) return std::nullopt;
  return static_cast<uint32_t>(value);
}

// One of the data's values: a JSON document in a string.
json parse_value(const json& data, std::string_view key) {
  const std::string path(key);
  const std::optional<std::string> value = fields::text(data, key, "");
  if (!value) fields::bad_field(path, "is required");
  json document = json::parse(*value, nullptr, false);
  if (document.is_discarded()) fields::bad_field(path, "is not JSON");
  return document;
}

RunResult merged_from(const json& data) {
  const json document = parse_value(data, kMergedKey);
  try {
    return run_result_from_json(document);
  } catch (const std::invalid_argument& e) {
    fields::bad_field(kMergedKey, e.what());
  }
}

KeptWorker worker_from(const json& facts, const std::string& path) {
  fields::require_object(facts, path);
  KeptWorker worker;
  worker.finished = fields::boolean(facts, kFinished, path).value_or(false);
  worker.started_at_ms = fields::integer(facts, kStartedAtMs, path);
  worker.error = fields::text(facts, kError, path).value_or("");
  if (const json* cpu = fields::find(facts, kCpu)) {
    worker.cpu = generator_cpu_from_json(*cpu, fields::at(path, kCpu));
  }
  return worker;
}

// The form before the running merge: each worker's final /result document,
// folded here as the workers' answers would have been.
KeptResults legacy_from(const json& data, std::string_view loadtest_uid) {
  KeptResults kept;
  kept.loadtest_uid = std::string(loadtest_uid);
  for (const std::string& key : legacy_result_keys(data)) {
    const std::optional<uint32_t> index =
        parse_index(std::string_view(key).substr(kLegacyResultKeyPrefix.size()));
    if (!index) fields::bad_field(key, "is not " + std::string(kLegacyResultKeyPrefix) + "<index>");
    const json document = parse_value(data, key);
    ResultHead head;
    RunResult run;
    try {
      head = result_head_from_json(document);
    } catch (const std::invalid_argument& e) {
      fields::bad_field(key, e.what());
    }
    // Whose it is first: another run's document is that, however it reads.
    if (head.loadtest_uid != loadtest_uid) {
      fields::bad_field(key, "not this run's (loadTestUid \"" + head.loadtest_uid + "\")");
    }
    try {
      run = run_result_from_json(document);
    } catch (const std::invalid_argument& e) {
      fields::bad_field(key, e.what());
    }
    if (kept.workers.contains(*index)) {
      fields::bad_field(key, "worker " + std::to_string(*index) + " is kept twice");
    }
    kept.workers.emplace(*index, KeptWorker{run.finished, head.started_at_ms, std::move(head.error),
                                            std::move(head.cpu)});
    try {
      if (kept.merged) {
        kept.merged->merge(run);
      } else {
        kept.merged = std::move(run);
      }
    } catch (const std::invalid_argument& e) {
      fields::bad_field(key, e.what());
    }
  }
  return kept;
}

}  // namespace

json to_config_map_data(const KeptResults& kept) {
  json workers = json::object();
  for (const auto& [index, worker] : kept.workers) {
    json facts = {{kFinished, worker.finished}};
    if (worker.started_at_ms) facts[kStartedAtMs] = *worker.started_at_ms;
    if (!worker.error.empty())
      facts[kError] = std::string(utf8_head(worker.error, kKeptErrorLength));
    if (worker.cpu) facts[kCpu] = generator_cpu_json(*worker.cpu);
    workers[std::to_string(index)] = std::move(facts);
  }
  json data = {{kUidKey, kept.loadtest_uid}, {kWorkersKey, workers.dump()}};
  if (kept.merged) data[kMergedKey] = to_exchange_json(*kept.merged).dump();
  return data;
}

std::optional<KeptResults> kept_results_from_config_map_data(const json& data,
                                                             std::string_view loadtest_uid) {
  if (data.is_null() || (data.is_object() && data.empty())) return std::nullopt;
  fields::require_object(data, "the data");
  if (!data.contains(kUidKey) && !legacy_result_keys(data).empty()) {
    return legacy_from(data, loadtest_uid);
  }
  KeptResults kept;
  const std::optional<std::string> uid = fields::text(data, kUidKey, "");
  if (!uid) fields::bad_field(kUidKey, "is required");
  if (*uid != loadtest_uid) fields::bad_field(kUidKey, "not this run's (\"" + *uid + "\")");
  kept.loadtest_uid = *uid;
  const json workers = parse_value(data, kWorkersKey);
  fields::require_object(workers, kWorkersKey);
  for (const auto& [key, facts] : workers.items()) {
    const std::optional<uint32_t> index = parse_index(key);
    if (!index) fields::bad_field(kWorkersKey, "key \"" + key + "\" is not a worker index");
    if (!kept.workers.emplace(*index, worker_from(facts, fields::at(kWorkersKey, key))).second) {
      fields::bad_field(kWorkersKey, "worker " + std::to_string(*index) + " is there twice");
    }
  }
  // Written with the first worker; read whenever it is there.
  if (!kept.workers.empty() || fields::find(data, kMergedKey) != nullptr) {
    kept.merged = merged_from(data);
  }
  return kept;
}

std::vector<std::string> legacy_result_keys(const json& data) {
  std::vector<std::string> keys;
  if (!data.is_object()) return keys;
  for (const auto& [key, value] : data.items()) {
    if (key.starts_with(kLegacyResultKeyPrefix)) keys.push_back(key);
  }
  return keys;
}

const json& config_map_data(const json& config_map) {
  static const json kNone;
  if (!config_map.is_object()) return kNone;
  const auto it = config_map.find("data");
  return it == config_map.end() ? kNone : *it;
}

}  // namespace kubeload::api
