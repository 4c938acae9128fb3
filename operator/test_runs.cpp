#include "operator/test_runs.hpp"

#include <tuple>

#include "kubeload/api/status.hpp"
#include "kubeload/json_access.hpp"

namespace kubeload::controller {

using json_access::member;
using json_access::text;
using nlohmann::json;

std::vector<TestRun> test_runs(const json& list) {
  std::vector<TestRun> runs;
  const json& items = member(list, "items");
  if (!items.is_array()) return runs;
  for (const json& item : items) {
    const json& status = member(item, "status");
    runs.push_back(
        {text(member(member(item, "metadata"), "name")), text(member(status, "completionTime")),
         api::parse_verdict(text(member(status, "verdict"))) == api::Verdict::Pass, &status});
  }
  return runs;
}

std::optional<std::size_t> newest_passed(const std::vector<TestRun>& runs,
                                         std::string_view except) {
  std::optional<std::size_t> newest;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const TestRun& run = runs[i];
    if (!run.passed || run.completion_time.empty() || run.name == except) continue;
    // RFC 3339 in UTC with whole seconds (metav1.Time) sorts as text.
    if (!newest || std::tie(run.completion_time, run.name) >
                       std::tie(runs[*newest].completion_time, runs[*newest].name)) {
      newest = i;
    }
  }
  return newest;
}

}  // namespace kubeload::controller
