// The names and labels loadgen and the operator export, read from the text
// a scrape of /metrics gets, follow Prometheus' naming conventions
// (prometheus.io/docs/practices/naming): a rate is named for its unit
// (_per_second), base units only, and `quantile` only on summaries (it is
// the label Prometheus gives a summary's quantiles; a gauge of latency
// percentiles that uses it reads as a summary to every tool).

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "loadgen/engine/metrics.hpp"
#include "operator/operator_metrics.hpp"

namespace kubeload {
namespace {

using nlohmann::json;

std::string exposition(const prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

// Every problem with the names in one exposition, each naming the family.
std::vector<std::string> naming_problems(const std::string& text) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> type_of;  // family -> counter | gauge | histogram | summary
  std::set<std::string> reported;
  const std::regex type_line(R"(^# TYPE (\S+) (\S+)$)");
  const std::regex sample_line(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? )");
  // Name parts that say a rate or a unit other than the base one.
  const std::regex wrong_unit(R"((^|_)(rps|qps|rate|ms|milliseconds|percent)(_|$))");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, type_line)) {
      type_of[m[1]] = m[2];
      if (std::regex_search(m[1].str(), wrong_unit)) {
        problems.push_back(m[1].str() +
                           ": a rate is named ..._per_second, a time _seconds, a ratio _ratio");
      }
      continue;
    }
    if (line.empty() || line[0] == '#' || !std::regex_search(line, m, sample_line)) continue;
    const std::string family = m[1];
    const std::string labels = m[2];
    // The family a sample belongs to: a histogram's _bucket/_sum/_count are its own.
    std::string owner = family;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (!type_of.count(owner) && owner.size() > s.size() &&
          owner.compare(owner.size() - s.size(), s.size(), s) == 0) {
        owner = owner.substr(0, owner.size() - s.size());
      }
    }
    const bool quantile = labels.find("quantile=") != std::string::npos;
    if (quantile && type_of[owner] != "summary" && reported.insert(owner).second) {
      problems.push_back(owner + ": a " + type_of[owner] +
                         " with a quantile label (reserved for summaries)");
    }
  }
  return problems;
}

TEST(MetricNames, TheCheckFindsARateNamedRpsAndAGaugeWithAQuantileLabel) {
  EXPECT_EQ(
      naming_problems("# TYPE x_rps gauge\nx_rps 1\n"
                      "# TYPE x_latency_seconds gauge\nx_latency_seconds{quantile=\"0.5\"} 1\n"
                      "# TYPE y_seconds summary\ny_seconds{quantile=\"0.5\"} 1\n"
                      "# TYPE z_requests_per_second gauge\nz_requests_per_second 1\n")
          .size(),
      2u);
}

TEST(MetricNames, LoadgenLiveMetricsFollowPrometheusConventions) {
  loadgen::LiveMetrics metrics({"checkout", "shop", "0", "http1"}, {"default"});
  loadgen::LiveSnapshot snapshot;
  snapshot.requests.resize(1);
  snapshot.requests[0].requests = 10;
  snapshot.requests[0].status_codes[200] = 10;
  snapshot.connections_open = 2;
  snapshot.target_rate = 100;
  snapshot.stage = 0;
  metrics.update(snapshot);
  const std::string text = exposition(*metrics.registry());
  ASSERT_NE(text.find("kubeload_requests_total"), std::string::npos) << text;
  EXPECT_EQ(naming_problems(text), std::vector<std::string>{}) << text;
  EXPECT_NE(text.find("kubeload_target_requests_per_second{"), std::string::npos) << text;
}

TEST(MetricNames, OperatorMetricsFollowPrometheusConventions) {
  controller::OperatorMetrics metrics;
  const json loadtest = {{"metadata",
                          {{"name", "checkout-a"},
                           {"namespace", "shop"},
                           {"uid", "uid-a"},
                           {"labels", {{"kubeload.dev/test", "checkout"}}}}}};
  const json status = {
      {"phase", "Succeeded"},
      {"verdict", "Pass"},
      {"startTime", "2026-11-30T10:00:00Z"},
      {"completionTime", "2026-11-30T10:01:00Z"},
      {"result",
       {{"rps", 500.0},
        {"errorRate", 0.0},
        {"requests", 1000},
        {"latencyMs", {{"p50", 2.0}, {"p90", 5.0}, {"p95", 7.0}, {"p99", 12.5}, {"p999", 20}}}}},
      {"thresholds", {{{"expression", "p99 < 20ms"}, {"passed", true}, {"value", 12.5}}}}};
  metrics.observe_loadtest(loadtest, status);
  metrics.observe_reconcile("success", 0.01);
  metrics.set_queue_depth(0);
  const std::string text = exposition(*metrics.registry());
  EXPECT_EQ(naming_problems(text), std::vector<std::string>{}) << text;
  for (const char* name :
       {"kubeload_loadtest_result_requests_per_second{", "kubeload_test_last_requests_per_second{",
        "kubeload_loadtest_result_latency_seconds{"}) {
    EXPECT_NE(text.find(name), std::string::npos) << name << " missing from\n" << text;
  }
  // The percentiles are told apart by kubeload's own names for them, as in
  // status.result.latencyMs and the thresholds (p99 < 250ms).
  EXPECT_NE(text.find("percentile=\"p99\""), std::string::npos) << text;
}

}  // namespace
}  // namespace kubeload
