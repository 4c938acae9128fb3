// The executor's lookups decided by pure functions: which run of a test is
// the newest passed one (baseline and retention read the same), and which
// answers to a create are refusals rather than retries.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "operator/reconcile_plan.hpp"
#include "operator/test_runs.hpp"

namespace kubeload::controller {
namespace {

using nlohmann::json;

json run(const std::string& name, const std::string& completed, const std::string& verdict) {
  json item = {{"metadata", {{"name", name}}}, {"status", json::object()}};
  if (!completed.empty()) item["status"]["completionTime"] = completed;
  if (!verdict.empty()) item["status"]["verdict"] = verdict;
  return item;
}

std::optional<std::string> newest(const std::vector<json>& items, const std::string& except = "") {
  const json list = {{"items", items}};
  const std::vector<TestRun> runs = test_runs(list);
  const auto index = newest_passed(runs, except);
  if (!index) return std::nullopt;
  EXPECT_TRUE(runs[*index].passed());
  return runs[*index].name;
}

TEST(NewestPassed, Table) {
  const std::string t1 = "2026-12-03T10:00:00Z", t2 = "2026-12-03T10:00:05Z";
  struct Row {
    const char* what;
    std::vector<json> items;
    std::string except;
    std::optional<std::string> expected;
  };
  const std::vector<Row> rows = {
      {"no runs", {}, "", std::nullopt},
      {"none passed", {run("a", t1, "Fail"), run("b", t2, "None")}, "", std::nullopt},
      {"the later of two passes", {run("a", t1, "Pass"), run("b", t2, "Pass")}, "", "b"},
      {"list order does not matter", {run("b", t2, "Pass"), run("a", t1, "Pass")}, "", "b"},
      {"a later failure is not a pass", {run("a", t1, "Pass"), run("b", t2, "Fail")}, "", "a"},
      {"never itself", {run("a", t1, "Pass"), run("b", t2, "Pass")}, "b", "a"},
      {"only itself", {run("a", t1, "Pass")}, "a", std::nullopt},
      // Runs completed in the same second: the greater name, in either order,
      // for the baseline and retention alike.
      {"a tie goes to the greater name",
       {run("x-1", t1, "Pass"), run("x-2", t1, "Pass")},
       "",
       "x-2"},
      {"a tie, listed the other way", {run("x-2", t1, "Pass"), run("x-1", t1, "Pass")}, "", "x-2"},
      {"unfinished runs are skipped", {run("a", "", "Pass"), run("b", t1, "Pass")}, "", "b"},
      {"a verdict of another spelling is no pass", {run("a", t1, "pass")}, "", std::nullopt},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(newest(row.items, row.except), row.expected) << row.what;
  }
}

TEST(NewestPassed, RetentionKeepsWhatTheNextBaselineReads) {
  // Whatever the order and ties, the run retention keeps (newest, itself
  // included) is the one a new run of the test compares with.
  const std::vector<json> items = {run("r-b", "2026-12-03T10:00:00Z", "Pass"),
                                   run("r-a", "2026-12-03T10:00:00Z", "Pass"),
                                   run("r-new", "", "")};
  EXPECT_EQ(newest(items), newest(items, "r-new"));
}

TEST(NewestPassed, AListWithoutItemsHasNoRuns) {
  EXPECT_TRUE(test_runs(json::object()).empty());
  EXPECT_TRUE(test_runs(json{{"items", "nope"}}).empty());
}

TEST(IsRejection, Table) {
  struct Row {
    int status;
    bool rejection;
  };
  for (const Row& row : {Row{400, true}, Row{403, true}, Row{404, true}, Row{422, true},
                         Row{401, false}, Row{409, false}, Row{429, false}, Row{500, false},
                         Row{503, false}, Row{200, false}, Row{201, false}, Row{0, false}}) {
    EXPECT_EQ(is_rejection(row.status), row.rejection) << row.status;
  }
}

}  // namespace
}  // namespace kubeload::controller
