// The LoadTestResult builder, golden-tested as the other builders
// (tests/golden/operator/result_record_default.json), with its name, digest
// and size bound. Regenerate the golden after an intended change with
//   KUBELOAD_UPDATE_GOLDEN=1 ./unit_tests --gtest_filter='OperatorResultRecord*'

#include <gtest/gtest.h>

#include "golden_files.hpp"

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/loadtest_result.hpp"
#include "kubeload/rfc3339.hpp"
#include "operator/result_record.hpp"

#ifndef KUBELOAD_SOURCE_DIR
#error "KUBELOAD_SOURCE_DIR must point at the repository"
#endif

namespace {

using kubeload::RunResult;
using kubeload::api::LoadTest;
using kubeload::api::LoadTestResult;
using kubeload::api::LoadTestStatus;
using kubeload::controller::build_result_record;
using kubeload::controller::result_record_name;
using kubeload::controller::spec_digest;
using nlohmann::json;

LoadTest a_loadtest() {
  return json::parse(R"({
    "apiVersion": "kubeload.dev/v1alpha1", "kind": "LoadTest",
    "metadata": {"name": "checkout-nightly", "namespace": "shop", "uid": "4a1c2d3e-0000-4000-8000-000000000001",
                 "generation": 1,
                 "labels": {"kubeload.dev/test": "checkout", "team": "payments"},
                 "annotations": {"kubeload.dev/revision": "v1.4.2", "note": "not copied"}},
    "spec": {"target": {"url": "http://checkout.shop.svc:8080/"}, "load": {"duration": "30s"},
             "thresholds": ["p99 < 200ms"]}})")
      .get<LoadTest>();
}

LoadTestStatus a_final_status() {
  return json::parse(R"({
    "observedGeneration": 1, "phase": "Succeeded", "verdict": "Pass", "reason": "ThresholdsPassed",
    "message": "all 1 threshold met", "startTime": "2026-12-04T10:00:00Z",
    "completionTime": "2026-12-04T10:00:31Z", "errorPercent": 0,
    "result": {"requests": 3000, "rps": 100, "latencyMs": {"p99": 12.5}},
    "thresholds": [{"expression": "p99 < 200ms", "observed": "12.5ms", "value": 12.5, "passed": true}]})")
      .get<LoadTestStatus>();
}

RunResult a_merge() {
  RunResult run;
  run.result.requests = 3000;
  run.result.duration_seconds = 30;
  run.result.status_codes[200] = 3000;
  for (int64_t i = 1; i <= 3000; ++i) run.result.latency.record(i * 4000);
  return run;
}

TEST(OperatorResultRecordGolden, DefaultRecordMatchesGoldenFile) {
  kubeload::golden::expect_golden_file(
      std::filesystem::path(KUBELOAD_SOURCE_DIR) /
          "tests/golden/operator/result_record_default.json",
      build_result_record(a_loadtest(), a_final_status(), a_merge()));
}

TEST(OperatorResultRecord, ItsNameIsTheRunsOwnSoASecondWriteIsTheSameRecord) {
  const LoadTest loadtest = a_loadtest();
  EXPECT_EQ(result_record_name(loadtest.metadata), "checkout-nightly-4a1c2d3e");
  EXPECT_EQ(build_result_record(loadtest, a_final_status(), a_merge()),
            build_result_record(loadtest, a_final_status(), a_merge()));
  // A name at the longest a LoadTest's may be still makes a valid name.
  kubeload::api::ObjectMeta long_name;
  long_name.name = std::string(240, 'a') + "." + std::string(12, 'b');
  long_name.uid = "0123456789";
  const std::string name = result_record_name(long_name);
  EXPECT_LE(name.size(), 253u);
  EXPECT_EQ(name.substr(name.size() - 9), "-01234567");
  EXPECT_NE(name[name.size() - 10], '.');
}

TEST(OperatorResultRecord, OneSpecOneDigest) {
  const json a = json::parse(R"({"load": {"duration": "30s"}, "workers": 2})");
  const json b = json::parse(R"({"workers": 2, "load": {"duration": "30s"}})");
  EXPECT_EQ(spec_digest(a), spec_digest(b));
  EXPECT_NE(spec_digest(a), spec_digest(json::parse(R"({"workers": 3})")));
  EXPECT_EQ(spec_digest(a).rfind("sha256:", 0), 0u);
  EXPECT_EQ(spec_digest(a).size(), 7u + 64u);
}

TEST(OperatorResultRecord, ARecordTooLargeLeavesOutTheMergeThenTheSpec) {
  LoadTest loadtest = a_loadtest();
  // A spec near the record's bound by itself (a large request body).
  loadtest.spec["requests"] = json::array(
      {{{"name", "big"}, {"body", std::string(kubeload::api::kResultRecordSizeLimit, 'x')}}});
  const LoadTestResult record = build_result_record(loadtest, a_final_status(), a_merge());
  EXPECT_FALSE(record.load_test.spec.has_value());
  EXPECT_EQ(record.load_test.spec_digest, spec_digest(loadtest.spec));
  EXPECT_TRUE(record.merged.data.empty());
  ASSERT_TRUE(record.merged.omitted.has_value());
  EXPECT_NE(record.merged.omitted->find("do not fit"), std::string::npos) << *record.merged.omitted;
  EXPECT_LE(json(record).dump().size(), kubeload::api::kResultRecordSizeLimit);
  // Without a merge kept, it says so.
  EXPECT_EQ(build_result_record(a_loadtest(), a_final_status(), std::nullopt).merged.omitted,
            "no merged result was kept of this run");
}

}  // namespace
