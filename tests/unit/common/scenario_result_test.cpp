// The result rows of scenarios (docs/scenarios.md#results): the two error
// kinds of a step, a scenario's iterations, their JSON and their exact merge.
#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeload/limits.hpp"
#include "kubeload/result.hpp"

namespace kubeload {
namespace {

using nlohmann::json;

// One ended iteration as a virtual user would end it.
struct Iteration {
  int scenario = 0;
  int64_t duration_us = 0;
  bool failed = false;
};

const std::vector<std::string> kScenarioNames = {"buy", "browse", "search"};

std::vector<Iteration> random_iterations(uint32_t seed, int count) {
  std::mt19937_64 random(seed);
  std::lognormal_distribution<double> duration(13.0, 1.0);  // around 0.5 s
  std::vector<Iteration> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(Iteration{static_cast<int>(random() % kScenarioNames.size()),
                            static_cast<int64_t>(duration(random)), random() % 20 == 0});
  }
  return out;
}

// The scenario rows of a run that ended these iterations, in the order the
// scenarios first ended one (as a worker lists them).
std::vector<ScenarioResult> rows_of(const std::vector<Iteration>& iterations) {
  std::vector<ScenarioResult> rows;
  for (const Iteration& it : iterations) {
    const std::string& name = kScenarioNames[it.scenario];
    auto row = std::find_if(rows.begin(), rows.end(),
                            [&](const ScenarioResult& r) { return r.name == name; });
    if (row == rows.end()) row = rows.insert(rows.end(), ScenarioResult{name, 0, 0, Histogram{}});
    ++row->iterations;
    if (it.failed) ++row->iterations_failed;
    row->duration.record(it.duration_us);
  }
  return rows;
}

const ScenarioResult& row_named(const std::vector<ScenarioResult>& rows, const std::string& name) {
  const auto row = std::find_if(rows.begin(), rows.end(),
                                [&](const ScenarioResult& r) { return r.name == name; });
  if (row == rows.end()) throw std::logic_error("no row " + name);
  return *row;
}

TEST(ScenarioErrorKinds, ExtractAndCheckAreKindsOfTheirOwnCountedInTheTotal) {
  EXPECT_STREQ(to_string(ErrorKind::extract), "extract");
  EXPECT_STREQ(to_string(ErrorKind::check), "check");
  EXPECT_EQ(kAllErrorKinds[kErrorKindCount - 2], ErrorKind::extract);
  EXPECT_EQ(kAllErrorKinds[kErrorKindCount - 1], ErrorKind::check);
  ErrorCounts counts;
  counts[ErrorKind::extract] = 3;
  counts[ErrorKind::check] = 4;
  counts.goaway = 1;
  EXPECT_EQ(counts.extract, 3u);
  EXPECT_EQ(counts.check, 4u);
  EXPECT_EQ(counts.total(), 8u);
  ErrorCounts more;
  more.add(counts);
  more.add(counts);
  EXPECT_EQ(more.extract, 6u);
  EXPECT_EQ(more.check, 8u);
}

TEST(ScenarioErrorKinds, AreWrittenAndReadAndAnOlderDocumentWithoutThemReadsZero) {
  Result r;
  r.requests = 5;
  r.status_codes[200] = 5;
  r.latency.record(1000, 5);
  r.errors.extract = 2;
  r.errors.check = 1;
  json row;
  to_json(row, r);
  EXPECT_EQ(row["errors"]["extract"], 2);
  EXPECT_EQ(row["errors"]["check"], 1);
  EXPECT_EQ(row["failures"], 3);
  EXPECT_EQ(result_from_json(row), r);

  json older = row;
  older["errors"].erase("extract");
  older["errors"].erase("check");
  older["failures"] = 0;
  const Result read = result_from_json(older);
  EXPECT_EQ(read.errors.extract, 0u);
  EXPECT_EQ(read.errors.check, 0u);
  // The failures a document states must still add up with the new kinds.
  json inconsistent = row;
  inconsistent["failures"] = 2;
  EXPECT_THROW(result_from_json(inconsistent), std::invalid_argument);
}

TEST(ScenarioResults, RoundTripThroughJsonExactly) {
  RunResult run;
  run.scenarios = rows_of(random_iterations(1, 2000));
  ASSERT_EQ(run.scenarios.size(), 3u);
  const json document = to_json(run);
  ASSERT_TRUE(document.contains("scenarioResults"));
  const json& first = document["scenarioResults"][0];
  EXPECT_EQ(first["name"], run.scenarios[0].name);
  EXPECT_EQ(first["iterations"], run.scenarios[0].iterations);
  EXPECT_EQ(first["failedIterations"], run.scenarios[0].iterations_failed);
  const LatencySummary summary = LatencySummary::of(run.scenarios[0].duration);
  for (const auto& [name, figure] : kLatencyFigures) {
    EXPECT_EQ(first["durationMs"][std::string(name)].get<double>(), summary.*figure) << name;
  }
  EXPECT_TRUE(first["histogram"].is_string());
  const RunResult back = run_result_from_json(json::parse(document.dump()));
  EXPECT_EQ(back.scenarios, run.scenarios);
}

TEST(ScenarioResults, NumbersOnlyRowsDropTheHistogram) {
  RunResult run;
  run.scenarios = rows_of(random_iterations(2, 50));
  const json rows = scenario_results_json(run, false);
  ASSERT_EQ(rows.size(), run.scenarios.size());
  for (const json& row : rows) {
    EXPECT_FALSE(row.contains("histogram")) << row.dump();
    EXPECT_TRUE(row.contains("durationMs")) << row.dump();
  }
  EXPECT_FALSE(to_json(run, false)["scenarioResults"][0].contains("histogram"));
}

TEST(ScenarioResults, ARunWithoutScenariosHasNoRowsAndReadsBackEmpty) {
  RunResult run;
  run.result.requests = 1;
  const json document = to_json(run);
  EXPECT_FALSE(document.contains("scenarioResults")) << document.dump();
  EXPECT_TRUE(run_result_from_json(document).scenarios.empty());
}

// The property a distributed run rests on: however the iterations were split
// across workers, merging the workers' rows gives the rows of the whole run.
TEST(ScenarioResults, MergeOfAnySplitEqualsTheWholeRun) {
  const std::vector<Iteration> all = random_iterations(3, 6000);
  const std::vector<ScenarioResult> whole = rows_of(all);
  std::mt19937 random(7);
  for (int parts : {1, 2, 3, 7, 50}) {
    std::vector<std::vector<Iteration>> split(parts);
    for (const Iteration& it : all) split[random() % parts].push_back(it);
    // Some parts end no iteration of some scenario: a worker without rows.
    split[0].erase(std::remove_if(split[0].begin(), split[0].end(),
                                  [](const Iteration& it) { return it.scenario == 1; }),
                   split[0].end());
    std::vector<Iteration> kept;
    for (const auto& part : split) kept.insert(kept.end(), part.begin(), part.end());
    const std::vector<ScenarioResult> expected = rows_of(kept);

    RunResult merged;
    std::shuffle(split.begin(), split.end(), random);
    for (const auto& part : split) {
      RunResult worker;
      worker.scenarios = rows_of(part);
      merged.merge(worker);
    }
    ASSERT_EQ(merged.scenarios.size(), expected.size()) << parts << " parts";
    for (const ScenarioResult& row : expected) {
      EXPECT_EQ(row_named(merged.scenarios, row.name), row) << parts << " parts, " << row.name;
    }
  }
  // Split evenly without losing any: the whole run's rows, iteration for iteration.
  RunResult halves, other;
  halves.scenarios = rows_of({all.begin(), all.begin() + 3000});
  other.scenarios = rows_of({all.begin() + 3000, all.end()});
  halves.merge(other);
  for (const ScenarioResult& row : whole) EXPECT_EQ(row_named(halves.scenarios, row.name), row);
}

TEST(ScenarioResults, IterationDurationsMergeEveryScenario) {
  RunResult run;
  run.scenarios = rows_of(random_iterations(4, 900));
  Histogram expected;
  uint64_t iterations = 0;
  for (const ScenarioResult& row : run.scenarios) {
    expected.add(row.duration);
    iterations += row.iterations;
  }
  EXPECT_EQ(run.iteration_durations(), expected);
  EXPECT_EQ(run.iteration_durations().total_count(), iterations);
  EXPECT_EQ(RunResult{}.iteration_durations().total_count(), 0u);
}

TEST(ScenarioResults, AMergeThatCannotHappenLeavesTheRunAsItWas) {
  RunResult run;
  run.scenarios = rows_of(random_iterations(5, 100));
  const RunResult before = run;
  RunResult odd;
  odd.scenarios = {ScenarioResult{"buy", 1, 0, Histogram(1, 1000, 2)}};
  odd.scenarios[0].duration.record(10);
  try {
    run.merge(odd);
    ADD_FAILURE() << "a histogram of another layout merged";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scenario \"buy\""), std::string::npos) << e.what();
  }
  EXPECT_EQ(run.scenarios, before.scenarios);
  EXPECT_EQ(run.result, before.result);
}

TEST(ScenarioResults, FromJsonNamesTheBadField) {
  const auto refusal = [](const json& rows) -> std::string {
    try {
      run_result_from_json(
          {{"version", "v1"}, {"result", json::object()}, {"scenarioResults", rows}});
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  Histogram two;
  two.record(1000, 2);
  EXPECT_EQ(refusal(json::object()), "scenarioResults: must be an array");
  EXPECT_EQ(refusal(json::array({7})), "scenarioResults[0]: must be an object");
  EXPECT_EQ(refusal(json::array({{{"iterations", 1}}})), "scenarioResults[0].name: is required");
  EXPECT_EQ(refusal(json::array({{{"name", "buy"}, {"iterations", -1}}})),
            "scenarioResults[0].iterations: must be a non-negative integer, got -1");
  EXPECT_EQ(refusal(json::array({{{"name", "buy"}, {"iterations", 2}, {"failedIterations", 3}}})),
            "scenarioResults[0].failedIterations: is 3, more than the 2 iterations");
  EXPECT_EQ(refusal(json::array(
                {{{"name", "buy"}, {"iterations", 3}, {"histogram", two.encode_base64()}}})),
            "scenarioResults[0].histogram: holds 2 durations for 3 iterations");
  EXPECT_EQ(refusal(json::array({{{"name", "buy"}, {"histogram", "not base64!"}}}))
                .find("scenarioResults[0].histogram: "),
            0u);
  json too_many = json::array();
  for (size_t i = 0; i <= kMaxScenarios; ++i) too_many.push_back({{"name", std::to_string(i)}});
  EXPECT_EQ(refusal(too_many), "scenarioResults: at most " + std::to_string(kMaxScenarios) +
                                   " rows (one per scenario of a spec), got " +
                                   std::to_string(kMaxScenarios + 1));
  too_many.erase(too_many.size() - 1);
  EXPECT_EQ(refusal(too_many), "accepted");
}

}  // namespace
}  // namespace kubeload
