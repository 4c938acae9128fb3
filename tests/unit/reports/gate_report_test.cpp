// Gate reports (JUnit, Markdown, HTML) built from LoadTest objects as the
// operator writes them, and from local runs: goldens for JUnit and Markdown,
// and the facts that must hold whatever the layout (no false green).
//
// Regenerate the goldens after an intended layout change with
//   KUBELOAD_UPDATE_GOLDEN=1 ./unit_tests --gtest_filter='GateReportGolden*'
// and review the diff. tests/reports/check_reports.py validates the JUnit
// goldens against tests/reports/junit.xsd and renders the Markdown goldens
// with cmark-gfm.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/result.hpp"
#include "kubeload/threshold.hpp"
#include "reports/gate_report.hpp"
#include "reports/recorded_run.hpp"
#include "reports/trend.hpp"

#ifndef KUBELOAD_SOURCE_DIR
#error "gate_report_test needs KUBELOAD_SOURCE_DIR (the repository root) to find tests/golden"
#endif

namespace kubeload::loadgen {
namespace {

using nlohmann::json;

// A result of `count` responses with latencies spread over [first, first + spread) us.
Result spread_result(uint64_t count, int64_t first_us, int64_t spread_us, uint64_t errors,
                     double seconds) {
  Result r;
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t total =
        first_us + spread_us * static_cast<int64_t>(i * i) / static_cast<int64_t>(count * count);
    r.latency.record(total);
    r.connect.record(0);
    r.waiting.record(total * 3 / 4);
  }
  r.status_codes[200] = count - errors;
  if (errors > 0) {
    r.status_codes[503] = errors;
    r.errors.status = errors;
  }
  r.requests = count;
  r.bytes_received = count * 300;
  r.body_bytes_received = count * 100;
  r.bytes_sent = count * 80;
  r.duration_seconds = seconds;
  return r;
}

json base_loadtest(const std::string& name) {
  return json::parse(R"({
    "apiVersion": "kubeload.dev/v1alpha1", "kind": "LoadTest",
    "metadata": {"name": ")" +
                     name + R"(", "namespace": "shop", "generation": 1,
                 "creationTimestamp": "2026-11-30T10:00:00Z",
                 "labels": {"kubeload.dev/test": "checkout"}},
    "spec": {
      "target": {"url": "http://checkout.shop.svc:8080/cart"},
      "load": {"stages": [{"duration": "30s", "connections": 10}, {"duration": "30s", "connections": 20}]},
      "workers": 2,
      "thresholds": ["p99 < 20ms", "errorRate < 1%", "rps >= 100"],
      "baseline": {"lastPassed": true, "maxRegression": {"p99": "10%", "rps": "5%"}}
    }})");
}

// A finished status with the operator's fields, from a real Result.
json with_result(json loadtest, const Result& total, const std::vector<Result>& stages) {
  json& status = loadtest["status"];
  status["observedGeneration"] = 1;
  status["phase"] = "Succeeded";
  status["startTime"] = "2026-11-30T10:00:05Z";
  status["completionTime"] = "2026-11-30T10:01:07Z";
  status["progress"] = "100%";
  status["workers"] = {{"desired", 2}, {"ready", 2}, {"succeeded", 2}, {"failed", 0}};
  json result;
  to_json(result, total, true);
  status["result"] = result;
  status["stages"] = json::array();
  for (size_t i = 0; i < stages.size(); ++i) {
    json row = {{"index", i}, {"plannedDurationSeconds", 30.0}, {"connections", 10 * (i + 1)}};
    to_json(row, stages[i], false);
    status["stages"].push_back(row);
  }
  return loadtest;
}

json thresholds_of(const std::vector<std::string>& expressions, const Result& total) {
  RunResult run;
  run.result = total;
  json out = json::array();
  for (const std::string& expression : expressions) {
    const auto parsed = parse_threshold(expression);
    const ThresholdOutcome outcome = evaluate(std::get<Threshold>(parsed), run);
    out.push_back({{"expression", outcome.expression},
                   {"observed", outcome.observed},
                   {"passed", outcome.passed}});
  }
  return out;
}

json baseline_check(const std::string& metric, const std::string& delta, double max_percent,
                    bool passed) {
  return {{"metric", metric},
          {"delta", delta},
          {"maxRegressionPercent", max_percent},
          {"passed", passed}};
}

json passed_loadtest() {
  const Result stage0 = spread_result(3000, 2000, 8000, 0, 30);
  const Result stage1 = spread_result(3000, 3000, 12000, 0, 30);
  Result total = stage0;
  total.merge(stage1);
  total.duration_seconds = 60;
  json loadtest = with_result(base_loadtest("checkout-7xk2p"), total, {stage0, stage1});
  json& status = loadtest["status"];
  status["thresholds"] = thresholds_of({"p99 < 20ms", "errorRate < 1%", "rps >= 100"}, total);
  status["baseline"] = {
      {"loadTestName", "checkout-4abcd"},
      {"deltas", {{"p99", "+3.2%"}, {"rps", "-0.4%"}}},
      {"checks",
       {baseline_check("p99", "+3.2%", 10, true), baseline_check("rps", "-0.4%", 5, true)}},
      {"passed", true}};
  status["verdict"] = "Pass";
  status["reason"] = "ThresholdsPassed";
  status["message"] = "all 3 thresholds met and within the baseline";
  return loadtest;
}

json gate_failed_loadtest() {
  const Result stage0 = spread_result(3000, 2000, 8000, 40, 30);
  const Result stage1 = spread_result(3000, 5000, 40000, 120, 30);
  Result total = stage0;
  total.merge(stage1);
  total.duration_seconds = 60;
  json loadtest = with_result(base_loadtest("checkout-9qz8w"), total, {stage0, stage1});
  json& status = loadtest["status"];
  status["thresholds"] = thresholds_of({"p99 < 20ms", "errorRate < 1%", "rps >= 100"}, total);
  status["baseline"] = {
      {"loadTestName", "checkout-7xk2p"},
      {"deltas", {{"p99", "+180.4%"}, {"rps", "+0.0%"}}},
      {"checks",
       {baseline_check("p99", "+180.4%", 10, false), baseline_check("rps", "+0.0%", 5, true)}},
      {"passed", false}};
  status["verdict"] = "Fail";
  status["reason"] = "ThresholdsFailed";
  status["message"] =
      "2 of 3 thresholds missed: p99 < 20ms (observed 44.5ms); errorRate < 1% (observed "
      "2.67%); baseline p99 +180.4% (max 10.0%)";
  return loadtest;
}

json run_failed_loadtest() {
  json loadtest = base_loadtest("checkout-bad01");
  loadtest["status"] = {{"observedGeneration", 1},
                        {"phase", "Failed"},
                        {"verdict", "None"},
                        {"reason", "WorkersNotReady"},
                        {"message", "worker 1: ImagePullBackOff <after 5m>"},
                        {"startTime", nullptr},
                        {"completionTime", "2026-11-30T10:05:00Z"},
                        {"progress", "0%"}};
  loadtest["status"].erase("startTime");
  return loadtest;
}

json running_loadtest() {
  json loadtest = base_loadtest("checkout-run42");
  const Result partial = spread_result(500, 2000, 4000, 0, 5);
  json result;
  to_json(result, partial, true);
  loadtest["status"] = {{"observedGeneration", 1}, {"phase", "Running"},   {"verdict", "None"},
                        {"reason", "Running"},     {"message", "running"}, {"progress", "8%"},
                        {"result", result}};
  return loadtest;
}

// Passed while two other runs loaded the same nginx (issue 29).
json shared_loadtest() {
  json loadtest = passed_loadtest();
  loadtest["status"]["target"] = {{"addresses", {"10.244.0.5", "10.96.0.10", "nginx.shop.svc"}},
                                  {"sharedWith",
                                   {{{"namespace", "shop"}, {"name", "checkout-b"}},
                                    {{"namespace", "team-b"}, {"name", "search-1"}}}}};
  return loadtest;
}

// Passed with worker 0 at its 100m CPU limit (issue 30), the condition as
// the operator writes it.
const char* const kSaturatedMessage =
    "worker 0 used 97% of its 100m CPU limit: the numbers describe the generator, not the "
    "target; add workers (spec.workers) or raise the workers' CPU limit "
    "(spec.workerTemplate.resources.limits.cpu)";
json saturated_loadtest() {
  json loadtest = passed_loadtest();
  loadtest["status"]["workers"]["cpu"] = {{"measured", 1},
                                          {"seconds", 2.91},
                                          {"busiestWorker", 0},
                                          {"maxUtilization", 0.97},
                                          {"limitCores", 0.1}};
  loadtest["status"]["conditions"].push_back({{"type", "GeneratorSaturated"},
                                              {"status", "True"},
                                              {"reason", "GeneratorSaturated"},
                                              {"message", kSaturatedMessage},
                                              {"observedGeneration", 1},
                                              {"lastTransitionTime", "2026-11-29T19:00:31Z"}});
  return loadtest;
}

json fixture(const std::string& file) {
  std::ifstream in(std::string(KUBELOAD_SOURCE_DIR) + "/tests/gitops/testdata/operator/" + file);
  EXPECT_TRUE(in) << file;
  return json::parse(in);
}

// An experiment whose comparison failed, as the operator wrote it (the
// gitops fixture), with what a cluster with Prometheus adds: the targets'
// usage and cpuPerRequest, a comparison of each outcome, and a threshold on
// each variant.
json experiment_loadtest() {
  json loadtest = fixture("experiment-comparison-failed.json");
  // Created by generateName, as CI creates a run: the test's name is its label.
  loadtest["metadata"]["name"] = "nginx-ab-x7k2p";
  loadtest["metadata"]["labels"]["kubeload.dev/test"] = "nginx-ab";
  loadtest["spec"]["thresholds"] = {"errorRate < 1%"};
  loadtest["spec"]["experiment"]["comparisons"] = {"b.p99 <= a.p99 * 1.05", "b.rps >= a.rps * 0.95",
                                                   "b.cpuPerRequest <= a.cpuPerRequest"};
  json& experiment = loadtest["status"]["experiment"];
  json& a = experiment["variants"][0];
  json& b = experiment["variants"][1];
  a["usage"] = {{"cpuCores", {{"mean", 0.412}, {"max", 0.5}}},
                {"memoryBytes", {{"max", 52428800}}}};
  b["usage"] = {{"cpuCores", {{"mean", 0.655}, {"max", 0.8}}},
                {"memoryBytes", {{"max", 73400320}}}};
  a["metrics"]["cpuPerRequest"] = 0.00103;
  b["metrics"]["cpuPerRequest"] = 0.00164;
  experiment["differences"].push_back({{"variant", "b"},
                                       {"reference", "a"},
                                       {"metric", "cpuPerRequest"},
                                       {"mean", 0.00061},
                                       {"low", 0.00052},
                                       {"high", 0.0007},
                                       {"relativePercent", 59.2}});
  experiment["comparisons"].push_back(
      {{"expression", "b.rps >= a.rps * 0.95"},
       {"outcome", "Pass"},
       {"mean", 20.0},
       {"low", 18.1},
       {"high", 21.9},
       {"message", "b.rps - a.rps*0.95 is 20 [18.1, 21.9] (95%, 4 rounds): holds"}});
  experiment["comparisons"].push_back(
      {{"expression", "b.cpuPerRequest <= a.cpuPerRequest"},
       {"outcome", "Inconclusive"},
       {"mean", 0.0001},
       {"low", -0.00005},
       {"high", 0.00025},
       {"roundsNeeded", 9},
       {"message",
        "b.cpuPerRequest - a.cpuPerRequest is 0.1 ms [-0.05, 0.25] (95%, 4 rounds): "
        "inconclusive, the interval includes 0"}});
  loadtest["status"]["thresholds"] = {
      {{"expression", "a: errorRate < 1%"}, {"observed", "0.00%"}, {"passed", true}},
      {{"expression", "b: errorRate < 1%"}, {"observed", "0.00%"}, {"passed", true}}};
  return loadtest;
}

// A capacity search that found the knee, as the operator wrote it (the
// gitops fixture), with the target's CPU on each step as a cluster with
// Prometheus adds it.
json search_loadtest() {
  json loadtest = fixture("search-capacity-found.json");
  loadtest["metadata"]["name"] = "nginx-capacity-q8w2n";
  loadtest["metadata"]["labels"]["kubeload.dev/test"] = "nginx-capacity";
  double cores = 0.05;
  for (json& step : loadtest["status"]["search"]["steps"]) {
    step["cpuCores"] = cores;
    cores *= 1.7;
  }
  return loadtest;
}

// A scenario run's status (docs/scenarios.md#results): its steps as request
// rows, its scenarios' rows as numbers only, thresholds on both.
json scenarios_loadtest() {
  RunResult run;
  const Result login = spread_result(1200, 3000, 4000, 0, 60);
  Result checkout = spread_result(590, 9000, 30000, 0, 60);
  checkout.errors.check = 6;  // complete 200s whose order id was missing
  Result login_misses = login;
  login_misses.errors.extract = 12;
  run.request_results = {{"login", login_misses}, {"checkout", checkout}};
  for (const NamedResult& step : run.request_results) run.result.merge(step.result);
  ScenarioResult buy{"buy", 590, 18, Histogram{}};
  for (uint64_t i = 0; i < 590; ++i) buy.duration.record(1'500'000 + 3'000 * (i % 300));
  ScenarioResult browse{"browse", 610, 0, Histogram{}};
  for (uint64_t i = 0; i < 610; ++i) browse.duration.record(400'000 + 1'000 * (i % 200));
  run.scenarios = {buy, browse};

  json loadtest = with_result(base_loadtest("checkout-scn4q"), run.result, {});
  loadtest["spec"]["load"] = {{"connections", 20}, {"duration", "60s"}};
  json& status = loadtest["status"];
  status.erase("stages");
  status["requestResults"] = request_results_json(run, false);
  status["scenarioResults"] = scenario_results_json(run, false);
  json thresholds = json::array();
  for (const char* expression :
       {"login.p99 < 20ms", "checkout.errorRate < 1%", "buy.failedIterations == 0",
        "iterations >= 1000", "iteration.p95 < 3s"}) {
    const ThresholdOutcome outcome =
        evaluate(std::get<Threshold>(parse_threshold(expression)), run);
    thresholds.push_back({{"expression", outcome.expression},
                          {"observed", outcome.observed},
                          {"passed", outcome.passed}});
  }
  status["thresholds"] = thresholds;
  status["verdict"] = "Fail";
  status["reason"] = "ThresholdsFailed";
  status["message"] = "2 of 5 thresholds missed";
  return loadtest;
}

struct Scenario {
  const char* name;
  json (*build)();
};

constexpr Scenario kScenarios[] = {
    {"passed", passed_loadtest},         {"gate_failed", gate_failed_loadtest},
    {"run_failed", run_failed_loadtest}, {"running", running_loadtest},
    {"shared", shared_loadtest},         {"experiment", experiment_loadtest},
    {"search", search_loadtest},         {"saturated", saturated_loadtest},
    {"scenarios", scenarios_loadtest}};

std::string render(ReportFormat format, const json& loadtest) {
  std::ostringstream out;
  write_loadtest_report(out, format, loadtest);
  return out.str();
}

bool updating_goldens() {
  const char* update = std::getenv("KUBELOAD_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void check_golden(const std::string& file, const std::string& actual) {
  const std::string path = std::string(KUBELOAD_SOURCE_DIR) + "/tests/golden/gate/" + file;
  if (updating_goldens()) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(out) << "cannot write " << path;
    out << actual;
    return;
  }
  const std::optional<std::string> expected = read_file(path);
  ASSERT_TRUE(expected.has_value()) << path << " is missing; KUBELOAD_UPDATE_GOLDEN=1 creates it";
  EXPECT_EQ(*expected, actual) << "differs from " << path
                               << " (KUBELOAD_UPDATE_GOLDEN=1 regenerates it)";
}

TEST(GateReportGolden, JunitAndMarkdownOfEveryScenario) {
  for (const Scenario& scenario : kScenarios) {
    SCOPED_TRACE(scenario.name);
    const json loadtest = scenario.build();
    check_golden(std::string(scenario.name) + ".junit.xml", render(ReportFormat::junit, loadtest));
    check_golden(std::string(scenario.name) + ".md", render(ReportFormat::markdown, loadtest));
  }
}

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The suite, class and case names of a JUnit report: what GitLab and Jenkins
// key a test's history by.
std::vector<std::string> junit_names(const std::string& xml) {
  std::vector<std::string> names;
  const std::regex name(R"(<(testsuites|testsuite|testcase)( classname="[^"]*")? name="[^"]*")");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), name); it != std::sregex_iterator();
       ++it) {
    names.push_back(it->str());
  }
  return names;
}

TEST(GateReportJunit, TwoRunsOfOneTestHaveTheSameSuiteAndCaseNames) {
  // Two runs of the test "checkout", named by generateName, compared with
  // different baseline runs: CI must see the same tests.
  json first = gate_failed_loadtest();
  json second = gate_failed_loadtest();
  second["metadata"]["name"] = "checkout-x7k2p";
  second["status"]["baseline"]["loadTestName"] = "checkout-9qz8w";
  const std::string first_xml = render(ReportFormat::junit, first);
  const std::string second_xml = render(ReportFormat::junit, second);
  ASSERT_EQ(junit_names(first_xml).size(), 8u) << first_xml;  // suites, suite, 6 cases
  EXPECT_EQ(junit_names(first_xml), junit_names(second_xml));
  EXPECT_NE(first_xml.find(R"(<testsuite name="checkout" )"), std::string::npos) << first_xml;
  EXPECT_NE(first_xml.find(R"(<testcase classname="checkout" name="run" )"), std::string::npos);
  EXPECT_NE(first_xml.find(R"(<testcase classname="checkout" name="p99 &lt; 20ms" )"),
            std::string::npos);
  EXPECT_NE(first_xml.find(R"(<testcase classname="checkout" name="baseline p99" )"),
            std::string::npos);
  // Each run stays findable by its own name.
  EXPECT_NE(first_xml.find(R"(<property name="kubeload.dev/run" value="checkout-9qz8w"/>)"),
            std::string::npos);
  EXPECT_NE(second_xml.find(R"(<property name="kubeload.dev/run" value="checkout-x7k2p"/>)"),
            std::string::npos);
  EXPECT_NE(second_xml.find(R"(<property name="baseline" value="checkout-9qz8w"/>)"),
            std::string::npos);
}

TEST(GateReportJunit, WithoutTheTestLabelTheGenerateNameStemThenTheNameIsTheIdentity) {
  json generated = gate_failed_loadtest();
  generated["metadata"].erase("labels");
  generated["metadata"]["generateName"] = "checkout-gate-";
  const std::string xml = render(ReportFormat::junit, generated);
  EXPECT_NE(xml.find(R"(<testsuite name="checkout-gate" )"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(<testcase classname="checkout-gate" name="run" )"), std::string::npos);
  EXPECT_NE(xml.find(R"(<property name="kubeload.dev/run" value="checkout-9qz8w"/>)"),
            std::string::npos);

  json applied = gate_failed_loadtest();
  applied["metadata"].erase("labels");
  applied["metadata"]["name"] = "checkout-nightly";
  EXPECT_NE(render(ReportFormat::junit, applied).find(R"(<testsuite name="checkout-nightly" )"),
            std::string::npos);

  EXPECT_EQ(test_identity("checkout", "other-", "other-x7k2p", "http://a/"), "checkout");
  EXPECT_EQ(test_identity("", "checkout-", "checkout-x7k2p", "http://a/"), "checkout");
  EXPECT_EQ(test_identity("", "", "checkout-nightly", "http://a/"), "checkout-nightly");
  EXPECT_EQ(test_identity("", "", "", "http://a/"), "http://a/");
}

TEST(GateReportJunit, ALocalRunIsNamedByItsLabelElseItsManifestName) {
  RunInfo info;
  info.url = "http://127.0.0.1:8080/";
  RunResult run;
  run.result = spread_result(100, 1000, 1000, 0, 1);
  const std::vector<ThresholdOutcome> gates = {{"p99 < 1s", "1.9ms", true, 1.9}};
  std::ostringstream labelled;
  write_junit_report(labelled,
                     gate_report_from_run("checkout-local", "checkout", info, run, gates));
  EXPECT_NE(labelled.str().find(R"(<testsuite name="checkout" )"), std::string::npos)
      << labelled.str();
  EXPECT_NE(labelled.str().find(R"(<testcase classname="checkout" name="p99 &lt; 1s" )"),
            std::string::npos);
  EXPECT_EQ(labelled.str().find("kubeload.dev/run"), std::string::npos)
      << "a local run has no run object to name";
  std::ostringstream unlabelled;
  write_junit_report(unlabelled, gate_report_from_run("checkout-local", "", info, run, gates));
  EXPECT_NE(unlabelled.str().find(R"(<testsuite name="checkout-local" )"), std::string::npos)
      << unlabelled.str();
}

TEST(GateReportJunit, ARepeatedThresholdGetsANumberedNameOfItsOwn) {
  // GitLab keeps only the first test case of a name; the spec may repeat an
  // expression, and each must stay a case of its own, under the same name
  // in every run.
  json loadtest = passed_loadtest();
  loadtest["status"]["thresholds"] =
      json::array({{{"expression", "p99 < 20ms"}, {"observed", "9.8ms"}, {"passed", true}},
                   {{"expression", "p99 < 20ms"}, {"observed", "9.8ms"}, {"passed", true}}});
  const std::string xml = render(ReportFormat::junit, loadtest);
  EXPECT_NE(xml.find(R"(<testcase classname="checkout" name="p99 &lt; 20ms" )"), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"checkout\" name=\"p99 &lt; 20ms (2)\" "),
            std::string::npos)
      << xml;
}

TEST(GateReportJunit, EveryThresholdAndBaselineDeltaIsATestCase) {
  const std::string xml = render(ReportFormat::junit, passed_loadtest());
  // the run, 3 thresholds, 2 baseline deltas
  EXPECT_EQ(count_of(xml, "<testcase "), 6);
  EXPECT_NE(xml.find("tests=\"6\" failures=\"0\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"p99 &lt; 20ms\""), std::string::npos);
  EXPECT_NE(xml.find("name=\"baseline p99\""), std::string::npos);
  EXPECT_EQ(xml.find("<failure"), std::string::npos);
}

TEST(GateReportJunit, MissesCarryObservedAndLimit) {
  const std::string xml = render(ReportFormat::junit, gate_failed_loadtest());
  EXPECT_NE(xml.find("tests=\"6\" failures=\"3\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_TRUE(std::regex_search(
      xml,
      std::regex(
          R"(<failure type="ThresholdMissed" message="p99 &lt; 20ms: observed [0-9.]+ms, limit &lt; 20ms")")))
      << xml;
  EXPECT_NE(xml.find("message=\"p99: observed change +180.4%, limit max regression 10%\""),
            std::string::npos)
      << xml;
  // rps +0.0% is no regression: that case passes.
  EXPECT_NE(xml.find("name=\"baseline rps\" time=\"0\">\n      <system-out>"), std::string::npos)
      << xml;
}

TEST(GateReportJunit, AFailedOrUnfinishedRunIsAnErrorNeverGreen) {
  for (const json& loadtest : {run_failed_loadtest(), running_loadtest()}) {
    const std::string xml = render(ReportFormat::junit, loadtest);
    EXPECT_NE(xml.find("errors=\"1\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("<error "), std::string::npos) << xml;
  }
  const std::string failed = render(ReportFormat::junit, run_failed_loadtest());
  EXPECT_NE(failed.find("type=\"WorkersNotReady\""), std::string::npos) << failed;
  EXPECT_NE(failed.find("ImagePullBackOff &lt;after 5m&gt;"), std::string::npos) << failed;
}

TEST(GateReportJunit, ABaselineThatFailedWithoutDeltasStillFails) {
  json loadtest = passed_loadtest();
  loadtest["status"]["verdict"] = "Fail";
  loadtest["status"]["baseline"] = {
      {"deltas", json::object()},
      {"passed", false},
      {"message", "baseline LoadTest \"x\" not found or has no result"}};
  const std::string xml = render(ReportFormat::junit, loadtest);
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("type=\"BaselineFailed\""), std::string::npos) << xml;
}

TEST(GateReportJunit, EachBaselineCheckShowsTheOperatorsOwnOutcome) {
  // The operator compared 10.04% > 10% and failed p99, though its status
  // shows the delta rounded to "+10.0%"; rps, 4.9% lower, passed.
  json loadtest = passed_loadtest();
  loadtest["status"]["verdict"] = "Fail";
  loadtest["status"]["baseline"] = {
      {"loadTestName", "b"},
      {"deltas", {{"p99", "+10.0%"}, {"rps", "-4.9%"}}},
      {"checks",
       {baseline_check("p99", "+10.0%", 10, false), baseline_check("rps", "-4.9%", 5, true)}},
      {"passed", false}};
  const GateReport report = gate_report_from_loadtest(loadtest);
  ASSERT_TRUE(report.baseline.has_value());
  ASSERT_EQ(report.baseline->checks.size(), 2u);
  EXPECT_EQ(report.baseline->checks[0].metric, "p99");
  EXPECT_FALSE(report.baseline->checks[0].passed);
  EXPECT_EQ(report.baseline->checks[0].max_regression_percent, 10.0);
  EXPECT_EQ(report.baseline->checks[1].metric, "rps");
  EXPECT_TRUE(report.baseline->checks[1].passed);
  const std::string xml = render(ReportFormat::junit, loadtest);
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos) << xml;
}

TEST(GateReportJunit, EscapesControlCharactersAndMarkup) {
  json loadtest = run_failed_loadtest();
  loadtest["status"]["message"] = std::string("bad \x01 <tag> & \"quote\"");
  const std::string xml = render(ReportFormat::junit, loadtest);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_NE(xml.find("&lt;tag&gt; &amp; &quot;quote&quot;"), std::string::npos) << xml;
}

TEST(GateReportMarkdown, HeadlineSaysTheVerdictAndTablesEscapePipes) {
  EXPECT_NE(render(ReportFormat::markdown, passed_loadtest()).find(": ✅ Pass"), std::string::npos);
  EXPECT_NE(render(ReportFormat::markdown, gate_failed_loadtest()).find(": ❌ Fail"),
            std::string::npos);
  EXPECT_NE(render(ReportFormat::markdown, run_failed_loadtest()).find("run failed"),
            std::string::npos);
  json loadtest = passed_loadtest();
  loadtest["status"]["message"] = "a | b";
  EXPECT_NE(render(ReportFormat::markdown, loadtest).find("a \\| b"), std::string::npos);
}

TEST(GateReportHtml, IsSelfContainedWithCurveStagesAndThresholds) {
  const std::string html = render(ReportFormat::html, gate_failed_loadtest());
  EXPECT_EQ(html.find("http://"), html.find("http://checkout.shop.svc"))
      << "only the target URL may appear";
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("<polyline id=\"latency-curve-line\""), std::string::npos);
  EXPECT_NE(html.find("<table id=\"stages\">"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"thresholds\">"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"baseline\">"), std::string::npos);
  EXPECT_NE(html.find(">99.9%</text>"), std::string::npos) << "log-scale percentile axis";
  EXPECT_NE(html.find("class=\"limit fail\""), std::string::npos) << "the missed p99 limit";
  // Without a histogram the curve falls back to the summary's percentiles.
  json loadtest = gate_failed_loadtest();
  loadtest["status"]["result"].erase("histogram");
  EXPECT_NE(render(ReportFormat::html, loadtest).find("Summary percentiles"), std::string::npos);
}

TEST(GateReportHtml, NoCurveWithoutResponses) {
  const std::string html = render(ReportFormat::html, run_failed_loadtest());
  EXPECT_EQ(html.find("<polyline"), std::string::npos);
  EXPECT_NE(html.find("No latency was recorded."), std::string::npos);
}

TEST(GateReportText, StageLatenciesComeFromTheStatusSummaries) {
  const json loadtest = passed_loadtest();
  const std::string text = render(ReportFormat::text, loadtest);
  const double p99 = loadtest["status"]["stages"][1]["latencyMs"]["p99"].get<double>();
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.3f", p99);
  EXPECT_NE(text.find(shown), std::string::npos) << text;
  EXPECT_NE(text.find("2 workers"), std::string::npos) << text;
  EXPECT_NE(text.find("Verdict: Pass"), std::string::npos) << text;
  const std::string jmeter = render(ReportFormat::jmeter, loadtest);
  EXPECT_NE(jmeter.find("stage 1 (20 conns)"), std::string::npos) << jmeter;
}

TEST(GateReport, ASharedTargetIsMarkedInEveryFormat) {
  const std::string note =
      "Target shared with shop/checkout-b and team-b/search-1 during this run: its latency and "
      "the target's CPU/memory include their load.";
  for (const ReportFormat format :
       {ReportFormat::text, ReportFormat::junit, ReportFormat::markdown, ReportFormat::html}) {
    SCOPED_TRACE(static_cast<int>(format));
    // XML and HTML escape the apostrophe.
    const bool escaped = format == ReportFormat::html || format == ReportFormat::junit;
    EXPECT_NE(render(format, shared_loadtest()).find(escaped ? note.substr(0, 70) : note),
              std::string::npos);
    EXPECT_EQ(render(format, passed_loadtest()).find("Target shared"), std::string::npos);
  }
  // Informational: the run still passes.
  const std::string junit = render(ReportFormat::junit, shared_loadtest());
  EXPECT_EQ(junit.find("<failure"), std::string::npos);
  EXPECT_NE(junit.find("name=\"sharedWith\" value=\"shop/checkout-b,team-b/search-1\""),
            std::string::npos);
}

TEST(GateReport, ASaturatedGeneratorIsMarkedInEveryFormat) {
  const std::string note = std::string("Generator saturated: ") + kSaturatedMessage;
  for (const ReportFormat format :
       {ReportFormat::text, ReportFormat::junit, ReportFormat::markdown, ReportFormat::html}) {
    SCOPED_TRACE(static_cast<int>(format));
    // XML and HTML escape the apostrophe.
    const bool escaped = format == ReportFormat::html || format == ReportFormat::junit;
    EXPECT_NE(render(format, saturated_loadtest()).find(escaped ? note.substr(0, 150) : note),
              std::string::npos);
    EXPECT_EQ(render(format, passed_loadtest()).find("Generator saturated"), std::string::npos);
  }
  // A warning: the run still passes.
  EXPECT_EQ(render(ReportFormat::junit, saturated_loadtest()).find("<failure"), std::string::npos);
  // Only True is said: False and Unknown are nothing to warn of.
  json not_saturated = saturated_loadtest();
  not_saturated["status"]["conditions"].back()["status"] = "False";
  EXPECT_EQ(render(ReportFormat::markdown, not_saturated).find("Generator saturated"),
            std::string::npos);
}

TEST(GateReport, ALocalRunThatUsedItsCpusSaysSo) {
  RunInfo info;
  info.url = "http://127.0.0.1:8080/";
  RunResult run;
  run.result.requests = 10;
  const GeneratorCpu busy = GeneratorCpu::of(19.2, 10, std::nullopt, 2);
  EXPECT_EQ(generator_saturation_warning(busy),
            "loadgen used 96% of the 2 CPUs it may use during the measured 10.0 s: the numbers "
            "describe the generator, not the target; give it more CPU (-t up to its CPUs), or "
            "spread the load over more machines (a LoadTest's spec.workers)");
  EXPECT_EQ(gate_report_from_run("t", "", info, run, {}, busy).generator_saturated,
            generator_saturation_warning(busy));
  const GeneratorCpu calm = GeneratorCpu::of(5, 10, std::nullopt, 2);
  EXPECT_EQ(generator_saturation_warning(calm), "");
  EXPECT_EQ(gate_report_from_run("t", "", info, run, {}, calm).generator_saturated, "");
  EXPECT_EQ(gate_report_from_run("t", "", info, run, {}).generator_saturated, "");
}

TEST(GateReport, AResultThatIsNotOneIsAnErrorNamingTheField) {
  json loadtest = passed_loadtest();
  loadtest["status"]["result"]["requests"] = -5;
  EXPECT_THROW(
      {
        try {
          render(ReportFormat::junit, loadtest);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("requests"), std::string::npos) << e.what();
          throw;
        }
      },
      std::invalid_argument);
}

// ---- capacity searches (docs/experiments.md "Capacity search"): the sweep table

TEST(GateReportGolden, SearchInTheTextAndJmeterFormats) {
  const json loadtest = search_loadtest();
  check_golden("search.txt", render(ReportFormat::text, loadtest));
  check_golden("search.jmeter.txt", render(ReportFormat::jmeter, loadtest));
}

TEST(GateReportGolden, ScenariosInTheTextAbAndJmeterFormats) {
  const json loadtest = scenarios_loadtest();
  check_golden("scenarios.txt", render(ReportFormat::text, loadtest));
  check_golden("scenarios.ab.txt", render(ReportFormat::ab, loadtest));
  check_golden("scenarios.jmeter.txt", render(ReportFormat::jmeter, loadtest));
}

TEST(GateReportScenarios, EveryFormatShowsTheScenarioRowsAndTheNewErrorKinds) {
  const json loadtest = scenarios_loadtest();
  const GateReport report = gate_report_from_loadtest(loadtest);
  ASSERT_EQ(report.scenarios.size(), 2u);
  EXPECT_EQ(report.scenarios[0].name, "buy");
  EXPECT_EQ(report.scenarios[0].iterations, 590u);
  EXPECT_EQ(report.scenarios[0].failed, 18u);
  EXPECT_TRUE(report.scenarios[0].duration_measured);
  EXPECT_NEAR(report.scenarios[0].iterations_per_second, 590.0 / 60.0, 1e-9);
  EXPECT_EQ(report.errors.extract, 12u);
  EXPECT_EQ(report.errors.check, 6u);
  // The same rows as a local run of the same result shows.
  const std::string html = render(ReportFormat::html, loadtest);
  EXPECT_NE(html.find("<h2>Scenarios</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Steps</h2>"), std::string::npos);
  EXPECT_NE(html.find("extract 12, check 6"), std::string::npos);
  EXPECT_NE(render(ReportFormat::markdown, loadtest).find("| buy | 590 | 18 (3.05%) |"),
            std::string::npos);
  EXPECT_NE(render(ReportFormat::junit, loadtest).find("scenario buy: 590 iterations, 18 failed"),
            std::string::npos);
  // A run without scenarios shows none of it.
  const std::string plain = render(ReportFormat::html, passed_loadtest());
  EXPECT_EQ(plain.find("Scenarios"), std::string::npos);
  EXPECT_EQ(plain.find("extract"), std::string::npos);
}

TEST(GateReportSearch, TheSweepTableHasARowPerStepInTheOrderTheyRan) {
  const GateReport report = gate_report_from_loadtest(search_loadtest());
  ASSERT_TRUE(report.search.has_value());
  EXPECT_FALSE(report.has_result);
  const ExperimentTable table = search_table(*report.search);
  ASSERT_EQ(table.rows.size(), report.search->steps.size());
  ASSERT_GE(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[0][0], "1");
  EXPECT_EQ(table.rows[0][1], "25/s");
  EXPECT_EQ(table.rows[0][2], "Pass");
  EXPECT_EQ(table.rows[0][8], "0.050");  // the target's CPU cores
  // Each failing step names the thresholds it failed.
  for (const std::vector<std::string>& row : table.rows) {
    EXPECT_EQ(row[2] == "Fail", row.back() != "-") << row[0];
  }
  const std::string answer = search_outcome(*report.search);
  EXPECT_EQ(answer.rfind("highest passing rate ", 0), 0u) << answer;
  EXPECT_NE(answer.find(", first failing "), std::string::npos) << answer;
}

TEST(GateReportSearch, BeforeAnyStepTheReportSaysSo) {
  json loadtest = search_loadtest();
  loadtest.erase("status");
  const GateReport report = gate_report_from_loadtest(loadtest);
  ASSERT_TRUE(report.search.has_value());
  EXPECT_EQ(search_outcome(*report.search), "no step finished yet");
  EXPECT_NE(render(ReportFormat::markdown, loadtest).find("no step finished yet"),
            std::string::npos);
  EXPECT_NE(render(ReportFormat::jmeter, loadtest).find("no step finished yet"), std::string::npos);
}

// ---- experiments (docs/experiments.md): the variants side by side

TEST(GateReportGolden, ExperimentInTheTextAbAndJmeterFormats) {
  const json loadtest = experiment_loadtest();
  check_golden("experiment.txt", render(ReportFormat::text, loadtest));
  check_golden("experiment.ab.txt", render(ReportFormat::ab, loadtest));
  check_golden("experiment.jmeter.txt", render(ReportFormat::jmeter, loadtest));
}

TEST(GateReportExperiment, TheModelHoldsEachVariantItsDifferencesAndComparisons) {
  const GateReport report = gate_report_from_loadtest(experiment_loadtest());
  ASSERT_TRUE(report.experiment.has_value());
  const ExperimentReport& experiment = *report.experiment;
  EXPECT_FALSE(report.has_result);
  EXPECT_EQ(report.identity, "nginx-ab");
  EXPECT_EQ(report.target, "a: service web-a:80; b: service web-b:80");
  ASSERT_EQ(experiment.variants.size(), 2u);
  EXPECT_EQ(experiment.variants[1].row.requests, 4000u);
  EXPECT_DOUBLE_EQ(experiment.variants[1].row.latency_ms.p99, 22.015);
  EXPECT_EQ(experiment.variants[1].usage.memory_bytes_max, 73400320);
  EXPECT_EQ(experiment.variants[1].cpu_per_request, 0.00164);
  EXPECT_EQ(experiment_progress(experiment), "4 of 4 rounds of 2 variants");
  const ExperimentTable differences = differences_table(experiment);
  ASSERT_EQ(differences.header, (std::vector<std::string>{"metric", "b - a"}));
  // In kComparedMetrics' order.
  std::vector<std::string> metrics;
  for (const auto& row : differences.rows) metrics.push_back(row[0]);
  EXPECT_EQ(metrics, (std::vector<std::string>{"rps", "p50", "p99", "errorRate", "cpuPerRequest"}));
  EXPECT_EQ(differences.rows[2][1], "+10.01 ms [+7.41, +12.60] (+93.0%)");
  EXPECT_EQ(differences.rows[4][1], "+0.610 ms CPU [+0.520, +0.700] (+59.2%)");
}

TEST(GateReportExperiment, DifferencesAndMarginsAreInTheMetricsUnits) {
  api::MetricDifference d{"b", "a", "p99", 10.1, 8.2, 12.04, 95.0};
  EXPECT_EQ(difference_text(d), "+10.10 ms [+8.20, +12.04] (+95.0%)");
  d = {"b", "a", "rps", -12.5, -20, -5, std::nullopt};
  EXPECT_EQ(difference_text(d), "-12.5/s [-20.0, -5.0]");
  d = {"b", "a", "errorRate", 0.0012, -0.0001, 0.0025, std::nullopt};
  EXPECT_EQ(difference_text(d), "+0.12 pp [-0.01, +0.25]");
  d = {"b", "a", "p50", 0, 0, 0, 0.0};
  EXPECT_EQ(difference_text(d), "0.00 ms [0.00, 0.00] (0.0%)");
  api::ComparisonRow c{"b.p99 <= a.p99", "Inconclusive", std::nullopt, std::nullopt,
                       std::nullopt,     std::nullopt,   "0 rounds"};
  EXPECT_EQ(comparison_margin_text(c), "no interval");
  EXPECT_FALSE(comparison_passed(c));
  EXPECT_EQ(comparison_limit("b.rps >= a.rps * 0.95"), ">= 0 over the whole 95% interval");
  EXPECT_EQ(comparison_limit("not a comparison"), "");
}

TEST(GateReportJunit, EachComparisonIsATestCaseAndOnlyPassPasses) {
  const std::string xml = render(ReportFormat::junit, experiment_loadtest());
  // run, 2 thresholds, 3 comparisons; the Fail and the Inconclusive fail.
  EXPECT_NE(xml.find("<testsuite name=\"nginx-ab\" tests=\"6\" failures=\"2\" errors=\"0\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"b.p99 &lt;= a.p99 * 1.05\" time=\"0\">\n      <failure "
                     "type=\"ComparisonFailed\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"b.cpuPerRequest &lt;= a.cpuPerRequest\" time=\"0\">\n      "
                     "<failure type=\"Inconclusive\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"b.rps &gt;= a.rps * 0.95\" time=\"0\">\n      <system-out>"),
            std::string::npos)
      << xml;
  // An inconclusive comparison is never green, whatever the verdict says.
  json all_inconclusive = fixture("experiment-inconclusive.json");
  all_inconclusive["status"]["verdict"] = "Pass";
  const std::string inconclusive = render(ReportFormat::junit, all_inconclusive);
  EXPECT_NE(inconclusive.find("failures=\"1\""), std::string::npos) << inconclusive;
}

TEST(GateReportExperiment, AnExperimentUnderWayOrWhoseRoundFailedStillReports) {
  const json running = fixture("experiment-running.json");
  const GateReport report = gate_report_from_loadtest(running);
  ASSERT_TRUE(report.experiment.has_value());
  // No variant merged yet: the spec's variants, without numbers.
  ASSERT_EQ(report.experiment->variants.size(), 2u);
  EXPECT_FALSE(report.experiment->variants[0].has_result);
  EXPECT_EQ(report.experiment->variants[0].target, "http://web-a:80");
  EXPECT_NE(render(ReportFormat::junit, running).find("type=\"NotFinished\""), std::string::npos);
  EXPECT_NE(render(ReportFormat::ab, running).find("no variant has a result yet"),
            std::string::npos);
  const json failed = fixture("experiment-round-failed.json");
  const std::string markdown = render(ReportFormat::markdown, failed);
  EXPECT_NE(markdown.find("| requests | 1,000 | - |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| ❔ | `b.p99 <= a.p99` | Inconclusive | no interval |"),
            std::string::npos)
      << markdown;
  const std::string ab = render(ReportFormat::ab, failed);
  EXPECT_NE(ab.find("Variant: a (service web-a:80, 1 round)"), std::string::npos) << ab;
  EXPECT_EQ(ab.find("Variant: b"), std::string::npos) << ab;
}

TEST(GateReportHtml, AnExperimentShowsItsVariantsDifferencesAndComparisons) {
  const std::string html = render(ReportFormat::html, experiment_loadtest());
  EXPECT_NE(html.find("<table id=\"variants\"><thead><tr><th></th><th>a (base)</th><th>b</th>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>+10.01 ms [+7.41, +12.60] (+93.0%)</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"miss\">Inconclusive (about 9 rounds would decide)</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"ok\">Pass</td>"), std::string::npos);
  EXPECT_EQ(html.find("No result was collected"), std::string::npos);
  EXPECT_EQ(html.find("id=\"latency-curve\""), std::string::npos);
}

TEST(GateReport, ThresholdLimitIsTheRightSideWithItsOperator) {
  EXPECT_EQ(threshold_limit("p99 < 200ms"), "< 200ms");
  EXPECT_EQ(threshold_limit("rps>=4800"), ">= 4800");
  EXPECT_EQ(threshold_limit("cart.p99 <= 1s"), "<= 1s");
  EXPECT_EQ(threshold_limit("nonsense"), "");
}

TEST(PercentileDistribution, HalvesTheDistanceAndEndsAtTheMaximum) {
  Histogram h;
  for (int64_t v = 1; v <= 10000; ++v) h.record(v);
  const std::vector<PercentilePoint> points = percentile_distribution(h, 5);
  ASSERT_GT(points.size(), 60u);
  EXPECT_EQ(points.front().percentile, 0);
  EXPECT_DOUBLE_EQ(points[5].percentile, 50.0);
  EXPECT_DOUBLE_EQ(points[10].percentile, 75.0);
  EXPECT_EQ(points.back().percentile, 100);
  EXPECT_NEAR(points.back().value_ms, 10.0, 0.01);
  EXPECT_EQ(points.back().count_at_or_below, 10000u);
  for (size_t i = 1; i < points.size(); ++i) {
    EXPECT_GE(points[i].value_ms, points[i - 1].value_ms);
    EXPECT_GE(points[i].count_at_or_below, points[i - 1].count_at_or_below);
  }
  // No point beyond what 10,000 samples can resolve.
  EXPECT_LE(points[points.size() - 2].inverse, 10000.0);
  EXPECT_TRUE(percentile_distribution(Histogram{}).empty());
}

TEST(GateReportFromRun, VerdictFollowsTheThresholds) {
  RunInfo info;
  info.url = "http://127.0.0.1:8080/";
  RunResult run;
  run.result = spread_result(100, 1000, 1000, 0, 1);
  EXPECT_EQ(gate_report_from_run("t", "", info, run, {}).verdict, "None");
  EXPECT_EQ(gate_report_from_run("t", "", info, run, {{"p99 < 1s", "1.9ms", true, 1.9}}).verdict,
            "Pass");
  EXPECT_EQ(gate_report_from_run(
                "t", "", info, run,
                {{"p99 < 1s", "1.9ms", true, 1.9}, {"rps > 1000", "100.0/s", false, 100.0}})
                .verdict,
            "Fail");
  run.finished = false;
  EXPECT_EQ(gate_report_from_run("t", "", info, run, {{"p99 < 1s", "1.9ms", true, 1.9}}).verdict,
            "None");
}

// The LoadTestResult the operator writes of a finished LoadTest
// (operator/result_record.cpp): its labels, the run's name, uid and spec,
// the final status under `run` (naming the record), the merged result left out.
json record_of(const json& loadtest, const std::string& uid) {
  const std::string name = loadtest["metadata"]["name"].get<std::string>();
  const std::string record_name = name + "-" + uid.substr(0, 8);
  json labels = loadtest["metadata"].value("labels", json::object());
  labels["kubeload.dev/loadtest"] = name;
  labels["kubeload.dev/loadtest-uid"] = uid;
  labels["kubeload.dev/verdict"] = loadtest["status"].value("verdict", "None");
  json run = loadtest["status"];
  run["resultRecord"] = record_name;
  return {
      {"apiVersion", "kubeload.dev/v1alpha1"},
      {"kind", "LoadTestResult"},
      {"metadata",
       {{"name", record_name},
        {"namespace", loadtest["metadata"]["namespace"]},
        {"uid", "record-" + uid},
        {"creationTimestamp", loadtest["status"].value("completionTime", "2026-11-30T10:02:00Z")},
        {"labels", labels}}},
      {"test", labels.value("kubeload.dev/test", "")},
      {"loadTest",
       {{"name", name},
        {"uid", uid},
        {"generation", 1},
        {"specDigest", "sha256:00"},
        {"spec", loadtest["spec"]}}},
      {"run", run},
      {"merged", {{"encoding", "zlib+base64"}, {"data", ""}, {"omitted", "not kept"}}}};
}

TEST(GateReportOfRecord, EveryFormatReadsTheRecordAsItsLoadTest) {
  for (const Scenario& scenario : kScenarios) {
    SCOPED_TRACE(scenario.name);
    json loadtest = scenario.build();
    loadtest["metadata"]["uid"] = "1a2b3c4d-0000-4000-8000-000000000001";
    json record = record_of(loadtest, "1a2b3c4d-0000-4000-8000-000000000001");
    // The LoadTest once its record is written: the status names it.
    loadtest["status"]["resultRecord"] = record["metadata"]["name"];
    for (const ReportFormat format :
         {ReportFormat::text, ReportFormat::ab, ReportFormat::jmeter, ReportFormat::json,
          ReportFormat::junit, ReportFormat::markdown, ReportFormat::html}) {
      EXPECT_EQ(render(format, record), render(format, loadtest)) << static_cast<int>(format);
    }
  }
}

TEST(GateReportOfRecord, ARecordWithoutItsSpecStillReports) {
  json record = record_of(passed_loadtest(), "1a2b3c4d-0000-4000-8000-000000000001");
  record["loadTest"].erase("spec");
  const GateReport report = gate_report_from_loadtest(record);
  EXPECT_EQ(report.run_name, "checkout-7xk2p");
  EXPECT_EQ(report.identity, "checkout");
  EXPECT_EQ(report.verdict, "Pass");
  EXPECT_EQ(report.target, "");
  EXPECT_NE(render(ReportFormat::text, record).find("Verdict: Pass"), std::string::npos);
}

TEST(RecordedRun, TheLoadTestOfARecord) {
  json record = record_of(passed_loadtest(), "1a2b3c4d-0000-4000-8000-000000000001");
  record["loadTest"]["revision"] = "abc123";
  EXPECT_TRUE(is_result_record(record));
  EXPECT_FALSE(is_result_record(passed_loadtest()));
  const json loadtest = loadtest_of_record(record);
  EXPECT_EQ(loadtest["kind"], "LoadTest");
  EXPECT_EQ(loadtest["metadata"]["name"], "checkout-7xk2p");
  EXPECT_EQ(loadtest["metadata"]["uid"], "1a2b3c4d-0000-4000-8000-000000000001");
  EXPECT_EQ(loadtest["metadata"]["namespace"], "shop");
  EXPECT_EQ(loadtest["metadata"]["labels"]["kubeload.dev/test"], "checkout");
  EXPECT_EQ(loadtest["metadata"]["annotations"]["kubeload.dev/revision"], "abc123");
  // The LoadTest's creation is not recorded: the run's start stands for it.
  EXPECT_EQ(loadtest["metadata"]["creationTimestamp"], "2026-11-30T10:00:05Z");
  EXPECT_EQ(loadtest["spec"], passed_loadtest()["spec"]);
  EXPECT_EQ(loadtest["status"], record["run"]);
  EXPECT_EQ(as_loadtest(passed_loadtest()), passed_loadtest());
}

// ---- the trend

// A finished run of the test "checkout" started at 10:MM, with p50/p99 from
// its latency spread, its record.
json trend_record(const std::string& name, int minute, int64_t first_us, const std::string& uid) {
  const Result total = spread_result(1000, first_us, first_us * 4, 0, 10);
  json loadtest = with_result(base_loadtest(name), total, {});
  loadtest["metadata"]["uid"] = uid;
  const std::string mm = (minute < 10 ? "0" : "") + std::to_string(minute);
  loadtest["status"]["startTime"] = "2026-11-30T10:" + mm + ":05Z";
  loadtest["status"]["completionTime"] = "2026-11-30T10:" + mm + ":20Z";
  loadtest["status"]["verdict"] = "Pass";
  return record_of(loadtest, uid);
}

std::string uid_of(int i) {
  return std::to_string(10000000 + i) + "-0000-4000-8000-000000000000";
}

std::vector<json> trend_records(int count) {
  std::vector<json> records;
  for (int i = 0; i < count; ++i) {
    records.push_back(trend_record("checkout-r" + std::to_string(i), i, 1000 + 100 * i, uid_of(i)));
  }
  return records;
}

std::vector<std::string> runs_of(const Trend& trend) {
  std::vector<std::string> names;
  for (const TrendPoint& p : trend.points) names.push_back(p.load_test);
  return names;
}

TEST(Trend, TheLastRunsUpToTheRunOldestFirstWithTheRunAndItsBaselineMarked) {
  std::vector<json> records = trend_records(6);
  // Listed in any order.
  std::swap(records[0], records[4]);
  json run = records[3];  // the report is of run 4 (r3) as its record
  run["run"]["baseline"] = {{"loadTestName", "checkout-r1"},
                            {"resultName", records[1]["metadata"]["name"]},
                            {"results", {records[1]["metadata"]["name"]}},
                            {"passed", true}};
  const Trend trend = trend_of(records, run, 3);
  EXPECT_EQ(trend.test, "checkout");
  EXPECT_EQ(runs_of(trend),
            (std::vector<std::string>{"checkout-r1", "checkout-r2", "checkout-r3"}));
  EXPECT_TRUE(trend.points[0].baseline);
  EXPECT_FALSE(trend.points[1].baseline);
  EXPECT_TRUE(trend.points[2].this_run);
  EXPECT_FALSE(trend.points[0].this_run);
  EXPECT_EQ(trend.points[2].record, "checkout-r3-10000003");
  EXPECT_EQ(trend.points[2].started, "2026-11-30T10:03:05Z");
  EXPECT_EQ(trend.points[2].verdict, "Pass");
  ASSERT_TRUE(trend.points[2].p99_ms && trend.points[2].p50_ms && trend.points[2].rps);
  EXPECT_LT(*trend.points[0].p99_ms, *trend.points[2].p99_ms);
  EXPECT_DOUBLE_EQ(*trend.points[2].rps, 100.0);
  EXPECT_TRUE(trend.baselines_not_shown.empty());
  // A window that leaves the baseline out says so.
  const Trend short_trend = trend_of(records, run, 2);
  EXPECT_EQ(runs_of(short_trend), (std::vector<std::string>{"checkout-r2", "checkout-r3"}));
  EXPECT_EQ(short_trend.baselines_not_shown, std::vector<std::string>{"checkout-r1-10000001"});
  std::ostringstream out;
  write_loadtest_report(out, ReportFormat::html, run, short_trend);
  EXPECT_NE(out.str().find("Compared with, not shown (older than these runs, or gone): "
                           "<code>checkout-r1-10000001</code>."),
            std::string::npos);
}

TEST(Trend, TheLoadTestOfARecordedRunIsMatchedToItsRecordByUid) {
  const std::vector<json> records = trend_records(3);
  json loadtest = loadtest_of_record(records[2]);
  loadtest["metadata"]["creationTimestamp"] = "2026-11-30T10:02:00Z";
  const Trend trend = trend_of(records, loadtest, 20);
  ASSERT_EQ(trend.points.size(), 3u);
  EXPECT_TRUE(trend.points[2].this_run);
  EXPECT_EQ(trend.points[2].record, "checkout-r2-10000002");
}

TEST(Trend, ARunWithoutARecordYetIsTheLastPoint) {
  const std::vector<json> records = trend_records(3);
  json running = running_loadtest();
  running["metadata"]["uid"] = uid_of(9);
  running["status"]["startTime"] = "2026-11-30T10:30:00Z";
  const Trend trend = trend_of(records, running, 20);
  ASSERT_EQ(trend.points.size(), 4u);
  EXPECT_TRUE(trend.points[3].this_run);
  EXPECT_EQ(trend.points[3].load_test, "checkout-run42");
  EXPECT_EQ(trend.points[3].record, "");
}

TEST(Trend, OtherTestsNoTestAndZeroRunsGiveNothing) {
  std::vector<json> records = trend_records(2);
  records[0]["test"] = "cart";
  records[0]["metadata"]["labels"]["kubeload.dev/test"] = "cart";
  const Trend trend = trend_of(records, records[1], 20);
  EXPECT_EQ(runs_of(trend), (std::vector<std::string>{"checkout-r1"}));
  EXPECT_TRUE(trend_of(records, records[1], 0).points.empty());
  json unlabelled = passed_loadtest();
  unlabelled["metadata"].erase("labels");
  EXPECT_TRUE(trend_of(records, unlabelled, 20).points.empty());
  EXPECT_THROW(trend_of({passed_loadtest()}, records[1], 20), std::invalid_argument);
}

TEST(Trend, AFailedRunHasNoFiguresAndBreaksTheLines) {
  std::vector<json> records = trend_records(3);
  records[1]["run"].erase("result");
  records[1]["run"]["phase"] = "Failed";
  const Trend trend = trend_of(records, records[2], 20);
  ASSERT_EQ(trend.points.size(), 3u);
  EXPECT_FALSE(trend.points[1].rps);
  EXPECT_FALSE(trend.points[1].p99_ms);
  std::ostringstream out;
  write_loadtest_report(out, ReportFormat::html, records[2], trend);
  const std::string html = out.str();
  // Two lone points on each side of the gap: no line for p50, p99 or rps.
  EXPECT_EQ(html.find("<polyline class=\"trend"), std::string::npos);
  EXPECT_EQ(count_of(html, "<circle class=\"point p99"), 2);
}

// The trend's section of the html report: golden, so a reviewer sees the
// SVG and its table change.
TEST(GateReportGolden, HtmlTrendSection) {
  std::vector<json> records = trend_records(5);
  json run = records[4];
  run["run"]["baseline"] = {{"resultName", records[2]["metadata"]["name"]},
                            {"results", {records[2]["metadata"]["name"]}},
                            {"passed", true}};
  records[1]["loadTest"]["revision"] = "v1.4.2";
  const std::string html = render(ReportFormat::html, run);
  EXPECT_EQ(html.find("<h2>Trend"), std::string::npos) << "no trend unless given";
  std::ostringstream out;
  write_loadtest_report(out, ReportFormat::html, run, trend_of(records, run, 20));
  const std::string with_trend = out.str();
  const size_t begin = with_trend.find("<h2>Trend");
  const size_t end = with_trend.find("</details>", begin);
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  check_golden("trend.html", with_trend.substr(begin, end + 11 - begin));
  EXPECT_EQ(with_trend.find("<script"), std::string::npos);
  EXPECT_EQ(with_trend.find("https://"), std::string::npos);
  EXPECT_EQ(count_of(with_trend, "class=\"point p99 this-run\""), 1);
  EXPECT_EQ(count_of(with_trend, "class=\"point p99 baseline\""), 1);
}

}  // namespace
}  // namespace kubeload::loadgen
