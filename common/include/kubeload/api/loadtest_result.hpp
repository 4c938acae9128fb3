#pragma once
// The LoadTestResult: the durable record of one finished run, written by the
// operator when the run ends and owned by nothing, so it outlives its
// LoadTest (a GitOps tool deleting and re-creating the run, a TTL). The
// test's history, its baselines and the plugin's history and compare read
// records, never LoadTests that may be gone.
//
// What it holds: which run (`loadTest`: name, uid, the digest of its spec,
// the spec itself, the revision it tested), the run's final status as the
// LoadTest had it (`run`: result rows, thresholds, verdict, the baseline
// comparison, the target's resource use; the LoadTest status's encoding),
// and the merged result with every histogram, compressed (`merged`), so a
// later comparison is exact. One to_json and one from_json, lenient like the
// LoadTest's; the merged result decodes strictly (merged_result).

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/result.hpp"

namespace kubeload::api {

// How big a record may be (the whole object's JSON): under etcd's 1.5 MiB
// request limit with room for metadata. A record over it leaves out the
// merged histograms first, then the spec (its digest stays).
inline constexpr std::size_t kResultRecordSizeLimit = 1024 * 1024;
// The merged result's encoding: its JSON (kubeload/result.hpp's RunResult
// encoding, every histogram) as a zlib stream, base64.
inline constexpr std::string_view kMergedEncoding = "zlib+base64";
// Inflating a merged result stops here: far above any record's (at most
// kResultRecordSizeLimit compressed) honest content, far below harm.
inline constexpr std::size_t kMergedInflatedLimit = 64 * 1024 * 1024;

struct RecordedRun {
  std::string name;  // the LoadTest's
  std::string uid;
  int64_t generation = 0;
  std::string spec_digest;              // "sha256:<hex>" of the spec's JSON, keys sorted
  std::optional<std::string> revision;  // kRevisionAnnotation
  std::optional<nlohmann::json> spec;   // left out of a record too large with it
  bool operator==(const RecordedRun&) const = default;
};

struct MergedResult {
  std::string encoding{kMergedEncoding};
  std::string data;  // empty when omitted
  // Why the merged result is not recorded (too large for the record).
  std::optional<std::string> omitted;
  bool operator==(const MergedResult&) const = default;
};

struct LoadTestResult {
  ObjectMeta metadata;
  std::string test;  // the kubeload.dev/test label's value ("" when the run had none)
  RecordedRun load_test;
  LoadTestStatus run;  // the run's final status
  MergedResult merged;
  bool operator==(const LoadTestResult&) const = default;
};

void to_json(nlohmann::json& out, const LoadTestResult& record);
void from_json(const nlohmann::json& in, LoadTestResult& record);

// `merged` as the record stores it.
MergedResult encode_merged(const RunResult& merged);
// The record's merged result: nullopt when none was recorded. Throws
// std::invalid_argument naming what is wrong with a forged or damaged one.
std::optional<RunResult> merged_result(const LoadTestResult& record);

}  // namespace kubeload::api
