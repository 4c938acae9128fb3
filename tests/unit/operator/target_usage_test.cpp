#include "operator/target_usage.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/json_access.hpp"
#include "operator/status.hpp"

namespace kubeload::controller {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// The rows write statuses as the API stores them; the plan reads them typed.
kubeload::controller::TargetUsageStep plan_target_usage(
    const json& current, json& status, const kubeload::ParsedLoadTest& parsed,
    const kubeload::controller::OperatorConfig& config,
    const std::optional<kubeload::controller::TargetMeasurement>& measured,
    kubeload::controller::Timestamp now) {
  auto typed = status.get<kubeload::api::LoadTestStatus>();
  const auto step = kubeload::controller::plan_target_usage(
      current.get<kubeload::api::LoadTestStatus>(), typed, parsed, config, measured, now);
  status = typed;
  return step;
}

Timestamp at(const std::string& text) {
  return *parse_time(text);
}

ParsedLoadTest parsed(const std::string& target, const std::string& load = "{duration: 30s}") {
  return parse_loadtest(
      "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\n"
      "metadata: {name: t, namespace: shop}\nspec:\n  target: " +
      target + "\n  load: " + load + "\n");
}

const std::string kService = "{service: {name: nginx}}";

// A finished run's status as compute_status writes it.
json finished(const std::string& phase = "Succeeded") {
  return {{"observedGeneration", 1},
          {"phase", phase},
          {"startTime", "2026-11-30T10:00:00Z"},
          {"completionTime", "2026-11-30T10:00:32Z"},
          {"result", {{"durationSeconds", 30.0}, {"requests", 1000}}},
          {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}};
}

OperatorConfig with_prometheus() {
  OperatorConfig config;
  config.prometheus_url = "http://127.0.0.1:9090";
  config.prometheus_scrape_interval = 5s;
  return config;
}

const json* target_condition(const json& status) {
  return json_access::find_condition(status["conditions"], kTargetMetricsCondition);
}

// ---- windows ------------------------------------------------------------------------

TEST(TargetUsageWindows, RunAfterTheWarmupAndStagesBackToBack) {
  json status = finished();
  status["result"]["durationSeconds"] = 30.0;
  status["stages"] = json::array({{{"index", 0}, {"plannedDurationSeconds", 10.0}},
                                  {{"index", 1}, {"plannedDurationSeconds", 20.0}}});
  const auto windows =
      run_windows(status, parsed(kService,
                                 "{warmup: 5s, stages: [{duration: 10s, connections: 1}, "
                                 "{duration: 20s, connections: 2}]}")
                              .spec);
  ASSERT_TRUE(windows);
  EXPECT_EQ(windows->run, (UsageWindow{at("2026-11-30T10:00:05Z"), at("2026-11-30T10:00:35Z")}));
  ASSERT_EQ(windows->stages.size(), 2u);
  EXPECT_EQ(windows->stages[0],
            (UsageWindow{at("2026-11-30T10:00:05Z"), at("2026-11-30T10:00:15Z")}));
  EXPECT_EQ(windows->stages[1],
            (UsageWindow{at("2026-11-30T10:00:15Z"), at("2026-11-30T10:00:35Z")}));
  EXPECT_FALSE(windows->includes_warmup);
}

TEST(TargetUsageWindows, AWarmupByRequestsIsInsideTheWindowAndSaysSo) {
  const auto windows =
      run_windows(finished(), parsed(kService, "{duration: 30s, warmupRequests: 100}").spec);
  ASSERT_TRUE(windows);
  EXPECT_TRUE(windows->includes_warmup);
  EXPECT_EQ(windows->run, (UsageWindow{at("2026-11-30T10:00:00Z"), at("2026-11-30T10:00:32Z")}));
}

TEST(TargetUsageWindows, NoneWhenNothingWasMeasured) {
  json no_start = finished("Failed");
  no_start.erase("startTime");
  EXPECT_FALSE(run_windows(no_start, parsed(kService).spec));
  json no_result = finished("Failed");
  no_result.erase("result");
  EXPECT_FALSE(run_windows(no_result, parsed(kService).spec));
  json zero = finished();
  zero["result"]["durationSeconds"] = 0;
  EXPECT_FALSE(run_windows(zero, parsed(kService).spec));
}

// ---- PromQL ---------------------------------------------------------------------------

TEST(TargetUsageQueries, SelectsThePodsRealContainersByEscapedName) {
  EXPECT_EQ(container_matcher("shop", {"nginx-7d9f.a", "web-0"}),
            R"(namespace="shop",pod=~"nginx-7d9f\\.a|web-0",container!="",container!="POD")");
}

TEST(TargetUsageQueries, WindowsAndRatesStayInsideTheWindow) {
  const UsageWindow window{at("2026-11-30T10:00:05Z"), at("2026-11-30T10:00:35Z")};
  const UsageQueries q = usage_queries("M", window, 5s);
  EXPECT_EQ(q.at, window.end);
  EXPECT_EQ(q.cpu_mean, "sum(rate(container_cpu_usage_seconds_total{M}[30000ms]))");
  // Rates over 4 scrape intervals (20 s), at steps whose range starts at or
  // after the window's start: 30 s - 20 s of steps.
  EXPECT_EQ(q.cpu_max,
            "max_over_time(sum(rate(container_cpu_usage_seconds_total{M}[20000ms]))"
            "[10000ms:5000ms])");
  EXPECT_EQ(q.memory_max, "max_over_time(sum(container_memory_rss{M})[30000ms:5000ms])");
  EXPECT_EQ(q.restarts,
            "count(max_over_time(container_start_time_seconds{M}[30000ms]) > 1796032805.000)");
}

TEST(TargetUsageQueries, NoMaximumForAWindowShorterThanARateWindowAndAStep) {
  const UsageWindow window{at("2026-11-30T10:00:05Z"), at("2026-11-30T10:00:29Z")};
  EXPECT_TRUE(usage_queries("M", window, 5s).cpu_max.empty());
  EXPECT_FALSE(usage_queries("M", window, 5s).cpu_mean.empty());
}

// ---- the decision ---------------------------------------------------------------------

struct DecisionCase {
  std::string name;
  std::string target;
  OperatorConfig config;
  json status;
  std::string now;
  std::string want_status;  // of the TargetMetrics condition
  std::string want_reason;
  bool want_measure = false;
};

TEST(TargetUsagePlan, SaysWhyThereIsNoTargetUsageOrWhenToReadIt) {
  OperatorConfig without;
  json running = finished();
  running["phase"] = "Running";
  const std::vector<DecisionCase> cases = {
      {"not configured", kService, without, finished(), "2026-11-30T10:05:00Z", "False",
       "PrometheusNotConfigured"},
      {"nothing measured", kService, with_prometheus(),
       [] {
         json s = finished("Failed");
         s.erase("startTime");
         return s;
       }(),
       "2026-11-30T10:05:00Z", "False", "NothingMeasured"},
      {"url target without podSelector", "{url: 'http://10.0.0.1/'}", with_prometheus(), finished(),
       "2026-11-30T10:05:00Z", "False", "NoPodSelector"},
      {"service in another namespace", "{service: {name: nginx, namespace: other}}",
       with_prometheus(), finished(), "2026-11-30T10:05:00Z", "False", "TargetInOtherNamespace"},
      {"window shorter than two scrapes", kService,
       [] {
         OperatorConfig config = with_prometheus();
         config.prometheus_scrape_interval = 20s;
         return config;
       }(),
       [] {
         json s = finished();
         s["result"]["durationSeconds"] = 39.5;
         return s;
       }(),
       "2026-11-30T10:05:00Z", "False", "WindowTooShort"},
      // The window ends at 10:00:30; three 5 s scrapes are less than 15 s.
      {"waits for the last scrapes", kService, with_prometheus(), finished(),
       "2026-11-30T10:00:44Z", "Unknown", "WaitingForScrapes"},
      {"measures once they are in", kService, with_prometheus(), finished(), "2026-11-30T10:00:45Z",
       "", "", true},
      {"url target with podSelector",
       "{url: 'http://10.0.0.1/', podSelector: {matchLabels: {app: x}}}", with_prometheus(),
       finished(), "2026-11-30T10:00:45Z", "", "", true},
  };
  for (const DecisionCase& c : cases) {
    json status = c.status;
    const TargetUsageStep step = plan_target_usage(json::object(), status, parsed(c.target),
                                                   c.config, std::nullopt, at(c.now));
    EXPECT_EQ(step.measure.has_value(), c.want_measure) << c.name;
    EXPECT_FALSE(status.contains("target")) << c.name;
    const json* condition = target_condition(status);
    if (c.want_status.empty()) {
      EXPECT_EQ(condition, nullptr) << c.name;
      continue;
    }
    ASSERT_NE(condition, nullptr) << c.name;
    EXPECT_EQ((*condition)["status"], c.want_status) << c.name;
    EXPECT_EQ((*condition)["reason"], c.want_reason) << c.name;
    EXPECT_EQ((*condition)["observedGeneration"], 1) << c.name;
  }
  // A run that is not over is left alone.
  json status = running;
  const TargetUsageStep step =
      plan_target_usage(json::object(), status, parsed(kService), with_prometheus(), std::nullopt,
                        at("2026-11-30T11:00:00Z"));
  EXPECT_FALSE(step.measure);
  EXPECT_EQ(target_condition(status), nullptr);
}

TEST(TargetUsagePlan, AskingRequestsTheServiceOrTheSelectorAndTheWindows) {
  json status = finished();
  const TargetUsageStep by_service =
      plan_target_usage(json::object(), status, parsed(kService), with_prometheus(), std::nullopt,
                        at("2026-11-30T10:01:00Z"));
  ASSERT_TRUE(by_service.measure);
  EXPECT_EQ(by_service.measure->namespace_, "shop");
  EXPECT_EQ(by_service.measure->service, "nginx");
  EXPECT_EQ(by_service.measure->selector, "");
  EXPECT_EQ(by_service.measure->windows.run.end, at("2026-11-30T10:00:30Z"));

  const TargetUsageStep by_selector =
      plan_target_usage(json::object(), status,
                        parsed("{service: {name: nginx}, podSelector: {matchLabels: {app: web}}}"),
                        with_prometheus(), std::nullopt, at("2026-11-30T10:01:00Z"));
  ASSERT_TRUE(by_selector.measure);
  EXPECT_EQ(by_selector.measure->selector, "app=web");
}

TargetMeasurement measurement() {
  TargetMeasurement m;
  m.namespace_ = "shop";
  m.selector = "app=nginx";
  m.pods = {"nginx-1", "nginx-2"};
  m.run = Usage{0.41234, 0.6, 12.0 * 1024 * 1024, 0};
  return m;
}

TEST(TargetUsagePlan, WritesTheMeasurementAndKeepsItAfterwards) {
  json status = finished();
  const TargetUsageStep step =
      plan_target_usage(json::object(), status, parsed(kService), with_prometheus(), measurement(),
                        at("2026-11-30T10:01:00Z"));
  EXPECT_FALSE(step.measure);
  const json want = {
      {"namespace", "shop"},
      {"selector", "app=nginx"},
      {"pods", 2},
      {"window", {{"start", "2026-11-30T10:00:00Z"}, {"end", "2026-11-30T10:00:30Z"}}},
      {"cpuCores", {{"mean", 0.4123}, {"max", 0.6}}},
      {"memoryBytes", {{"max", 12582912}}},
      {"restarts", 0}};
  EXPECT_EQ(status["target"], want);
  const json* condition = target_condition(status);
  ASSERT_NE(condition, nullptr);
  EXPECT_EQ((*condition)["status"], "True");
  EXPECT_EQ((*condition)["reason"], "Measured");
  EXPECT_EQ((*condition)["message"],
            "2 pods (app=nginx) over 30.0s: CPU 0.412 cores mean, 0.600 max, RSS 12.0 MiB max, 0 "
            "restarts");

  // Later passes rebuild the status from scratch: the measurement is kept,
  // never asked for again.
  json next = finished();
  const TargetUsageStep later = plan_target_usage(status, next, parsed(kService), with_prometheus(),
                                                  std::nullopt, at("2026-11-30T12:00:00Z"));
  EXPECT_FALSE(later.measure);
  EXPECT_EQ(next["target"], want);
  EXPECT_EQ((*target_condition(next))["lastTransitionTime"], "2026-11-30T10:01:00Z");
}

TEST(TargetUsagePlan, PerStageRowsWithTheirWindows) {
  json status = finished();
  status["stages"] = json::array({{{"index", 0}, {"plannedDurationSeconds", 10.0}},
                                  {{"index", 1}, {"plannedDurationSeconds", 20.0}}});
  TargetMeasurement m = measurement();
  m.stages = {Usage{0.1, std::nullopt, 1.0e6, 0}, Usage{0.5, 0.7, 2.0e6, 1}};
  plan_target_usage(json::object(), status,
                    parsed(kService,
                           "{stages: [{duration: 10s, connections: 1}, "
                           "{duration: 20s, connections: 2}]}"),
                    with_prometheus(), m, at("2026-11-30T10:01:00Z"));
  const json& stages = status["target"]["stages"];
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0],
            (json{{"index", 0},
                  {"window", {{"start", "2026-11-30T10:00:00Z"}, {"end", "2026-11-30T10:00:10Z"}}},
                  {"cpuCores", {{"mean", 0.1}}},
                  {"memoryBytes", {{"max", 1000000}}},
                  {"restarts", 0}}));
  EXPECT_EQ(stages[1]["cpuCores"], (json{{"mean", 0.5}, {"max", 0.7}}));
  EXPECT_EQ(stages[1]["restarts"], 1);
}

TEST(TargetUsagePlan, AsksAgainWhilePrometheusIsDownThenGivesUp) {
  TargetMeasurement down;
  down.reason = "PrometheusUnavailable";
  down.message = "http://127.0.0.1:9090/api/v1/query: Connection refused";
  down.transient = true;

  json status = finished();
  const TargetUsageStep retry =
      plan_target_usage(json::object(), status, parsed(kService), with_prometheus(), down,
                        at("2026-11-30T10:01:00Z"));
  ASSERT_TRUE(retry.requeue_after);
  EXPECT_EQ(*retry.requeue_after, std::chrono::milliseconds(kTargetMetricsRetry));
  EXPECT_EQ((*target_condition(status))["status"], "Unknown");
  EXPECT_EQ((*target_condition(status))["reason"], "PrometheusUnavailable");

  // The retry measures again (the condition is not final yet).
  json again = finished();
  EXPECT_TRUE(plan_target_usage(status, again, parsed(kService), with_prometheus(), std::nullopt,
                                at("2026-11-30T10:01:30Z"))
                  .measure);

  json late = finished();
  const TargetUsageStep gave_up = plan_target_usage(
      status, late, parsed(kService), with_prometheus(), down, at("2026-11-30T10:10:31Z"));
  EXPECT_FALSE(gave_up.requeue_after);
  EXPECT_EQ((*target_condition(late))["status"], "False");
  EXPECT_FALSE(late.contains("target"));

  TargetMeasurement refused = down;
  refused.reason = "NoSamples";
  refused.transient = false;
  json final_status = finished();
  plan_target_usage(json::object(), final_status, parsed(kService), with_prometheus(), refused,
                    at("2026-11-30T10:01:00Z"));
  EXPECT_EQ((*target_condition(final_status))["status"], "False");
  EXPECT_EQ((*target_condition(final_status))["reason"], "NoSamples");
}

}  // namespace
}  // namespace kubeload::controller

namespace kubeload::controller {
namespace {

// The measurement's steps and reasons, from what the controller read.
TEST(JudgeTarget, Table) {
  TargetRequest by_service;
  by_service.namespace_ = "shop";
  by_service.service = "checkout";
  by_service.windows.run = {Timestamp(std::chrono::seconds(1796032800)),
                            Timestamp(std::chrono::seconds(1796032830))};
  TargetRequest by_selector = by_service;
  by_selector.service.clear();
  by_selector.selector = "app=checkout";

  Usage sampled;
  sampled.cpu_mean = 0.5;
  struct Row {
    std::string what;
    const TargetRequest* request;
    std::function<TargetFindings()> found;
    std::optional<TargetRead> read;
    std::string reason;
    std::string message_contains;
  };
  const auto service = [](int status, std::map<std::string, std::string> selector) {
    TargetFindings f;
    f.service_status = status;
    f.service_error = "HTTP " + std::to_string(status);
    f.service_selector = std::move(selector);
    return f;
  };
  const std::map<std::string, std::string> app = {{"app", "checkout"}};
  const auto pods = [=](int status, std::vector<std::string> names) {
    TargetFindings f = service(200, app);
    f.pods_status = status;
    f.pods_error = "HTTP " + std::to_string(status);
    f.pods = std::move(names);
    return f;
  };
  const std::vector<Row> rows = {
      {"a Service target reads the Service first", &by_service, [] { return TargetFindings{}; },
       TargetRead::Service, "", ""},
      {"a podSelector target lists the pods first", &by_selector, [] { return TargetFindings{}; },
       TargetRead::Pods, "", ""},
      {"the Service is gone", &by_service, [=] { return service(404, {}); }, std::nullopt,
       "TargetNotFound", "shop/checkout does not exist"},
      {"the Service may not be read", &by_service, [=] { return service(403, {}); }, std::nullopt,
       "Forbidden", "may not read Services in namespace shop"},
      {"the Service selects by no label", &by_service, [=] { return service(200, {}); },
       std::nullopt, "NoPodSelector", "selects no pods by label"},
      {"then the pods of its selector", &by_service, [=] { return service(200, app); },
       TargetRead::Pods, "", ""},
      {"the pods may not be listed", &by_service, [=] { return pods(403, {}); }, std::nullopt,
       "Forbidden", "may not list pods"},
      {"no pod matches", &by_service, [=] { return pods(200, {}); }, std::nullopt, "NoTargetPods",
       "no pods in namespace shop match app=checkout"},
      {"then Prometheus", &by_service, [=] { return pods(200, {"checkout-1"}); }, TargetRead::Usage,
       "", ""},
      {"Prometheus does not answer", &by_service,
       [=] {
         TargetFindings f = pods(200, {"checkout-1"});
         f.usage_read = true;
         f.prometheus_error = "connection refused";
         f.prometheus_transient = true;
         return f;
       },
       std::nullopt, "PrometheusUnavailable", "connection refused"},
      {"Prometheus refuses the query", &by_service,
       [=] {
         TargetFindings f = pods(200, {"checkout-1"});
         f.usage_read = true;
         f.prometheus_error = "bad_data";
         return f;
       },
       std::nullopt, "PrometheusQueryFailed", "bad_data"},
      {"no samples in the window", &by_service,
       [=] {
         TargetFindings f = pods(200, {"checkout-1"});
         f.usage_read = true;
         return f;
       },
       std::nullopt, "NoSamples", "1 pod(s) in shop (app=checkout)"},
      // The series are there (RSS read) but the window held one CPU sample.
      {"one CPU sample in the window", &by_service,
       [=] {
         TargetFindings f = pods(200, {"checkout-1"});
         f.usage_read = true;
         f.run.memory_max_bytes = 2.0e6;
         return f;
       },
       std::nullopt, "TooFewSamples",
       "samples of 1 pod(s) in shop (app=checkout) in the run's 30.0s window"},
      {"measured", &by_service,
       [=] {
         TargetFindings f = pods(200, {"checkout-2", "checkout-1"});
         f.usage_read = true;
         f.run = sampled;
         return f;
       },
       std::nullopt, "", ""},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    const TargetStep step = judge_target(*row.request, row.found(), "http://prometheus:9090");
    EXPECT_EQ(step.read, row.read);
    if (row.read) continue;
    EXPECT_EQ(step.measurement.reason, row.reason);
    EXPECT_NE(step.measurement.message.find(row.message_contains), std::string::npos)
        << step.measurement.message;
    EXPECT_EQ(step.measurement.transient, row.reason == "PrometheusUnavailable");
  }
  TargetFindings measured = pods(200, {"checkout-2", "checkout-1"});
  measured.usage_read = true;
  measured.run = sampled;
  const TargetMeasurement m = judge_target(by_service, measured, "").measurement;
  EXPECT_EQ(m.pods, (std::vector<std::string>{"checkout-1", "checkout-2"}));
  EXPECT_EQ(m.selector, "app=checkout");
  EXPECT_EQ(m.run, sampled);
}

}  // namespace
}  // namespace kubeload::controller
