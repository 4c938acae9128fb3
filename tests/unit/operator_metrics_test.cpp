#include "operator/operator_metrics.hpp"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <map>
#include <optional>
#include <string>

namespace kubeload::controller {
namespace {

using nlohmann::json;
using Labels = std::map<std::string, std::string>;

// The value of the gauge `name` whose labels include all of `want`, or
// nullopt when there is no such series.
std::optional<double> gauge(const OperatorMetrics& metrics, const std::string& name,
                            const Labels& want) {
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      Labels labels;
      for (const auto& pair : metric.label) labels[pair.name] = pair.value;
      bool match = true;
      for (const auto& [key, value] : want) match = match && labels[key] == value;
      if (match) return metric.gauge.value;
    }
  }
  return std::nullopt;
}

json loadtest(const std::string& name, const std::string& uid, const std::string& test) {
  json labels = json::object();
  if (!test.empty()) labels["kubeload.dev/test"] = test;
  return {{"metadata", {{"name", name}, {"namespace", "shop"}, {"uid", uid}, {"labels", labels}}}};
}

json finished(const std::string& verdict, const std::string& ended, double rps) {
  return {
      {"phase", "Succeeded"},
      {"verdict", verdict},
      {"startTime", "2026-11-30T10:00:00Z"},
      {"completionTime", ended},
      {"result",
       {{"rps", rps}, {"errorRate", 0.0}, {"requests", 1000}, {"latencyMs", {{"p99", 12.5}}}}},
      {"thresholds",
       {{{"expression", "p99 < 20ms"}, {"observed", "12.5ms"}, {"passed", true}, {"value", 12.5}},
        {{"expression", "rps >= 100"},
         {"observed", json(rps).dump() + "/s"},
         {"passed", rps >= 100},
         {"value", rps}}}}};
}

const Labels kCheckout = {{"namespace", "shop"}, {"test", "checkout"}};

Labels with(Labels labels, const std::string& key, const std::string& value) {
  labels[key] = value;
  return labels;
}

TEST(OperatorMetricsHistory, NewestRunAndTheOneBeforeWhateverTheOrderSeen) {
  for (const bool newest_first : {true, false}) {
    OperatorMetrics metrics;
    const auto older = [&] {
      metrics.observe_loadtest(loadtest("checkout-a", "uid-a", "checkout"),
                               finished("Pass", "2026-11-30T10:01:00Z", 500));
    };
    const auto newer = [&] {
      metrics.observe_loadtest(loadtest("checkout-b", "uid-b", "checkout"),
                               finished("Fail", "2026-11-30T11:01:00Z", 80));
    };
    if (newest_first) {
      newer();
      older();
    } else {
      older();
      newer();
    }
    older();  // seen again on a resync: changes nothing
    EXPECT_EQ(gauge(metrics, "kubeload_test_last_verdict", with(kCheckout, "verdict", "Fail")), 1)
        << newest_first;
    EXPECT_EQ(gauge(metrics, "kubeload_test_last_verdict", with(kCheckout, "verdict", "Pass")), 0);
    EXPECT_EQ(gauge(metrics, "kubeload_test_previous_verdict", with(kCheckout, "verdict", "Pass")),
              1);
    EXPECT_EQ(gauge(metrics, "kubeload_test_last_rps", kCheckout), 80);
    EXPECT_EQ(gauge(metrics, "kubeload_test_last_run_end_timestamp_seconds", kCheckout),
              1796036460);  // 2026-11-30T11:01:00Z
    EXPECT_EQ(gauge(metrics, "kubeload_test_last_run_start_timestamp_seconds", kCheckout),
              1796032800);
  }
}

TEST(OperatorMetricsHistory, SeriesAreLabelledByTestNotByRun) {
  OperatorMetrics metrics;
  metrics.observe_loadtest(loadtest("checkout-a", "uid-a", "checkout"),
                           finished("Pass", "2026-11-30T10:01:00Z", 500));
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name.rfind("kubeload_test_", 0) != 0) continue;
    for (const auto& metric : family.metric) {
      for (const auto& label : metric.label) EXPECT_NE(label.name, "loadtest") << family.name;
    }
  }
}

TEST(OperatorMetricsHistory, ThresholdsInBaseUnitsAndOnlyTheNewestRunsOnes) {
  OperatorMetrics metrics;
  metrics.observe_loadtest(loadtest("checkout-a", "uid-a", "checkout"),
                           finished("Pass", "2026-11-30T10:01:00Z", 500));
  EXPECT_DOUBLE_EQ(*gauge(metrics, "kubeload_test_last_threshold_value",
                          with(kCheckout, "threshold", "p99 < 20ms")),
                   0.0125);
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_threshold_value",
                  with(kCheckout, "threshold", "rps >= 100")),
            500);
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_threshold_passed",
                  with(kCheckout, "threshold", "rps >= 100")),
            1);

  json next = finished("Fail", "2026-11-30T11:01:00Z", 80);
  next["thresholds"].erase(0);           // the p99 threshold was dropped from the test
  next["thresholds"][0].erase("value");  // and rps was not measured
  metrics.observe_loadtest(loadtest("checkout-b", "uid-b", "checkout"), next);
  EXPECT_FALSE(gauge(metrics, "kubeload_test_last_threshold_passed",
                     with(kCheckout, "threshold", "p99 < 20ms")));
  EXPECT_FALSE(gauge(metrics, "kubeload_test_last_threshold_value",
                     with(kCheckout, "threshold", "rps >= 100")));
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_threshold_passed",
                  with(kCheckout, "threshold", "rps >= 100")),
            0);
}

TEST(OperatorMetricsHistory, ARunWithoutAResultLeavesAGapNotTheOldNumbers) {
  OperatorMetrics metrics;
  metrics.observe_loadtest(loadtest("checkout-a", "uid-a", "checkout"),
                           finished("Pass", "2026-11-30T10:01:00Z", 500));
  metrics.observe_loadtest(loadtest("checkout-b", "uid-b", "checkout"),
                           {{"phase", "Failed"},
                            {"reason", "WorkersNotReady"},
                            {"completionTime", "2026-11-30T11:01:00Z"}});
  EXPECT_FALSE(gauge(metrics, "kubeload_test_last_rps", kCheckout));
  EXPECT_FALSE(gauge(metrics, "kubeload_test_last_latency_seconds", kCheckout));
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_verdict", with(kCheckout, "verdict", "None")), 1);
}

TEST(OperatorMetricsHistory, OutlivesTheRunsAndSkipsUnlabelledOrUnfinishedOnes) {
  OperatorMetrics metrics;
  metrics.observe_loadtest(loadtest("checkout-a", "uid-a", "checkout"),
                           finished("Pass", "2026-11-30T10:01:00Z", 500));
  metrics.forget_loadtest("shop", "checkout-a");  // deleted (ttlSecondsAfterFinished)
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_rps", kCheckout), 500);

  metrics.observe_loadtest(loadtest("adhoc", "uid-c", ""),
                           finished("Pass", "2026-11-30T12:00:00Z", 1));
  metrics.observe_loadtest(loadtest("checkout-c", "uid-d", "checkout"),
                           {{"phase", "Running"}, {"startTime", "2026-11-30T12:00:00Z"}});
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_rps", kCheckout), 500);
  EXPECT_FALSE(gauge(metrics, "kubeload_test_last_rps", {{"test", ""}}));
}

TEST(OperatorMetrics, RunDeadlineOnlyWhileTheRunIsUnderWay) {
  OperatorMetrics metrics;
  const Labels run = {{"loadtest", "checkout-c"}, {"namespace", "shop"}};
  metrics.observe_loadtest(loadtest("checkout-c", "uid-d", "checkout"),
                           {{"phase", "Running"}, {"startTime", "2026-11-30T12:00:00Z"}},
                           1796040000.0);
  EXPECT_EQ(gauge(metrics, "kubeload_loadtest_run_deadline_timestamp_seconds", run), 1796040000.0);
  metrics.observe_loadtest(loadtest("checkout-c", "uid-d", "checkout"),
                           finished("Pass", "2026-11-30T12:01:00Z", 500), 1796040000.0);
  EXPECT_FALSE(gauge(metrics, "kubeload_loadtest_run_deadline_timestamp_seconds", run));
}

}  // namespace
}  // namespace kubeload::controller
