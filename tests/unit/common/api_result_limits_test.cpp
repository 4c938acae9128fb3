// The bounds on a worker's /result (issue 26): what the spec's shape lets a
// worker answer, and the bounded parse that refuses more before more of a
// document is built. A real worker's document of the largest shape must always fit.

#include "kubeload/api/result_limits.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "kubeload/api/worker_protocol.hpp"
#include "kubeload/limits.hpp"
#include "kubeload/result.hpp"

namespace kubeload::api {
namespace {

using ::testing::HasSubstr;

LoadTestSpec spec_of(std::size_t stages, std::size_t requests) {
  LoadTestSpec spec;
  spec.load.stages.resize(stages);
  spec.requests.resize(requests);
  return spec;
}

// A worker's result with the worst a real run can produce: every histogram
// with a value in each of many buckets, hundreds of status codes.
Result busy_result(std::mt19937_64& random) {
  Result r;
  std::uniform_int_distribution<int64_t> micros(1, Histogram::kDefaultHighest);
  for (Histogram* h : {&r.latency, &r.connect, &r.waiting, &r.error_latency}) {
    for (int i = 0; i < 20000; ++i) h->record(micros(random), random() % 1000000000);
  }
  for (int code = 100; code < 1000; ++code) r.status_codes[code] = random();
  r.requests = 123456789;
  return r;
}

std::string final_document(const LoadTestSpec& spec) {
  std::mt19937_64 random(7);
  auto run = std::make_shared<RunResult>();
  run->result = busy_result(random);
  for (std::size_t i = 0; i < spec.load.stages.size(); ++i) {
    run->stages.push_back({static_cast<int>(i), 60, 10, std::nullopt, busy_result(random)});
  }
  for (std::size_t i = 0; i < spec.requests.size(); ++i) {
    run->request_results.push_back({"request-" + std::to_string(i), busy_result(random)});
  }
  // A scenario run: a request row per step (no step name shared) and a row
  // per scenario, its durations in many buckets.
  std::uniform_int_distribution<int64_t> micros(1, Histogram::kDefaultHighest);
  for (const ScenarioSpec& scenario : spec.scenarios) {
    for (const StepSpec& step : scenario.steps) {
      run->request_results.push_back({scenario.name + "-" + step.name, busy_result(random)});
    }
    ScenarioResult row{scenario.name, 0, 0, Histogram{}};
    for (int i = 0; i < 20000; ++i) {
      const uint64_t count = random() % 1000000000;
      row.duration.record(micros(random), count);
      row.iterations += count;
    }
    row.iterations_failed = row.iterations / 2;
    run->scenarios.push_back(std::move(row));
  }
  ResultHead head;
  head.loadtest_uid = "4a1c2d3e-0000-4000-8000-000000000001";
  head.started_at_ms = 1796134986468;
  ResultDocumentWriter writer(run, to_json(head));
  std::string document, piece;
  while (writer.next(piece)) document += piece;
  return document;
}

TEST(ResultLimits, GrowWithTheSpecsRowsAndStayUnderTheCeiling) {
  const ResultLimits one = result_limits(spec_of(0, 1));
  const ResultLimits staged = result_limits(spec_of(10, 5));
  EXPECT_LT(one.bytes, staged.bytes);
  EXPECT_LT(one.values, staged.values);
  // What docs/security.md and --worker-result-budget's row say: about 3 MiB
  // for a run of one request.
  EXPECT_GT(one.bytes, std::size_t{2} * 1024 * 1024);
  EXPECT_LT(one.bytes, std::size_t{3} * 1024 * 1024);
  EXPECT_EQ(result_limits(spec_of(kMaxStages, kMaxRequests)).bytes, kMaxResultDocumentBytes);
}

TEST(ResultLimits, AWorkersLargestRealDocumentFits) {
  for (const auto& [stages, requests] :
       std::vector<std::pair<std::size_t, std::size_t>>{{0, 1}, {3, 2}, {20, 20}}) {
    SCOPED_TRACE(std::to_string(stages) + " stages, " + std::to_string(requests) + " requests");
    const LoadTestSpec spec = spec_of(stages, requests);
    const std::string document = final_document(spec);
    const ResultLimits limits = result_limits(spec);
    EXPECT_LT(document.size(), limits.bytes);
    const BoundedParse parsed = parse_bounded_result(document, limits);
    EXPECT_EQ(parsed.problem, "");
    EXPECT_EQ(parsed.document, nlohmann::json::parse(document));
  }
}

LoadTestSpec scenario_spec(std::size_t scenarios, std::size_t steps_each) {
  LoadTestSpec spec;
  for (std::size_t i = 0; i < scenarios; ++i) {
    ScenarioSpec scenario;
    scenario.name = "scenario-" + std::to_string(i);
    for (std::size_t j = 0; j < steps_each; ++j) {
      scenario.steps.emplace_back();
      scenario.steps.back().name = "step-" + std::to_string(j);
    }
    spec.scenarios.push_back(std::move(scenario));
  }
  return spec;
}

// Steps are request rows and scenarios rows of their own: both count.
TEST(ResultLimits, AScenarioRunsLargestRealDocumentFits) {
  EXPECT_LT(result_limits(scenario_spec(1, 1)).bytes, result_limits(scenario_spec(1, 4)).bytes);
  EXPECT_LT(result_limits(scenario_spec(1, 4)).values, result_limits(scenario_spec(3, 4)).values);
  for (const auto& [scenarios, steps] :
       std::vector<std::pair<std::size_t, std::size_t>>{{1, 1}, {1, 4}, {3, 5}}) {
    SCOPED_TRACE(std::to_string(scenarios) + " scenarios of " + std::to_string(steps) + " steps");
    const LoadTestSpec spec = scenario_spec(scenarios, steps);
    const std::string document = final_document(spec);
    const ResultLimits limits = result_limits(spec);
    EXPECT_LT(document.size(), limits.bytes);
    const BoundedParse parsed = parse_bounded_result(document, limits);
    EXPECT_EQ(parsed.problem, "");
    EXPECT_EQ(parsed.document, nlohmann::json::parse(document));
    EXPECT_EQ(run_result_from_json(*parsed.document).scenarios.size(), scenarios);
  }
}

// What the bounded parse refuses, by the problem it names (empty: parsed).
std::string problem_of(std::string_view body, const ResultLimits& limits) {
  const BoundedParse parsed = parse_bounded_result(body, limits);
  EXPECT_EQ(parsed.document.has_value(), parsed.problem.empty()) << parsed.problem;
  return parsed.problem;
}

TEST(ResultLimits, TheBoundedParseRefusesWhatNoSpecCanProduce) {
  const ResultLimits limits = result_limits(spec_of(0, 1));
  std::string zeros = "[0";
  for (std::size_t i = 0; i < limits.values; ++i) zeros += ",0";
  zeros += "]";
  EXPECT_THAT(problem_of(zeros, limits),
              HasSubstr("more than " + std::to_string(limits.values) + " JSON values"));
  // The limit counts every value, containers too: exactly at it still parses.
  std::string at_limit = "[0";
  for (std::size_t i = 2; i < limits.values; ++i) at_limit += ",0";
  at_limit += "]";
  EXPECT_EQ(problem_of(at_limit, limits), "");
  const std::string deep = std::string(limits.depth + 1, '[') + std::string(limits.depth + 1, ']');
  EXPECT_THAT(problem_of(deep, limits), HasSubstr("nested deeper than"));
  const std::string deepest = std::string(limits.depth, '[') + std::string(limits.depth, ']');
  EXPECT_EQ(problem_of(deepest, limits), "");
  EXPECT_THAT(problem_of(R"({"finished": tru)", limits), HasSubstr("not JSON (at byte"));
  EXPECT_THAT(problem_of(R"({} {})", limits), HasSubstr("not JSON"));
  EXPECT_THAT(problem_of("", limits), HasSubstr("not JSON"));
  const std::string long_string = "\"" + std::string(limits.bytes, 'x') + "\"";
  EXPECT_THAT(problem_of(long_string, limits), HasSubstr("bytes, more than"));
  EXPECT_EQ(problem_of(R"({"finished": false, "result": {"requests": 3}})", limits), "");
  EXPECT_EQ(parse_bounded_result(R"({"a": [1, 2.5, "x", null, true, {}]})", limits).document,
            nlohmann::json::parse(R"({"a": [1, 2.5, "x", null, true, {}]})"));
}

}  // namespace
}  // namespace kubeload::api
