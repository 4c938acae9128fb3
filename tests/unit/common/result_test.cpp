#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeload/result.hpp"
#include "kubeload/spec.hpp"

namespace kubeload {
namespace {

// A result as a worker would produce it from a list of (latency us, status).
Result result_of(const std::vector<std::pair<int64_t, int>>& responses, double seconds) {
  Result r;
  r.duration_seconds = seconds;
  for (const auto& [latency, status] : responses) {
    ++r.requests;
    r.bytes_received += 4'000'000'000ull;  // pushes totals past 32 bits quickly
    r.bytes_sent += 100;
    ++r.status_codes[status];
    if (status >= 500) ++r.errors.status;
    r.latency.record(latency);
    r.waiting.record(latency / 2);
    r.connect.record(0);
  }
  return r;
}

std::vector<std::pair<int64_t, int>> random_responses(uint32_t seed, int count) {
  std::mt19937_64 random(seed);
  std::lognormal_distribution<double> latency(7.0, 1.0);
  std::vector<std::pair<int64_t, int>> out;
  for (int i = 0; i < count; ++i) {
    out.emplace_back(static_cast<int64_t>(latency(random)), random() % 100 == 0 ? 503 : 200);
  }
  return out;
}

TEST(Result, MergeOfTwoEqualsTheCombinedRun) {
  const auto a = random_responses(1, 5000);
  const auto b = random_responses(2, 7000);
  auto both = a;
  both.insert(both.end(), b.begin(), b.end());

  Result merged = result_of(a, 10.0);
  merged.merge(result_of(b, 12.0));
  const Result combined = result_of(both, 12.0);
  EXPECT_EQ(merged, combined);
  EXPECT_EQ(merged.requests, 12000u);
  EXPECT_EQ(merged.bytes_received, 12000ull * 4'000'000'000ull);
  EXPECT_DOUBLE_EQ(merged.duration_seconds, 12.0);  // side by side: the longest
}

TEST(Result, JsonRoundTripIsExact) {
  RunResult run;
  run.result = result_of(random_responses(3, 3000), 5.5);
  run.result.rate = RateCounts{500, 3};
  run.result.retries = 7;
  run.result.tls = TlsCounts{40, 31, 9, 8};
  run.result.errors.dropped = 1;
  run.result.error_latency.record(30'000'000);
  run.result.requests += 1;
  run.result.drain_seconds = 2.25;
  run.warmup_requests = 42;
  run.stages.push_back(StageResult{0, 5.0, 10u, std::nullopt, run.result});
  run.request_results.push_back(NamedResult{"cart", run.result});
  const nlohmann::json document = to_json(run);
  const RunResult back = run_result_from_json(nlohmann::json::parse(document.dump()));
  EXPECT_EQ(back.result, run.result);
  EXPECT_EQ(back.warmup_requests, 42u);
  ASSERT_EQ(back.stages.size(), 1u);
  EXPECT_EQ(back.stages[0].connections, 10u);
  EXPECT_EQ(back.stages[0].result, run.result);
  ASSERT_EQ(back.request_results.size(), 1u);
  EXPECT_EQ(back.request_results[0].name, "cart");
  EXPECT_EQ(document["result"]["bytesReceived"].get<uint64_t>(), 3000ull * 4'000'000'000ull);
  EXPECT_EQ(document["result"]["failures"], run.result.errors.status + 1);
  EXPECT_EQ(document["result"]["errors"]["dropped"], 1);
  EXPECT_EQ(document["result"]["rate"]["dropped"], 1);
  EXPECT_EQ(document["result"]["drainSeconds"], 2.25);
  EXPECT_NEAR(document["result"]["errorLatencyMs"]["max"].get<double>(), 30'000, 30);
  EXPECT_EQ(document["version"], "v1");
  EXPECT_EQ(document["result"]["retries"], 7u);
  EXPECT_EQ(document["result"]["tls"]["sessionsReused"], 31u);
  EXPECT_EQ(document["result"]["tls"]["kernelSend"], 9u);
  EXPECT_EQ(document["result"]["tls"]["kernelReceive"], 8u);
}

// A result from a worker without the kTLS counts reads as none; counts above
// the handshakes are refused, naming the field and both numbers.
TEST(Result, TlsCountsAreReadBackCheckedAgainstTheHandshakes) {
  const auto read_tls = [](const char* tls) {
    return run_result_from_json(nlohmann::json::parse(
        std::string(R"({"version":"v1","result":{"requests":1,"durationSeconds":1,"tls":)") + tls +
        "}}"));
  };
  const RunResult older = read_tls(R"({"handshakes":3,"sessionsReused":2})");
  ASSERT_TRUE(older.result.tls.has_value());
  EXPECT_EQ(*older.result.tls, (TlsCounts{3, 2, 0, 0}));
  for (const char* key : {"sessionsReused", "kernelSend", "kernelReceive"}) {
    const std::string tls = std::string(R"({"handshakes":3,")") + key + R"(":4})";
    try {
      read_tls(tls.c_str());
      ADD_FAILURE() << key << " above the handshakes was accepted";
    } catch (const std::exception& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(std::string("tls.") + key)) << e.what();
      EXPECT_THAT(e.what(), ::testing::HasSubstr("is 4 but only 3 handshakes")) << e.what();
    }
  }
}

TEST(Result, RetriesAndTlsCountsMergeBySum) {
  Result a, b;
  a.retries = 2;
  a.tls = TlsCounts{10, 4, 6, 6};
  b.retries = 3;
  b.tls = TlsCounts{5, 5, 5, 0};
  a.merge(b);
  EXPECT_EQ(a.retries, 5u);
  EXPECT_EQ(a.tls, (TlsCounts{15, 9, 11, 6}));
  Result plain;
  const Result other_plain;
  plain.merge(other_plain);
  EXPECT_FALSE(plain.tls.has_value());
}

TEST(Result, FailuresWithoutAResponseHaveTheirOwnLatencyAndDroppedIsAnError) {
  Result a, b;
  a.requests = 4;
  a.errors.dropped = 1;
  a.errors.timeout = 1;
  a.error_latency.record(30'000'000, 2);
  a.latency.record(3'000, 2);
  a.drain_seconds = 1.5;
  b.requests = 1;
  b.errors.dropped = 1;
  b.error_latency.record(1'000'000);
  b.drain_seconds = 0.5;
  a.merge(b);
  EXPECT_EQ(a.failures(), 3u);
  EXPECT_DOUBLE_EQ(a.error_rate(), 0.6);
  EXPECT_EQ(a.error_latency.total_count(), 3u);
  EXPECT_EQ(a.latency.total_count(), 2u);
  // Workers drain side by side: the longest drain.
  EXPECT_EQ(a.drain_seconds, 1.5);
  EXPECT_STREQ(to_string(ErrorKind::dropped), "dropped");
}

TEST(Result, MergedRunsMergeStagesByIndexAndRequestsByName) {
  RunResult one, two;
  one.result = result_of(random_responses(4, 100), 1);
  two.result = result_of(random_responses(5, 100), 1);
  one.stages = {StageResult{0, 1, 5u, std::nullopt, one.result}};
  two.stages = {StageResult{0, 1, 5u, std::nullopt, two.result},
                StageResult{1, 1, 7u, std::nullopt, two.result}};
  one.request_results = {NamedResult{"a", one.result}};
  two.request_results = {NamedResult{"b", two.result}, NamedResult{"a", two.result}};
  one.merge(two);
  ASSERT_EQ(one.stages.size(), 2u);
  EXPECT_EQ(one.stages[0].connections, 10u);
  EXPECT_EQ(one.stages[0].result.requests, 200u);
  EXPECT_EQ(one.stages[1].result.requests, 100u);
  ASSERT_EQ(one.request_results.size(), 2u);
  EXPECT_EQ(one.request_results[0].result.requests, 200u);
}

TEST(Result, FromJsonNamesTheBadField) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    try {
      run_result_from_json(nlohmann::json::parse(text));
      ADD_FAILURE() << "accepted " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"version":"v2","result":{}})", "version");
  expect_error(R"({"version":"v1"})", "result");
  expect_error(R"({"version":"v1","result":{"requests":-1}})", "result.requests");
  expect_error(R"({"version":"v1","result":{"histogram":"not base64!"}})", "result.histogram");
  expect_error(R"({"version":"v1","result":{"statusCodes":{"abc":1}}})", "abc");
  expect_error(R"({"version":"v1","result":{"failures":3,"errors":{"read":1}}})", "failures");
  expect_error(R"({"version":"v1","result":{},"stages":[{"requests":"x"}]})", "stages[0].requests");
}

// What a worker sends is bounded before anything is built from it: rows by the
// spec's own limits, histograms by the one layout workers record.
TEST(Result, FromJsonRefusesMoreRowsThanASpecCanHave) {
  auto with_rows = [](const char* key, size_t rows) {
    nlohmann::json document = {{"version", "v1"}, {"result", nlohmann::json::object()}};
    for (size_t i = 0; i < rows; ++i) {
      nlohmann::json row = {{"name", "r" + std::to_string(i)}, {"index", i}};
      document[key].push_back(row);
    }
    return document;
  };
  EXPECT_NO_THROW(run_result_from_json(with_rows("stages", kMaxStages)));
  EXPECT_NO_THROW(run_result_from_json(with_rows("requestResults", kMaxRequests)));
  try {
    run_result_from_json(with_rows("stages", kMaxStages + 1));
    ADD_FAILURE() << "101 stage rows accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stages: at most 100 rows"), std::string::npos)
        << e.what();
  }
  try {
    run_result_from_json(with_rows("requestResults", kMaxRequests + 1));
    ADD_FAILURE() << "101 request rows accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("requestResults: at most 100 rows"), std::string::npos)
        << e.what();
  }
}

TEST(Result, FromJsonRefusesAHistogramOfAnotherLayout) {
  Histogram other(1, 1000, 2);
  other.record(10);
  const nlohmann::json document = {{"version", "v1"},
                                   {"result", {{"histogram", other.encode_base64()}}}};
  try {
    run_result_from_json(document);
    ADD_FAILURE() << "a histogram of another layout was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("result.histogram: histogram encoding: layout"),
              std::string::npos)
        << e.what();
  }
}

// The pieces of a run's document, concatenated.
std::string written_document(const std::shared_ptr<const RunResult>& run,
                             const nlohmann::json& head, std::size_t* largest_piece = nullptr) {
  ResultDocumentWriter writer(run, head);
  std::string document, piece;
  while (writer.next(piece)) {
    document += piece;
    if (largest_piece) *largest_piece = std::max(*largest_piece, piece.size());
  }
  EXPECT_FALSE(writer.next(piece)) << "a complete writer stays complete";
  EXPECT_TRUE(piece.empty());
  return document;
}

TEST(ResultDocumentWriter, PiecesMakeTheDocumentWithTheHeadsFields) {
  const Result some = result_of(random_responses(5, 500), 2.0);
  const nlohmann::json head = {{"worker", 3}, {"loadTestUid", "6f1c"}, {"error", "interrupted"}};
  // Every arrangement of rows: none, stages only, requests only, scenarios
  // only, all, several.
  for (const auto& [stages, requests, scenarios] :
       std::vector<std::tuple<int, int, int>>{{0, 0, 0},
                                              {1, 0, 0},
                                              {0, 1, 0},
                                              {1, 1, 0},
                                              {3, 0, 0},
                                              {0, 4, 0},
                                              {10, 5, 0},
                                              {0, 0, 1},
                                              {0, 2, 1},
                                              {2, 0, 3},
                                              {4, 6, 2}}) {
    auto run = std::make_shared<RunResult>();
    run->result = some;
    run->warmup_requests = 9;
    run->finished = stages != 3;
    for (int i = 0; i < stages; ++i) {
      run->stages.push_back(
          StageResult{i, 1.5, i % 2 == 0 ? std::optional<uint64_t>(10u) : std::nullopt,
                      i % 2 == 1 ? std::optional<double>(20.0) : std::nullopt, some});
    }
    for (int i = 0; i < requests; ++i)
      run->request_results.push_back(NamedResult{"r" + std::to_string(i), some});
    for (int i = 0; i < scenarios; ++i) {
      ScenarioResult scenario{"s" + std::to_string(i), 2, 1, Histogram{}};
      scenario.duration.record(1'000'000 * (i + 1), 2);
      run->scenarios.push_back(std::move(scenario));
    }
    nlohmann::json expected = to_exchange_json(*run, Histogram::Encoding::uncompressed);
    expected.update(head);
    const std::string written = written_document(run, head);
    const auto parsed = nlohmann::json::parse(written, nullptr, false);
    const std::string rows = std::to_string(stages) + " stages, " + std::to_string(requests) +
                             " requests, " + std::to_string(scenarios) + " scenarios";
    ASSERT_FALSE(parsed.is_discarded()) << rows << ": " << written;
    EXPECT_EQ(parsed, expected) << rows;
    EXPECT_EQ(run_result_from_json(parsed).scenarios, run->scenarios) << rows;
  }
}

TEST(ResultDocumentWriter, AWorkersFinalResultCarriesItsHistogramsUncompressed) {
  auto run = std::make_shared<RunResult>();
  run->result = result_of(random_responses(8, 1500), 2.0);
  run->result.error_latency.record(700, 2);
  run->stages.push_back(StageResult{0, 1.0, 2u, std::nullopt, run->result});
  run->request_results.push_back(NamedResult{"home", run->result});
  ScenarioResult scenario{"browse", 3, 0, Histogram{}};
  scenario.duration.record(2'000'000, 3);
  run->scenarios.push_back(std::move(scenario));
  const nlohmann::json written = nlohmann::json::parse(written_document(run, {{"worker", 1}}));
  // Every histogram of every row: HdrHistogram's bare V2 payload, no zlib.
  std::size_t histograms = 0;
  const auto each_histogram = [&](const nlohmann::json& row) {
    for (const char* key :
         {"histogram", "connectHistogram", "waitingHistogram", "errorHistogram"}) {
      if (!row.contains(key)) continue;
      ++histograms;
      EXPECT_EQ(row[key].get<std::string>().substr(0, 5), "HISTE") << key << " of " << row.dump();
    }
  };
  each_histogram(written["result"]);
  for (const char* rows : {"stages", "requestResults", "scenarioResults"}) {
    for (const nlohmann::json& row : written[rows]) each_histogram(row);
  }
  EXPECT_EQ(histograms, 3u * 4u + 1u);
  // It reads back as the same run; the compressed exchange (kept in a
  // ConfigMap) is shorter.
  const RunResult read = run_result_from_json(written);
  EXPECT_EQ(to_exchange_json(read), to_exchange_json(*run));
  EXPECT_EQ(read.scenarios, run->scenarios);
  EXPECT_LT(to_exchange_json(*run).dump().size(), written.dump().size());
}

TEST(ResultDocumentWriter, NoPieceHoldsMoreThanOneRow) {
  auto run = std::make_shared<RunResult>();
  run->result = result_of(random_responses(6, 2000), 2.0);
  for (int i = 0; i < 20; ++i)
    run->stages.push_back(StageResult{i, 1.0, 1u, std::nullopt, run->result});
  for (int i = 0; i < 20; ++i)
    run->request_results.push_back(NamedResult{"r" + std::to_string(i), run->result});
  std::size_t largest = 0;
  const std::string written = written_document(run, nlohmann::json::object(), &largest);
  RunResult only_totals;
  only_totals.result = run->result;
  const nlohmann::json one_row =
      to_exchange_json(only_totals, Histogram::Encoding::uncompressed)["result"];
  // One row and the separators around it; the document is 41 rows.
  EXPECT_LT(largest, one_row.dump().size() + 200);
  EXPECT_GT(written.size(), 40 * one_row.dump().size());
}

// A run with a row of every kind, some error kinds and histograms empty.
RunResult run_of_every_row() {
  RunResult run;
  run.result = result_of(random_responses(7, 800), 2.0);
  run.result.errors.timeout = 3;
  run.result.error_latency.record(900, 3);
  run.result.rate = RateCounts{50.0, 4};
  run.result.tls = TlsCounts{12, 9, 3, 3};
  run.warmup_requests = 5;
  run.stages.push_back(StageResult{0, 1.0, 4u, std::nullopt, run.result});
  const Result idle;
  run.stages.push_back(StageResult{1, 1.0, std::nullopt, 25.0, idle});
  run.request_results.push_back(NamedResult{"login", run.result});
  run.request_results.push_back(NamedResult{"idle", idle});
  ScenarioResult buy{"buy", 3, 1, Histogram{}};
  buy.duration.record(40'000, 3);
  run.scenarios.push_back(std::move(buy));
  run.scenarios.push_back(ScenarioResult{"never", 0, 0, Histogram{}});
  return run;
}

TEST(ResultExchange, ReadsBackAsTheSameRunAndTheSameReport) {
  const RunResult run = run_of_every_row();
  const RunResult read = run_result_from_json(to_exchange_json(run));
  EXPECT_EQ(read.result, run.result);
  ASSERT_EQ(read.stages.size(), run.stages.size());
  for (size_t i = 0; i < run.stages.size(); ++i) {
    EXPECT_EQ(read.stages[i].index, run.stages[i].index);
    EXPECT_EQ(read.stages[i].connections, run.stages[i].connections);
    EXPECT_EQ(read.stages[i].rate, run.stages[i].rate);
    EXPECT_EQ(read.stages[i].result, run.stages[i].result) << "stage " << i;
  }
  ASSERT_EQ(read.request_results.size(), run.request_results.size());
  for (size_t i = 0; i < run.request_results.size(); ++i) {
    EXPECT_EQ(read.request_results[i].name, run.request_results[i].name);
    EXPECT_EQ(read.request_results[i].result, run.request_results[i].result) << "request " << i;
  }
  EXPECT_EQ(read.scenarios, run.scenarios);
  EXPECT_EQ(read.warmup_requests, run.warmup_requests);
  // Everything a report derives comes out the same from what was left.
  EXPECT_EQ(to_json(read), to_json(run));
}

TEST(ResultExchange, CarriesNothingDerivedNorEmpty) {
  const RunResult run = run_of_every_row();
  const nlohmann::json exchange = to_exchange_json(run);
  const nlohmann::json report = to_json(run);
  EXPECT_LT(exchange.dump().size(), report.dump().size());
  for (const nlohmann::json& row :
       {exchange["result"], exchange["stages"][0], exchange["stages"][1],
        exchange["requestResults"][0], exchange["requestResults"][1]}) {
    for (const char* derived : {"latencyMs", "connectMs", "waitingMs", "errorLatencyMs", "failures",
                                "errorRate", "rps"}) {
      EXPECT_FALSE(row.contains(derived)) << derived << " in " << row.dump().substr(0, 200);
    }
    for (const auto& [kind, count] : row["errors"].items()) EXPECT_NE(count, 0) << kind;
  }
  EXPECT_EQ(exchange["result"]["errors"],
            (nlohmann::json{{"status", run.result.errors.status}, {"timeout", 3}}));
  EXPECT_FALSE(exchange["result"]["rate"].contains("dropped"));
  EXPECT_TRUE(exchange["result"].contains("histogram"));
  // An empty row: its counters, none of its histograms.
  EXPECT_EQ(exchange["requestResults"][1]["requests"], 0);
  for (const char* histogram :
       {"histogram", "connectHistogram", "waitingHistogram", "errorHistogram"}) {
    EXPECT_FALSE(exchange["requestResults"][1].contains(histogram)) << histogram;
  }
  EXPECT_FALSE(exchange["scenarioResults"][0].contains("durationMs"));
  EXPECT_TRUE(exchange["scenarioResults"][0].contains("histogram"));
  EXPECT_FALSE(exchange["scenarioResults"][1].contains("histogram"));
}

TEST(ResultDocumentWriter, RefusesAHeadThatIsNotAnObject) {
  EXPECT_THROW(ResultDocumentWriter(std::make_shared<RunResult>(), nlohmann::json::array()),
               std::invalid_argument);
}

TEST(Result, EmptyResultHasNoNanOrInf) {
  const Result empty;
  EXPECT_EQ(empty.rps(), 0.0);
  EXPECT_EQ(empty.error_rate(), 0.0);
  nlohmann::json out;
  to_json(out, empty);
  EXPECT_EQ(out.dump().find("null"), std::string::npos) << out.dump();
}

}  // namespace
}  // namespace kubeload

namespace {

// Any pod may answer on a worker's address: a document whose fields have the
// wrong type is refused with the field named, as every other bad field is
// (found by the worker_documents fuzz target: "version": 1 threw nlohmann's
// type_error past the readers' catch).
TEST(Result, ATopLevelFieldOfTheWrongTypeIsRefusedNamingIt) {
  using nlohmann::json;
  const auto refusal = [](const json& document) -> std::string {
    try {
      kubeload::run_result_from_json(document);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(refusal(json{{"version", 1}, {"result", json::object()}}).find("version"),
            std::string::npos);
  EXPECT_NE(refusal(json{{"version", "v1"}, {"finished", "yes"}, {"result", json::object()}})
                .find("finished: must be true or false"),
            std::string::npos);
  EXPECT_EQ(refusal(json{{"version", "v1"}, {"finished", false}, {"result", json::object()}}),
            "accepted");
}

}  // namespace
