#include "operator/operator_metrics.hpp"

#include <gtest/gtest.h>

#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <chrono>

#include <map>
#include <optional>
#include <string>

namespace kubeload::controller {
namespace {

using nlohmann::json;

// The metrics read the typed LoadTest and status; the tables below write them as the API does.
void observe(OperatorMetrics& metrics, const json& loadtest, const json& status,
             std::optional<double> run_deadline = std::nullopt) {
  metrics.observe_loadtest(loadtest.get<kubeload::api::LoadTest>(),
                           status.get<kubeload::api::LoadTestStatus>(), run_deadline);
}

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

// What a scrape of /metrics reads.
std::string exposition(const OperatorMetrics& metrics) {
  return prometheus::TextSerializer().Serialize(metrics.registry()->Collect());
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
      observe(metrics, loadtest("checkout-a", "uid-a", "checkout"),
              finished("Pass", "2026-11-30T10:01:00Z", 500));
    };
    const auto newer = [&] {
      observe(metrics, loadtest("checkout-b", "uid-b", "checkout"),
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
    EXPECT_EQ(gauge(metrics, "kubeload_test_last_requests_per_second", kCheckout), 80);
    EXPECT_EQ(gauge(metrics, "kubeload_test_last_run_end_timestamp_seconds", kCheckout),
              1796036460);  // 2026-11-30T11:01:00Z
    EXPECT_EQ(gauge(metrics, "kubeload_test_last_run_start_timestamp_seconds", kCheckout),
              1796032800);
  }
}

TEST(OperatorMetricsHistory, SeriesAreLabelledByTestNotByRun) {
  OperatorMetrics metrics;
  observe(metrics, loadtest("checkout-a", "uid-a", "checkout"),
          finished("Pass", "2026-11-30T10:01:00Z", 500));
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name.rfind("kubeload_test_", 0) != 0) continue;
    for (const auto& metric : family.metric) {
      for (const auto& label : metric.label) EXPECT_NE(label.name, "loadtest") << family.name;
    }
  }
}

// A threshold's series: its place in the spec and what it compares.
Labels threshold(const std::string& index, const std::string& metric, const std::string& op) {
  Labels labels = kCheckout;
  labels["threshold"] = index;
  labels["request"] = "";
  labels["metric"] = metric;
  labels["op"] = op;
  return labels;
}

TEST(OperatorMetricsHistory, ThresholdsInBaseUnitsAndOnlyTheNewestRunsOnes) {
  OperatorMetrics metrics;
  observe(metrics, loadtest("checkout-a", "uid-a", "checkout"),
          finished("Pass", "2026-11-30T10:01:00Z", 500));
  EXPECT_DOUBLE_EQ(
      *gauge(metrics, "kubeload_test_last_threshold_value", threshold("0", "p99", "<")), 0.0125);
  EXPECT_DOUBLE_EQ(
      *gauge(metrics, "kubeload_test_last_threshold_limit", threshold("0", "p99", "<")), 0.020);
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_threshold_value", threshold("1", "rps", ">=")), 500);
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_threshold_limit", threshold("1", "rps", ">=")), 100);
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_threshold_passed", threshold("1", "rps", ">=")), 1);

  json next = finished("Fail", "2026-11-30T11:01:00Z", 80);
  next["thresholds"].erase(0);           // the p99 threshold was dropped from the test
  next["thresholds"][0].erase("value");  // and rps was not measured
  observe(metrics, loadtest("checkout-b", "uid-b", "checkout"), next);
  for (const char* name :
       {"kubeload_test_last_threshold_passed", "kubeload_test_last_threshold_value",
        "kubeload_test_last_threshold_limit"}) {
    EXPECT_FALSE(gauge(metrics, name, threshold("0", "p99", "<"))) << name;
    EXPECT_FALSE(gauge(metrics, name, threshold("1", "rps", ">="))) << name;
  }
  EXPECT_FALSE(gauge(metrics, "kubeload_test_last_threshold_value", threshold("0", "rps", ">=")));
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_threshold_passed", threshold("0", "rps", ">=")), 0);
}

TEST(OperatorMetricsHistory, NoLabelValueIsAThresholdsText) {
  OperatorMetrics metrics;
  json status = finished("Pass", "2026-11-30T10:01:00Z", 500);
  status["thresholds"][0]["expression"] = "p99   <  20ms";
  status["thresholds"][1]["expression"] = "checkout.rps>=100";
  observe(metrics, loadtest("checkout-a", "uid-a", "checkout"), status);
  std::size_t series = 0;
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name.rfind("kubeload_test_last_threshold_", 0) != 0) continue;
    for (const auto& metric : family.metric) {
      ++series;
      for (const auto& label : metric.label) {
        // Neither the text nor its limit: "20ms" and "100" are only in the values.
        EXPECT_EQ(label.value.find_first_of(" m"), std::string::npos)
            << family.name << " " << label.name << "=" << label.value;
        EXPECT_NE(label.value, "100") << family.name << " " << label.name;
      }
    }
  }
  EXPECT_EQ(series, 6u);
  Labels by_request = threshold("1", "rps", ">=");
  by_request["request"] = "checkout";
  by_request.erase("op");
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_threshold_value", by_request), 500);
}

// A test's series outlive its LoadTests (a GitOps tool deletes a run and
// creates the next), but not for ever: an hour after its last LoadTest went,
// the test's series and history are freed.
TEST(OperatorMetricsHistory, ATestsSeriesGoAnHourAfterItsLastLoadTest) {
  auto now = std::chrono::steady_clock::time_point{};
  OperatorMetrics metrics([&] { return now; });
  const auto run = [&](const std::string& name, const std::string& uid) {
    observe(metrics, loadtest(name, uid, "checkout"),
            finished("Pass", "2026-11-30T10:01:00Z", 500));
  };
  const auto kept = [&] {
    return gauge(metrics, "kubeload_test_last_requests_per_second", kCheckout).has_value() &&
           gauge(metrics, "kubeload_test_last_threshold_passed", threshold("1", "rps", ">="));
  };
  run("checkout-a", "uid-a");
  run("checkout-b", "uid-b");
  metrics.forget_loadtest("shop", "checkout-a");
  now += std::chrono::hours(2);
  metrics.forget_loadtest("shop", "nothing");
  EXPECT_TRUE(kept()) << "checkout-b is still there";
  // Deleted and created again within the hour (Flux's force, Argo CD's hook).
  metrics.forget_loadtest("shop", "checkout-b");
  now += std::chrono::minutes(59);
  run("checkout-c", "uid-c");
  now += std::chrono::hours(2);
  metrics.forget_loadtest("shop", "nothing");
  EXPECT_TRUE(kept()) << "a new run came within the hour";
  metrics.forget_loadtest("shop", "checkout-c");
  now += std::chrono::minutes(59);
  metrics.forget_loadtest("shop", "nothing");
  EXPECT_TRUE(kept());
  now += std::chrono::minutes(2);
  metrics.forget_loadtest("shop", "nothing");
  EXPECT_FALSE(kept());
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name.rfind("kubeload_test_", 0) == 0) {
      EXPECT_TRUE(family.metric.empty()) << family.name;
    }
  }
}

TEST(OperatorMetricsHistory, ARunWithoutAResultLeavesAGapNotTheOldNumbers) {
  OperatorMetrics metrics;
  observe(metrics, loadtest("checkout-a", "uid-a", "checkout"),
          finished("Pass", "2026-11-30T10:01:00Z", 500));
  observe(metrics, loadtest("checkout-b", "uid-b", "checkout"),
          {{"phase", "Failed"},
           {"reason", "WorkersNotReady"},
           {"completionTime", "2026-11-30T11:01:00Z"}});
  EXPECT_FALSE(gauge(metrics, "kubeload_test_last_requests_per_second", kCheckout));
  EXPECT_FALSE(gauge(metrics, "kubeload_test_last_latency_seconds", kCheckout));
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_verdict", with(kCheckout, "verdict", "None")), 1);
}

TEST(OperatorMetricsHistory, OutlivesTheRunsAndSkipsUnlabelledOrUnfinishedOnes) {
  OperatorMetrics metrics;
  observe(metrics, loadtest("checkout-a", "uid-a", "checkout"),
          finished("Pass", "2026-11-30T10:01:00Z", 500));
  metrics.forget_loadtest("shop", "checkout-a");  // deleted (ttlSecondsAfterFinished)
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_requests_per_second", kCheckout), 500);

  observe(metrics, loadtest("adhoc", "uid-c", ""), finished("Pass", "2026-11-30T12:00:00Z", 1));
  observe(metrics, loadtest("checkout-c", "uid-d", "checkout"),
          {{"phase", "Running"}, {"startTime", "2026-11-30T12:00:00Z"}});
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_requests_per_second", kCheckout), 500);
  EXPECT_FALSE(gauge(metrics, "kubeload_test_last_requests_per_second", {{"test", ""}}));
}

TEST(OperatorMetrics, RunDeadlineOnlyWhileTheRunIsUnderWay) {
  OperatorMetrics metrics;
  const Labels run = {{"loadtest", "checkout-c"}, {"namespace", "shop"}};
  observe(metrics, loadtest("checkout-c", "uid-d", "checkout"),
          {{"phase", "Running"}, {"startTime", "2026-11-30T12:00:00Z"}}, 1796040000.0);
  EXPECT_EQ(gauge(metrics, "kubeload_loadtest_run_deadline_timestamp_seconds", run), 1796040000.0);
  observe(metrics, loadtest("checkout-c", "uid-d", "checkout"),
          finished("Pass", "2026-11-30T12:01:00Z", 500), 1796040000.0);
  EXPECT_FALSE(gauge(metrics, "kubeload_loadtest_run_deadline_timestamp_seconds", run));
}

TEST(OperatorMetrics, ADeletedLoadTestLeavesNoSeriesOfItsRun) {
  OperatorMetrics metrics;
  observe(metrics, loadtest("checkout-a", "uid-a", "checkout"),
          {{"phase", "Running"}, {"startTime", "2026-11-30T12:00:00Z"}}, 1796040000.0);
  observe(metrics, loadtest("checkout-a", "uid-a", "checkout"),
          finished("Pass", "2026-11-30T12:01:00Z", 500));
  observe(metrics, loadtest("checkout-b", "uid-b", "checkout"),
          {{"phase", "Running"}, {"startTime", "2026-11-30T12:02:00Z"}}, 1796040100.0);
  ASSERT_NE(exposition(metrics).find("loadtest=\"checkout-a\""), std::string::npos);

  metrics.forget_loadtest("shop", "checkout-a");  // its watch event said DELETED
  const std::string text = exposition(metrics);
  EXPECT_EQ(text.find("loadtest=\"checkout-a\""), std::string::npos) << text;
  EXPECT_NE(text.find("loadtest=\"checkout-b\""), std::string::npos) << text;
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_requests_per_second", kCheckout), 500);
}

TEST(OperatorMetrics, ARelabelledLoadTestLeavesNoSeriesUnderItsOldTest) {
  OperatorMetrics metrics;
  observe(metrics, loadtest("checkout-a", "uid-a", "checkout"),
          {{"phase", "Running"}, {"startTime", "2026-11-30T12:00:00Z"}}, 1796040000.0);
  observe(metrics, loadtest("checkout-a", "uid-a", "payments"),
          finished("Pass", "2026-11-30T12:01:00Z", 500));
  const Labels old_run = {{"loadtest", "checkout-a"}, {"test", "checkout"}};
  EXPECT_FALSE(gauge(metrics, "kubeload_loadtest_phase", old_run));
  EXPECT_FALSE(gauge(metrics, "kubeload_loadtest_run_deadline_timestamp_seconds", old_run));
  EXPECT_EQ(gauge(metrics, "kubeload_loadtest_phase",
                  {{"loadtest", "checkout-a"}, {"test", "payments"}, {"phase", "Succeeded"}}),
            1);
  metrics.forget_loadtest("shop", "checkout-a");
  EXPECT_EQ(exposition(metrics).find("loadtest=\"checkout-a\""), std::string::npos);
}

TEST(OperatorMetrics, TheLastFailureOfATestIsItsNewestFailedRunsEndAndOutlivesIt) {
  OperatorMetrics metrics;
  const auto failed = [](const std::string& ended) {
    return json{{"phase", "Failed"},
                {"reason", "WorkerFailed"},
                {"startTime", "2026-11-30T10:00:00Z"},
                {"completionTime", ended}};
  };
  const Labels checkout = {{"namespace", "shop"}, {"test", "checkout"}};
  observe(metrics, loadtest("checkout-a", "uid-a", "checkout"),
          finished("Pass", "2026-11-30T09:00:00Z", 500));
  EXPECT_FALSE(gauge(metrics, "kubeload_test_last_failure_timestamp_seconds", checkout));
  // Seen in any order (a relist after a restart): the newest failure stays.
  observe(metrics, loadtest("checkout-c", "uid-c", "checkout"), failed("2026-11-30T11:01:00Z"));
  observe(metrics, loadtest("checkout-b", "uid-b", "checkout"), failed("2026-11-30T10:01:00Z"));
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_failure_timestamp_seconds", checkout),
            1796036460);                          // 2026-11-30T11:01:00Z
  metrics.forget_loadtest("shop", "checkout-c");  // deleted (ttlSecondsAfterFinished)
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_failure_timestamp_seconds", checkout), 1796036460);
  // A LoadTest without the kubeload.dev/test label counts under test="".
  observe(metrics, loadtest("adhoc", "uid-d", ""), failed("2026-11-30T12:00:00Z"));
  EXPECT_EQ(gauge(metrics, "kubeload_test_last_failure_timestamp_seconds",
                  {{"namespace", "shop"}, {"test", ""}}),
            1796040000);
}

}  // namespace
}  // namespace kubeload::controller
