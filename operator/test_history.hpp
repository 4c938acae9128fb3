#pragma once
// A test's history: the LoadTestResult records of its runs (labelled
// kubeload.dev/test=T; a run without that label is its own test, by its
// LoadTest's name), as baselines and retention read them. One order
// ("newest": the latest completionTime, then the greater name, so every
// reader in any list order agrees) and one rule for what a baseline points
// at, so retention never deletes a record a baseline compares with.

#include <chrono>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/loadtest_result.hpp"
#include "kubeload/spec.hpp"

namespace kubeload::controller {

// The items of a LoadTestResult list, in list order.
std::vector<api::LoadTestResult> result_records(const nlohmann::json& list);

// Whether `a` is newer than `b` (see above).
bool newer(const api::LoadTestResult& a, const api::LoadTestResult& b);

// The records `baseline` compares with, newest first, never those of the run
// `self_uid`: resultName's one record; loadTestName's newest record of that
// LoadTest name; lastPassed's newest `window` passed records. Empty: nothing
// to compare with.
std::vector<std::size_t> baseline_records(const std::vector<api::LoadTestResult>& records,
                                          const BaselineSpec& baseline, std::string_view self_uid);

// How much of a test's history is kept: the newest `keep` records and every
// record that completed within `max_age`.
struct HistoryLimits {
  uint32_t keep = 50;
  std::optional<std::chrono::nanoseconds> max_age;
  bool operator==(const HistoryLimits&) const = default;
};

// What current baselines point at in a namespace: the records its LoadTests'
// specs name (baseline.resultName), the records their statuses compared with
// (status.baseline.resultName and results), and, for the test `test`, the
// newest passed records a lastPassed baseline of it would take next (as
// many as the largest window of its LoadTests, at least one).
std::set<std::string> pinned_records(const std::vector<api::LoadTest>& loadtests,
                                     const std::vector<api::LoadTestResult>& records,
                                     std::string_view test);

// The names of the records of one test's `records` that retention deletes:
// those neither among the newest `limits.keep` nor completed within
// `limits.max_age` of `now`, nor pinned. A record without a completionTime
// counts as completed when it was created.
std::vector<std::string> records_to_prune(const std::vector<api::LoadTestResult>& records,
                                          const HistoryLimits& limits,
                                          const std::set<std::string>& pinned,
                                          std::chrono::system_clock::time_point now);

}  // namespace kubeload::controller
