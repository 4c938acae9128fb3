#include "operator/test_history.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "kubeload/api/meta.hpp"
#include "kubeload/api/status.hpp"
#include "kubeload/json_access.hpp"

namespace kubeload::controller {
namespace {

using json_access::integer;
using json_access::member;
using json_access::text;
using nlohmann::json;

api::Time completed_at(const api::LoadTestResult& record) {
  return record.run.completion_time.value_or(
      record.metadata.creation_timestamp.value_or(api::Time{}));
}

bool passed(const api::LoadTestResult& record) {
  return record.run.verdict == api::Verdict::Pass;
}

// Indexes of `records`, newest first.
std::vector<std::size_t> newest_first(const std::vector<api::LoadTestResult>& records) {
  std::vector<std::size_t> order(records.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return newer(records[a], records[b]); });
  return order;
}

}  // namespace

std::vector<api::LoadTestResult> result_records(const json& list) {
  std::vector<api::LoadTestResult> records;
  const json& items = member(list, "items");
  if (!items.is_array()) return records;
  for (const json& item : items) records.push_back(item.get<api::LoadTestResult>());
  return records;
}

bool newer(const api::LoadTestResult& a, const api::LoadTestResult& b) {
  return std::tuple(completed_at(a), std::string_view(a.metadata.name)) >
         std::tuple(completed_at(b), std::string_view(b.metadata.name));
}

std::vector<std::size_t> baseline_records(const std::vector<api::LoadTestResult>& records,
                                          const BaselineSpec& baseline, std::string_view self_uid) {
  std::vector<std::size_t> chosen;
  for (const std::size_t index : newest_first(records)) {
    const api::LoadTestResult& record = records[index];
    if (record.load_test.uid == self_uid) continue;
    if (!baseline.result_name.empty()) {
      if (record.metadata.name == baseline.result_name) chosen.push_back(index);
    } else if (!baseline.load_test_name.empty()) {
      if (record.load_test.name == baseline.load_test_name) chosen.push_back(index);
    } else if (baseline.last_passed && passed(record) && record.run.result) {
      chosen.push_back(index);
    }
    const std::size_t wanted = baseline.last_passed ? baseline.window : 1;
    if (chosen.size() >= wanted) break;
  }
  return chosen;
}

std::set<std::string> pinned_records(const std::vector<api::LoadTest>& loadtests,
                                     const std::vector<api::LoadTestResult>& records,
                                     std::string_view test) {
  std::set<std::string> pinned;
  std::size_t window = 1;
  for (const api::LoadTest& loadtest : loadtests) {
    const json& baseline = member(loadtest.spec, "baseline");
    if (const std::string named = text(member(baseline, "resultName")); !named.empty()) {
      pinned.insert(named);
    }
    const auto label = loadtest.metadata.labels.find(std::string(api::kTestLabel));
    if (!test.empty() && label != loadtest.metadata.labels.end() && label->second == test) {
      window = std::max<std::size_t>(
          window, static_cast<std::size_t>(integer(member(baseline, "window")).value_or(1)));
    }
    if (const auto& outcome = loadtest.status.baseline) {
      if (outcome->result_name) pinned.insert(*outcome->result_name);
      pinned.insert(outcome->results.begin(), outcome->results.end());
    }
  }
  if (!test.empty()) {
    BaselineSpec next;
    next.last_passed = true;
    next.window = static_cast<uint32_t>(window);
    for (const std::size_t index : baseline_records(records, next, {})) {
      pinned.insert(records[index].metadata.name);
    }
  }
  return pinned;
}

std::vector<std::string> records_to_prune(const std::vector<api::LoadTestResult>& records,
                                          const HistoryLimits& limits,
                                          const std::set<std::string>& pinned,
                                          std::chrono::system_clock::time_point now) {
  std::vector<std::string> pruned;
  std::size_t position = 0;
  for (const std::size_t index : newest_first(records)) {
    const api::LoadTestResult& record = records[index];
    const bool among_newest = position++ < limits.keep;
    const bool young = limits.max_age && now - completed_at(record) < *limits.max_age;
    if (among_newest || young || pinned.contains(record.metadata.name)) continue;
    pruned.push_back(record.metadata.name);
  }
  return pruned;
}

}  // namespace kubeload::controller
