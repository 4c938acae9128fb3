// The typed LoadTest (kubeload/api/loadtest.hpp): reading a LoadTest as the
// API server returns it, leniently; writing a status the same way every
// time. The schema side is crd_test.cpp's.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/rfc3339.hpp"

namespace {

using kubeload::api::Condition;
using kubeload::api::ConditionStatus;
using kubeload::api::ConditionType;
using kubeload::api::LoadTest;
using kubeload::api::LoadTestStatus;
using kubeload::api::Phase;
using kubeload::api::Verdict;
using nlohmann::json;

const json kLoadTest = json::parse(R"({
  "apiVersion": "kubeload.dev/v1alpha1", "kind": "LoadTest",
  "metadata": {"name": "checkout", "namespace": "shop", "uid": "u-1", "generation": 4,
               "resourceVersion": "812", "creationTimestamp": "2026-11-29T19:00:00Z",
               "labels": {"kubeload.dev/test": "checkout"},
               "annotations": {"note": "x"}},
  "spec": {"target": {"url": "http://checkout/"}, "workers": 2},
  "status": {
    "observedGeneration": 4, "phase": "Succeeded", "verdict": "Pass",
    "reason": "ThresholdsPassed", "message": "all 1 threshold met",
    "startTime": "2026-11-29T19:00:20Z", "completionTime": "2026-11-29T19:00:51Z",
    "progress": "100%", "errorPercent": 0.25,
    "workers": {"desired": 2, "ready": 2, "succeeded": 2, "failed": 0, "startSkewMs": 3},
    "result": {"requests": 1000, "rps": 33.3, "errorRate": 0.0025, "durationSeconds": 30.0,
               "latencyMs": {"p99": 12.5, "mean": 4.0}},
    "stages": [{"index": 0, "plannedDurationSeconds": 10.0}, {"index": 1}],
    "thresholds": [{"expression": "p99 < 20ms", "observed": "12.5ms", "value": 12.5,
                    "passed": true}],
    "conditions": [
      {"type": "Ready", "status": "True", "reason": "ThresholdsPassed", "message": "m",
       "lastTransitionTime": "2026-11-29T19:00:51Z", "observedGeneration": 4},
      {"type": "SomethingNewer", "status": "False", "reason": "Later", "message": "",
       "lastTransitionTime": "2026-11-29T19:00:51Z", "observedGeneration": 4}
    ]
  }
})");

TEST(ApiLoadTest, ReadsEveryFieldOfALoadTestAsTheApiReturnsIt) {
  const LoadTest loadtest = kLoadTest.get<LoadTest>();
  EXPECT_EQ(loadtest.metadata.name, "checkout");
  EXPECT_EQ(loadtest.metadata.namespace_, "shop");
  EXPECT_EQ(loadtest.metadata.uid, "u-1");
  EXPECT_EQ(loadtest.metadata.generation, 4);
  EXPECT_EQ(loadtest.metadata.resource_version, "812");
  EXPECT_EQ(loadtest.metadata.creation_timestamp, kubeload::rfc3339::parse("2026-11-29T19:00:00Z"));
  EXPECT_EQ(loadtest.metadata.labels.at("kubeload.dev/test"), "checkout");
  EXPECT_FALSE(loadtest.metadata.deleting);
  EXPECT_EQ(loadtest.spec, kLoadTest["spec"]);

  const LoadTestStatus& status = loadtest.status;
  EXPECT_EQ(status.phase, Phase::Succeeded);
  EXPECT_TRUE(status.final());
  EXPECT_EQ(status.verdict, Verdict::Pass);
  EXPECT_EQ(status.workers->start_skew_ms, 3);
  ASSERT_EQ(status.thresholds.size(), 1u);
  EXPECT_EQ(status.thresholds[0].value, 12.5);
  // A condition type of another operator version is kept as spelled.
  ASSERT_EQ(status.conditions.size(), 2u);
  EXPECT_EQ(status.conditions[1].type, "SomethingNewer");
  ASSERT_NE(find_condition(status.conditions, ConditionType::Ready), nullptr);
  EXPECT_EQ(find_condition(status.conditions, ConditionType::Ready)->status, ConditionStatus::True);
  EXPECT_EQ(find_condition(status.conditions, ConditionType::Stalled), nullptr);
}

TEST(ApiLoadTest, AStatusWrittenReadsBackUnchanged) {
  const json status = kLoadTest["status"];
  EXPECT_EQ(json(status.get<LoadTestStatus>()), status);
}

TEST(ApiLoadTest, ATargetNotMeasuredWritesOnlyWhereTheLoadWentAndWhoShared) {
  // Recorded at the start and decided at the end (issue 29), with or
  // without Prometheus: no empty window or pod count beside them.
  const json target = json::parse(R"({
    "addresses": ["10.244.0.5", "nginx.shop.svc"],
    "sharedWith": [{"namespace": "shop", "name": "other"}]
  })");
  const LoadTestStatus status = json{{"target", target}}.get<LoadTestStatus>();
  ASSERT_TRUE(status.target);
  EXPECT_FALSE(status.target->measured());
  ASSERT_EQ(status.target->shared_with.size(), 1u);
  EXPECT_EQ(to_string(status.target->shared_with[0]), "shop/other");
  EXPECT_EQ(json(status)["target"], target);
}

TEST(ApiLoadTest, WhatDecisionsReadOfTheResult) {
  const kubeload::api::ResultFigures figures =
      result_figures(kLoadTest["status"].get<LoadTestStatus>());
  EXPECT_EQ(figures.metric("rps"), 33.3);
  EXPECT_EQ(figures.metric("errorRate"), 0.0025);
  EXPECT_EQ(figures.metric("p99"), 12.5);
  EXPECT_EQ(figures.metric("p95"), std::nullopt);  // not measured
  EXPECT_EQ(figures.duration_seconds, 30.0);
  EXPECT_EQ(figures.requests, 1000u);
  ASSERT_EQ(figures.stage_planned_seconds.size(), 2u);
  EXPECT_EQ(figures.stage_planned_seconds[0], 10.0);
  EXPECT_EQ(figures.stage_planned_seconds[1], std::nullopt);
}

TEST(ApiLoadTest, ReadingIsLenient) {
  // The CRD's default status, a status of no known phase, and members of
  // the wrong type read as unset, never as an exception.
  EXPECT_EQ(json::parse(R"({"observedGeneration": 0})").get<LoadTestStatus>(), LoadTestStatus{});
  const LoadTestStatus odd = json::parse(R"({
    "phase": "Paused", "verdict": 3, "startTime": "yesterday", "workers": [],
    "result": "big", "thresholds": {}, "conditions": [{"type": "Ready"}, 7]
  })")
                                 .get<LoadTestStatus>();
  EXPECT_FALSE(odd.phase);
  EXPECT_FALSE(odd.final());
  EXPECT_FALSE(odd.verdict);
  EXPECT_FALSE(odd.start_time);
  EXPECT_FALSE(odd.workers);
  EXPECT_FALSE(odd.result);
  EXPECT_TRUE(odd.thresholds.empty());
  ASSERT_EQ(odd.conditions.size(), 1u);
  EXPECT_EQ(odd.conditions[0].status, ConditionStatus::Unknown);
  EXPECT_EQ(json(nullptr).get<LoadTest>().metadata.name, "");
}

TEST(ApiLoadTest, TimesAreWholeSecondsAsMetav1TimeKeepsThem) {
  LoadTestStatus status;
  status.start_time =
      kubeload::api::whole_seconds(*kubeload::rfc3339::parse("2026-11-29T19:00:20.750Z"));
  EXPECT_EQ(json(status)["startTime"], "2026-11-29T19:00:20Z");
  EXPECT_EQ(json(status).get<LoadTestStatus>(), status);
}

}  // namespace
