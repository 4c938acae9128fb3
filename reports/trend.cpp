#include "reports/trend.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/meta.hpp"
#include "kubeload/rfc3339.hpp"
#include "reports/recorded_run.hpp"

namespace kubeload::loadgen {
namespace {

using nlohmann::json;

struct Dated {
  std::optional<api::Time> at;  // when the run started (else its record's creation)
  TrendPoint point;
  std::string uid;
  std::string test;  // its kubeload.dev/test label
};

std::string label_of(const api::ObjectMeta& metadata, std::string_view key) {
  const auto it = metadata.labels.find(std::string(key));
  return it == metadata.labels.end() ? std::string() : it->second;
}

// One run's point, from the LoadTest it is or records (recorded_run.hpp).
Dated dated_of(const json& object) {
  const json loadtest = as_loadtest(object);
  const api::LoadTest typed = loadtest.get<api::LoadTest>();
  Dated out;
  out.uid = typed.metadata.uid;
  out.test = label_of(typed.metadata, api::kTestLabel);
  out.at = typed.status.start_time ? typed.status.start_time : typed.metadata.creation_timestamp;
  TrendPoint& point = out.point;
  point.load_test = typed.metadata.name;
  if (is_result_record(object)) {
    point.record = object.get<api::LoadTest>().metadata.name;
    // A record's creation is when the run ended: a fallback for a run
    // without a start time, the LoadTest's own creation being unknown.
    if (!typed.status.start_time) out.at = object.get<api::LoadTest>().metadata.creation_timestamp;
  } else if (typed.status.result_record) {
    point.record = *typed.status.result_record;
  }
  const auto revision = typed.metadata.annotations.find(std::string(api::kRevisionAnnotation));
  if (revision != typed.metadata.annotations.end()) point.revision = revision->second;
  point.started = typed.status.start_time ? rfc3339::format(*typed.status.start_time) : "";
  point.verdict = api::status_spelling(loadtest).verdict;
  if (typed.status.result) {
    const api::ResultFigures figures = api::result_figures(typed.status);
    point.rps = figures.rps;
    // Latencies without a complete response are unknown, not 0.
    if (figures.complete_responses > 0) {
      point.p50_ms = figures.metric("p50");
      point.p99_ms = figures.metric("p99");
    }
  }
  return out;
}

bool earlier(const Dated& a, const Dated& b) {
  // An unknown time sorts before every known one: oldest.
  return std::tie(a.at, a.point.load_test, a.point.record) <
         std::tie(b.at, b.point.load_test, b.point.record);
}

}  // namespace

Trend trend_of(const std::vector<json>& records, const json& run, std::size_t limit) {
  if (!run.is_object())
    throw std::invalid_argument("a LoadTest or LoadTestResult must be a JSON object");
  const api::LoadTest subject = as_loadtest(run).get<api::LoadTest>();
  Trend trend;
  trend.test = label_of(subject.metadata, api::kTestLabel);
  if (limit == 0 || trend.test.empty()) return trend;
  std::set<std::string> baseline_records;
  if (subject.status.baseline) {
    const api::BaselineOutcome& baseline = *subject.status.baseline;
    if (baseline.result_name) baseline_records.insert(*baseline.result_name);
    baseline_records.insert(baseline.results.begin(), baseline.results.end());
  }
  Dated self = dated_of(run);
  std::vector<Dated> runs;
  bool self_recorded = false;
  std::set<std::string> seen;  // record names: a record listed twice counts once
  for (const json& record : records) {
    if (!is_result_record(record)) {
      throw std::invalid_argument("the trend reads LoadTestResult records, got kind \"" +
                                  record.value("kind", std::string()) + "\"");
    }
    Dated dated = dated_of(record);
    if (dated.test != trend.test || !seen.insert(dated.point.record).second) continue;
    const bool is_self =
        !self.uid.empty() ? dated.uid == self.uid : dated.point.record == self.point.record;
    // The run's record stands for it: the same point whichever object the
    // report was given.
    self_recorded = self_recorded || is_self;
    dated.point.this_run = is_self;
    dated.point.baseline = baseline_records.contains(dated.point.record);
    runs.push_back(std::move(dated));
  }
  if (!self_recorded) {
    self.point.this_run = true;
    runs.push_back(std::move(self));
  }
  std::stable_sort(runs.begin(), runs.end(), earlier);
  // Up to the run itself: a report of an older run shows what came before it.
  const auto end =
      std::find_if(runs.begin(), runs.end(), [](const Dated& d) { return d.point.this_run; }) + 1;
  const auto begin =
      end - std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(limit), end - runs.begin());
  for (auto it = begin; it != end; ++it) trend.points.push_back(std::move(it->point));
  for (const std::string& name : baseline_records) {
    if (std::none_of(trend.points.begin(), trend.points.end(),
                     [&](const TrendPoint& p) { return p.record == name; })) {
      trend.baselines_not_shown.push_back(name);
    }
  }
  return trend;
}

}  // namespace kubeload::loadgen
