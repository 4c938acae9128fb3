// What clients (kubectl kubeload, the reports) read of a LoadTest through
// kubeload/api/loadtest.hpp: metadata.generateName, the phase and verdict as
// spelled, the figures of status.result and the rows of status.stages and
// status.requestResults.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"

namespace kubeload::api {
namespace {

using nlohmann::json;

TEST(ApiLoadTestClient, GenerateNameReadsAndWritesBack) {
  const json in = {{"name", "checkout-x7k2p"}, {"generateName", "checkout-"}};
  const ObjectMeta meta = in.get<ObjectMeta>();
  EXPECT_EQ(meta.generate_name, "checkout-");
  EXPECT_EQ(json(meta)["generateName"], "checkout-");
  EXPECT_FALSE(json(json{{"name", "x"}}.get<ObjectMeta>()).contains("generateName"));
}

TEST(ApiLoadTestClient, AStatusSpellingOfANewerOperatorIsShownAsWritten) {
  const json loadtest = {{"status", {{"phase", "Paused"}, {"verdict", "Maybe"}}}};
  const LoadTest object = loadtest.get<LoadTest>();
  EXPECT_FALSE(object.status.phase.has_value());
  EXPECT_FALSE(object.status.verdict.has_value());
  const StatusSpelling spelled = status_spelling(loadtest);
  EXPECT_EQ(spelled.phase, "Paused");
  EXPECT_EQ(spelled.verdict, "Maybe");
  EXPECT_EQ(status_spelling(json::object()).phase, "");
}

TEST(ApiLoadTestClient, ResultFiguresCountFailuresAndCompleteResponses) {
  LoadTestStatus status;
  status.result = json{{"requests", 10},
                       {"failures", 2},
                       {"statusCodes", {{"200", 7}, {"503", 1}}},
                       {"latencyMs", {{"p99", 4.5}}}};
  const ResultFigures figures = result_figures(status);
  EXPECT_EQ(figures.failures, 2u);
  EXPECT_EQ(figures.complete_responses, 8u);
  EXPECT_EQ(figures.metric("p99"), 4.5);
  EXPECT_EQ(result_figures(LoadTestStatus{}).complete_responses, 0u);
}

TEST(ApiLoadTestClient, RowsKeepTheirEncodingIdentityAndSummaries) {
  const json status = {
      {"result", {{"requests", 1}, {"histogram", "x"}, {"statusCodes", {{"200", 1}}}}},
      {"stages",
       {{{"index", 0}, {"connections", 10}, {"plannedDurationSeconds", 30}},
        {{"index", 1}, {"targetRate", 200.5}, {"latencyMs", {{"p50", 1.5}, {"max", "n/a"}}}},
        {{"connections", 2.5}},
        7}},
      {"requestResults", {{{"name", "cart"}, {"waitingMs", {{"mean", 2.0}}}}}}};
  const LoadTestStatus typed = status.get<LoadTestStatus>();

  const std::optional<ResultRow> result = result_row(typed);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->histograms);
  EXPECT_EQ(result->complete_responses, 1u);
  EXPECT_EQ(result->encoded, status["result"]);
  EXPECT_FALSE(result_row(LoadTestStatus{}).has_value());

  const std::vector<ResultRow> stages = stage_rows(typed);
  ASSERT_EQ(stages.size(), 4u);  // the item that is not an object too
  EXPECT_EQ(stages[0].connections, 10u);
  EXPECT_FALSE(stages[0].target_rate.has_value());
  EXPECT_EQ(stages[0].planned_duration_seconds, 30);
  EXPECT_EQ(stages[1].index, 1u);
  EXPECT_EQ(stages[1].target_rate, 200.5);
  EXPECT_FALSE(stages[1].histograms);
  EXPECT_EQ(stages[1].latency_ms, (std::map<std::string, double>{{"p50", 1.5}}));
  EXPECT_EQ(stages[2].connections, 0u);  // a number that is not a count
  EXPECT_EQ(stages[3].encoded, json(7));

  const std::vector<ResultRow> requests = request_rows(typed);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].name, "cart");
  EXPECT_EQ(requests[0].waiting_ms.at("mean"), 2.0);
}

}  // namespace
}  // namespace kubeload::api
