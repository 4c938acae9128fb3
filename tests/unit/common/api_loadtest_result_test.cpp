// The LoadTestResult record: one encoding both ways, the merged result
// compressed and decoded exactly (or refused naming what is wrong), and the
// CRD's `run` schema the same as the LoadTest's status schema.

#include <gtest/gtest.h>

#include <string>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest_result.hpp"
#include "kubeload/histogram.hpp"
#include "kubeload/result.hpp"

#ifndef KUBELOAD_SOURCE_DIR
#error "KUBELOAD_SOURCE_DIR must point at the repository"
#endif

namespace {

using kubeload::RunResult;
using kubeload::api::LoadTestResult;
using kubeload::api::merged_result;
using nlohmann::json;

RunResult a_run() {
  RunResult run;
  run.result.requests = 1000;
  run.result.duration_seconds = 10;
  for (int64_t us = 100; us < 100000; us += 37) run.result.latency.record(us * 1000);
  run.result.status_codes[200] = 1000;
  return run;
}

LoadTestResult a_record() {
  LoadTestResult record;
  record.metadata.name = "checkout-0a1b2c3d";
  record.metadata.namespace_ = "shop";
  record.test = "checkout";
  record.load_test = {"checkout", "0a1b2c3d-uid", 2, "sha256:00", "abc123", json{{"workers", 2}}};
  record.run.phase = kubeload::api::Phase::Succeeded;
  record.run.verdict = kubeload::api::Verdict::Pass;
  record.run.result_record = record.metadata.name;
  record.merged = kubeload::api::encode_merged(a_run());
  return record;
}

TEST(ApiLoadTestResult, ReadsBackWhatItWrites) {
  const LoadTestResult record = a_record();
  const json written = record;
  EXPECT_EQ(written["kind"], "LoadTestResult");
  EXPECT_EQ(written["apiVersion"], "kubeload.dev/v1alpha1");
  EXPECT_EQ(written["merged"]["encoding"], "zlib+base64");
  EXPECT_EQ(written.get<LoadTestResult>(), record);
}

TEST(ApiLoadTestResult, TheMergedResultIsExactAfterTheRoundTrip) {
  const RunResult run = a_run();
  const std::optional<RunResult> read = merged_result(a_record());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->result.requests, run.result.requests);
  EXPECT_EQ(read->result.latency.total_count(), run.result.latency.total_count());
  EXPECT_EQ(read->result.latency.value_at_percentile(99.0),
            run.result.latency.value_at_percentile(99.0));
  // Compressed: smaller than its JSON.
  EXPECT_LT(a_record().merged.data.size(), kubeload::to_json(run, true).dump().size());
}

TEST(ApiLoadTestResult, ADamagedMergedResultIsRefusedNamingIt) {
  LoadTestResult record = a_record();
  record.merged.data = "not base64!";
  EXPECT_THROW(
      {
        try {
          merged_result(record);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("merged.data"), std::string::npos) << e.what();
          throw;
        }
      },
      std::invalid_argument);
  record = a_record();
  record.merged.data = record.merged.data.substr(0, record.merged.data.size() / 2 / 4 * 4);
  EXPECT_THROW(merged_result(record), std::invalid_argument);
  record = a_record();
  record.merged.encoding = "gzip";
  EXPECT_THROW(merged_result(record), std::invalid_argument);
  record = a_record();
  record.merged = {};
  EXPECT_FALSE(merged_result(record).has_value());
}

YAML::Node schema_of(const std::string& file) {
  return YAML::LoadFile(std::string(KUBELOAD_SOURCE_DIR) + "/crds/" +
                        file)["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
}

TEST(ApiLoadTestResult, TheRecordsRunSchemaIsTheLoadTestsStatusSchema) {
  const YAML::Node status = schema_of("kubeload.dev_loadtests.yaml")["properties"]["status"];
  const YAML::Node run = schema_of("kubeload.dev_loadtestresults.yaml")["properties"]["run"];
  YAML::Emitter a, b;
  a << status;
  b << run;
  EXPECT_EQ(std::string(b.c_str()), std::string(a.c_str()))
      << "crds/kubeload.dev_loadtestresults.yaml's run must be the LoadTest's status schema";
  // And what a record writes at its top level is what the CRD declares.
  const YAML::Node properties = schema_of("kubeload.dev_loadtestresults.yaml")["properties"];
  const json written = a_record();
  for (const auto& [key, value] : written.items()) {
    EXPECT_TRUE(properties[key]) << key << " is written but not in the CRD";
  }
  for (const auto& [key, value] : written["loadTest"].items()) {
    EXPECT_TRUE(properties["loadTest"]["properties"][key]) << "loadTest." << key;
  }
  for (const auto& [key, value] : written["merged"].items()) {
    EXPECT_TRUE(properties["merged"]["properties"][key]) << "merged." << key;
  }
}

}  // namespace
