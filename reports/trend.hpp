#pragma once
// The trend of a test: p50, p99 and rps of its last runs, read from their
// LoadTestResult records (which outlive the LoadTests), oldest first, with
// the run a report is of and the baseline records it was compared with
// marked. Pure: the plugin lists the records, the html report draws them.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kubeload::loadgen {

// How many runs the html report's trend shows unless told (--trend N).
inline constexpr std::size_t kDefaultTrendRuns = 20;

struct TrendPoint {
  std::string load_test;  // the run's LoadTest name
  std::string record;     // its record's name; "" for the run itself before it has one
  std::string revision;   // loadTest.revision (kubeload.dev/revision), when set
  std::string started;    // RFC 3339, "" when unknown
  std::string verdict;    // as the status spells it; "" when none
  // Unset when not measured (no result, or no complete response for a latency).
  std::optional<double> p50_ms, p99_ms, rps;
  bool baseline = false;  // a record the run was compared with (status.baseline)
  bool this_run = false;  // the run the report is of
  bool operator==(const TrendPoint&) const = default;
};

struct Trend {
  std::string test;                // the kubeload.dev/test label the runs share
  std::vector<TrendPoint> points;  // oldest first
  // Baseline records the run was compared with that are not among the
  // points: older than the runs shown, or gone (a TTL).
  std::vector<std::string> baselines_not_shown;
  bool operator==(const Trend&) const = default;
};

// The trend up to `run` (a LoadTest or a LoadTestResult, the report's
// subject): of `records`, those of run's test (its kubeload.dev/test label),
// ordered by when each run started (status.startTime, else the record's
// creation, then name), those after the run left out, the last `limit` of
// them ending at the run. The run is matched to its record by uid
// (loadTest.uid); without a record among `records` (still running, or not
// written yet) the run itself is the last point. Records named by the run's
// status.baseline (resultName, results) are marked. An empty trend for a
// `limit` of 0 or a run without a test label. Throws std::invalid_argument
// for an object that is not a JSON object.
Trend trend_of(const std::vector<nlohmann::json>& records, const nlohmann::json& run,
               std::size_t limit);

}  // namespace kubeload::loadgen
