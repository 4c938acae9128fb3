#pragma once
// The kept results: what the operator keeps of a run's final results in the
// run's results ConfigMap, so that a worker whose result is in is never asked
// again and a restarted operator folds on where it was. One encoding to the
// ConfigMap's data and one decoding from it (which still reads the form
// operators wrote before the running merge: one final /result document per
// worker under "worker-<index>").
//
// The data: the run's uid; the workers folded into the merge with what the
// status needs of each, as one JSON text; the merge as one JSON text (the
// exchange encoding of a worker's final /result, to_exchange_json:
// histograms in their compact encoding, nothing derived). Its size does not
// grow with the worker count beyond a few bytes per worker.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kubeload/generator_cpu.hpp"
#include "kubeload/result.hpp"

namespace kubeload::api {

// A worker's error is kept this long at most (UTF-8 whole characters), so
// the kept facts stay small.
inline constexpr std::size_t kKeptErrorLength = 256;
// The keys of the form before the running merge: "worker-<index>", each a
// worker's final /result document.
inline constexpr std::string_view kLegacyResultKeyPrefix = "worker-";

// What is kept of a worker whose result is in the merge.
struct KeptWorker {
  bool finished = false;  // its result was the final one, not partial counters
  // The wall-clock start of its measured run (unix ms).
  std::optional<int64_t> started_at_ms;
  std::string error;  // its own report of a run that broke off
  // What it used of its CPU over the measured run (the GeneratorSaturated
  // condition); unset when it did not say.
  std::optional<GeneratorCpu> cpu = std::nullopt;
  bool operator==(const KeptWorker&) const = default;
};

struct KeptResults {
  std::string loadtest_uid;                // the run's (the LoadTest's metadata.uid)
  std::map<uint32_t, KeptWorker> workers;  // by worker index: the workers in the merge
  std::optional<RunResult> merged;         // the merge of their results; unset with none
};

// The ConfigMap's data (a JSON object of strings). Errors are cut to
// kKeptErrorLength.
nlohmann::json to_config_map_data(const KeptResults& kept);

// Reads the data of run `loadtest_uid`'s results ConfigMap: nullopt when it
// holds nothing (null or no keys). Throws std::invalid_argument naming what
// is wrong: a key or field of the wrong type, data of another run ("... not
// this run's"), a legacy document that does not read or merge.
std::optional<KeptResults> kept_results_from_config_map_data(const nlohmann::json& data,
                                                             std::string_view loadtest_uid);

// The legacy keys ("worker-<index>") in a ConfigMap's data: read by
// kept_results_from_config_map_data, removed by the next write.
std::vector<std::string> legacy_result_keys(const nlohmann::json& data);

// A ConfigMap's data (null when it has none).
const nlohmann::json& config_map_data(const nlohmann::json& config_map);

}  // namespace kubeload::api
