#include "operator/test_runs.hpp"

#include <tuple>

#include "kubeload/api/status.hpp"
#include "kubeload/json_access.hpp"

namespace kubeload::controller {

using json_access::member;
using nlohmann::json;

std::vector<TestRun> test_runs(const json& list) {
  std::vector<TestRun> runs;
  const json& items = member(list, "items");
  if (!items.is_array()) return runs;
  for (const json& item : items) {
    api::LoadTest loadtest = item.get<api::LoadTest>();
    runs.push_back({std::move(loadtest.metadata.name), std::move(loadtest.status)});
  }
  return runs;
}

std::optional<std::size_t> newest_passed(const std::vector<TestRun>& runs,
                                         std::string_view except) {
  std::optional<std::size_t> newest;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const TestRun& run = runs[i];
    if (!run.passed() || !run.status.completion_time || run.name == except) continue;
    if (!newest || std::tie(*run.status.completion_time, run.name) >
                       std::tie(*runs[*newest].status.completion_time, runs[*newest].name)) {
      newest = i;
    }
  }
  return newest;
}

}  // namespace kubeload::controller
