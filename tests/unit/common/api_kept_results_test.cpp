// The kept results (kubeload/api/kept_results.hpp): the results ConfigMap's
// data reads back as what was kept, a wrong field is named, another run's
// data is refused, and the form before the running merge ("worker-<index>",
// one /result document each) still reads.

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/kept_results.hpp"
#include "kubeload/api/worker_protocol.hpp"
#include "kubeload/result.hpp"

namespace kubeload::api {
namespace {

using nlohmann::json;

constexpr const char* kUid = "6f1c0d3e-8a55-4b6b-9a0e-3f1f6c2d9b77";

RunResult run_of(uint64_t requests, const std::string& name) {
  RunResult run;
  run.result.requests = requests;
  run.result.status_codes[200] = requests;
  run.result.duration_seconds = 30;
  for (uint64_t i = 0; i < requests; ++i) run.result.latency.record(1000 + int64_t(i % 50));
  run.request_results.push_back(NamedResult{name, run.result});
  return run;
}

KeptResults two_workers() {
  KeptResults kept;
  kept.loadtest_uid = kUid;
  kept.workers[0] = KeptWorker{true, 1764442800123, "", GeneratorCpu::of(2.9, 30, 0.1, 0.1)};
  kept.workers[3] = KeptWorker{false, std::nullopt, "interrupted (SIGTERM) after 10 requests"};
  kept.merged = run_of(500, "checkout");
  kept.merged->merge(run_of(10, "cart"));
  return kept;
}

std::string error_of(const json& data, const std::string& uid = kUid) {
  try {
    kept_results_from_config_map_data(data, uid);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ApiKeptResults, ReadsBackAsWhatWasKept) {
  const KeptResults kept = two_workers();
  const json data = to_config_map_data(kept);
  // A ConfigMap's data: strings under the three keys.
  ASSERT_EQ(data.size(), 3u) << data.dump();
  for (const char* key : {"loadTestUid", "workers", "merged"}) {
    ASSERT_TRUE(data.contains(key)) << key;
    EXPECT_TRUE(data[key].is_string()) << key;
  }
  // The merge as a worker's final result is written: nothing derived.
  EXPECT_EQ(json::parse(data["merged"].get<std::string>()), to_exchange_json(*kept.merged));
  const std::optional<KeptResults> read = kept_results_from_config_map_data(data, kUid);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->loadtest_uid, kUid);
  EXPECT_EQ(read->workers, kept.workers);
  ASSERT_TRUE(read->merged);
  EXPECT_EQ(to_json(*read->merged), to_json(*kept.merged));
  EXPECT_EQ(read->merged->result, kept.merged->result);
}

TEST(ApiKeptResults, NothingKeptYetIsNothing) {
  EXPECT_EQ(kept_results_from_config_map_data(json(), kUid), std::nullopt);
  EXPECT_EQ(kept_results_from_config_map_data(json::object(), kUid), std::nullopt);
  // A run without workers in the merge yet keeps its uid alone.
  KeptResults none;
  none.loadtest_uid = kUid;
  const json data = to_config_map_data(none);
  EXPECT_FALSE(data.contains("merged"));
  const auto read = kept_results_from_config_map_data(data, kUid);
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->workers.empty());
  EXPECT_FALSE(read->merged);
}

TEST(ApiKeptResults, ErrorsAreKeptShort) {
  KeptResults kept = two_workers();
  kept.workers[3].error = std::string(1000, 'x');
  const auto read = kept_results_from_config_map_data(to_config_map_data(kept), kUid);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->workers.at(3).error, std::string(kKeptErrorLength, 'x'));
}

TEST(ApiKeptResults, AnotherRunsDataIsRefused) {
  const json data = to_config_map_data(two_workers());
  EXPECT_EQ(error_of(data, "another-uid"),
            std::string("loadTestUid: not this run's (\"") + kUid + "\")");
}

TEST(ApiKeptResults, AWrongFieldIsNamed) {
  const json good = to_config_map_data(two_workers());
  const auto with = [&](const std::string& key, json value) {
    json data = good;
    if (value.is_null()) {
      data.erase(key);
    } else {
      data[key] = std::move(value);
    }
    return data;
  };
  const auto with_facts = [&](const std::string& facts) { return with("workers", facts); };
  struct Row {
    std::string what;
    json data;
    std::string expected;  // the start of the message
  };
  const std::vector<Row> rows = {
      {"data not an object", json::array(), "the data: must be a JSON object"},
      {"uid missing", with("loadTestUid", nullptr), "loadTestUid: is required"},
      {"uid a number", with("loadTestUid", 5), "loadTestUid: must be a string"},
      {"workers missing", with("workers", nullptr), "workers: is required"},
      {"workers not JSON", with_facts("{\"0\":"), "workers: is not JSON"},
      {"workers a list", with_facts("[]"), "workers: must be a JSON object"},
      {"worker key not an index", with_facts(R"({"zero":{"finished":true}})"),
       "workers: key \"zero\" is not a worker index"},
      {"worker key negative", with_facts(R"({"-1":{"finished":true}})"),
       "workers: key \"-1\" is not a worker index"},
      {"worker key past 32 bits", with_facts(R"({"4294967296":{"finished":true}})"),
       "workers: key \"4294967296\" is not a worker index"},
      {"worker there twice", with_facts(R"({"1":{},"01":{}})"), "workers: worker 1 is there twice"},
      {"facts not an object", with_facts(R"({"0":true})"), "workers.0: must be a JSON object"},
      {"finished as text", with_facts(R"({"0":{"finished":"yes"}})"),
       "workers.0.finished: must be true or false"},
      {"start as text", with_facts(R"({"2":{"startedAtMs":"soon"}})"),
       "workers.2.startedAtMs: must be an integer"},
      {"error as number", with_facts(R"({"0":{"error":5}})"), "workers.0.error: must be a string"},
      {"cpu without cores",
       with_facts(R"({"1":{"cpu":{"seconds":1,"windowSeconds":2,"utilization":0.5}}})"),
       "workers.1.cpu.cores: is required"},
      {"merge missing", with("merged", nullptr), "merged: is required"},
      {"merge not JSON", with("merged", "{"), "merged: is not JSON"},
      {"merge of another version", with("merged", R"({"version":"v0"})"),
       "merged: version: must be"},
      {"merge's field", with("merged", R"({"version":"v1","result":{"requests":-3}})"),
       "merged: result.requests: must be a non-negative integer"},
  };
  for (const Row& row : rows) {
    const std::string message = error_of(row.data);
    EXPECT_EQ(message.rfind(row.expected, 0), 0u) << row.what << ": " << message;
  }
}

// The form before the running merge.
json legacy_data(const std::map<std::string, json>& documents) {
  json data = json::object();
  for (const auto& [key, document] : documents) data[key] = document.dump();
  return data;
}

json final_document(uint32_t worker, uint64_t requests, const std::string& uid = kUid,
                    const std::string& error = "") {
  return to_json(ResultDocument{
      ResultHead{worker, uid, 1764442800000 + worker, error, std::nullopt}, run_of(requests, "r")});
}

TEST(ApiKeptResults, TheFormBeforeTheRunningMergeStillReads) {
  const json data = legacy_data({{"worker-0", final_document(0, 500)},
                                 {"worker-1", final_document(1, 70, kUid, "interrupted")},
                                 {"worker-10", final_document(10, 30)}});
  EXPECT_EQ(legacy_result_keys(data),
            (std::vector<std::string>{"worker-0", "worker-1", "worker-10"}));
  const auto read = kept_results_from_config_map_data(data, kUid);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->loadtest_uid, kUid);
  EXPECT_EQ(read->workers,
            (std::map<uint32_t, KeptWorker>{{0, KeptWorker{true, 1764442800000, ""}},
                                            {1, KeptWorker{true, 1764442800001, "interrupted"}},
                                            {10, KeptWorker{true, 1764442800010, ""}}}));
  ASSERT_TRUE(read->merged);
  EXPECT_EQ(read->merged->result.requests, 600u);
  // Written back in the new form, it reads as the same.
  const auto again = kept_results_from_config_map_data(to_config_map_data(*read), kUid);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->workers, read->workers);
  EXPECT_EQ(to_json(*again->merged), to_json(*read->merged));
  // The new form has no legacy keys.
  EXPECT_TRUE(legacy_result_keys(to_config_map_data(*read)).empty());
}

TEST(ApiKeptResults, ALegacyDocumentThatDoesNotReadIsNamedByItsKey) {
  struct Row {
    std::string what;
    json data;
    std::string expected;
  };
  json bad_field = final_document(1, 5);
  bad_field["result"]["requests"] = "many";
  json bad_uid = final_document(1, 5);
  bad_uid["loadTestUid"] = 7;
  const std::vector<Row> rows = {
      {"another run's",
       legacy_data({{"worker-0", final_document(0, 5)}, {"worker-1", final_document(1, 5, "old")}}),
       "worker-1: not this run's (loadTestUid \"old\")"},
      {"a key that is no index", legacy_data({{"worker-one", final_document(1, 5)}}),
       "worker-one: is not worker-<index>"},
      {"not JSON", json{{"worker-0", "{"}}, "worker-0: is not JSON"},
      {"not a string", json{{"worker-0", 5}}, "worker-0: must be a string"},
      {"a bad field", legacy_data({{"worker-1", bad_field}}),
       "worker-1: result.requests: must be a non-negative integer"},
      {"a bad head", legacy_data({{"worker-1", bad_uid}}),
       "worker-1: loadTestUid: must be a string"},
      {"a worker twice",
       legacy_data({{"worker-1", final_document(1, 5)}, {"worker-01", final_document(1, 5)}}),
       "worker-1: worker 1 is kept twice"},
  };
  for (const Row& row : rows) {
    const std::string message = error_of(row.data);
    EXPECT_EQ(message.rfind(row.expected, 0), 0u) << row.what << ": " << message;
  }
}

TEST(ApiKeptResults, ConfigMapDataIsItsDataField) {
  const json config_map = {{"metadata", {{"name", "r"}}}, {"data", {{"loadTestUid", kUid}}}};
  EXPECT_EQ(config_map_data(config_map), (json{{"loadTestUid", kUid}}));
  EXPECT_TRUE(config_map_data(json{{"metadata", json::object()}}).is_null());
  EXPECT_TRUE(config_map_data(json("not an object")).is_null());
}

}  // namespace
}  // namespace kubeload::api
