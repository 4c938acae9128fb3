// The workers' live metrics: a target that answers with ever new status codes
// adds no series beyond kMaxCodeSeries per request; the rest count as
// code="other", and every response is counted once.

#include <gtest/gtest.h>

#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <regex>
#include <set>
#include <string>

#include "loadgen/engine/metrics.hpp"

namespace kubeload::loadgen {
namespace {

struct Counted {
  std::set<std::string> codes;
  double total = 0;
  double other = 0;
};

Counted requests_total(const prometheus::Registry& registry) {
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  static const std::regex series(
      R"re(kubeload_requests_total\{[^}]*code="([^"]+)"[^}]*\} (\S+))re");
  Counted out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), series);
       it != std::sregex_iterator(); ++it) {
    out.codes.insert((*it)[1]);
    out.total += std::stod((*it)[2]);
    if ((*it)[1] == "other") out.other += std::stod((*it)[2]);
  }
  return out;
}

TEST(LiveMetrics, StatusCodeSeriesAreCapped) {
  LiveMetrics metrics({"checkout", "shop", "0", "http1"}, {"default"});
  LiveSnapshot snapshot;
  snapshot.requests.resize(1);
  // 40 distinct codes, one response each, in two scrapes.
  for (int code = 200; code < 220; ++code) snapshot.requests[0].status_codes[code] = 1;
  metrics.update(snapshot);
  for (int code = 600; code < 620; ++code) snapshot.requests[0].status_codes[code] = 1;
  metrics.update(snapshot);
  // A code already counted as other stays there.
  snapshot.requests[0].status_codes[219] += 2;
  metrics.update(snapshot);

  const Counted counted = requests_total(*metrics.registry());
  // Its own series for the first 16 codes, code 0 (no response) and "other".
  EXPECT_EQ(counted.codes.size(), LiveMetrics::kMaxCodeSeries + 2);
  EXPECT_TRUE(counted.codes.contains("other"));
  EXPECT_TRUE(counted.codes.contains("200"));
  EXPECT_FALSE(counted.codes.contains("219"));
  EXPECT_FALSE(counted.codes.contains("600"));
  EXPECT_EQ(counted.total, 42);  // every response once
  EXPECT_EQ(counted.other, 42 - 16);
}

// A scenario run: the steps are the `request` series, and each scenario has
// its iterations, failed iterations and iteration durations under `scenario`,
// at zero from the first scrape, each counted once across updates.
TEST(LiveMetrics, ScenariosHaveIterationSeriesOfTheirOwn) {
  LiveMetrics metrics({"journey", "shop", "0", "http1"}, {"login", "cart"}, {"buy", "browse"});
  const auto text = [&] {
    return prometheus::TextSerializer().Serialize(metrics.registry()->Collect());
  };
  const auto value = [&](const std::string& name, const std::string& scenario) {
    const std::regex series(name + R"re(\{[^}]*scenario=")re" + scenario + R"re("[^}]*\} (\S+))re");
    std::smatch match;
    const std::string all = text();
    return std::regex_search(all, match, series) ? std::stod(match[1]) : -1.0;
  };
  EXPECT_EQ(value("kubeload_iterations_total", "buy"), 0);
  EXPECT_EQ(value("kubeload_iterations_failed_total", "browse"), 0);
  EXPECT_EQ(value("kubeload_iteration_duration_seconds_count", "buy"), 0);

  LiveSnapshot snapshot;
  snapshot.requests.resize(2);
  snapshot.scenarios.resize(2);
  snapshot.scenarios[0].iterations = 7;
  snapshot.scenarios[0].failed = 2;
  snapshot.scenarios[0].duration_buckets.assign(live_latency_bounds().size(), 7);
  snapshot.scenarios[0].duration_count = 7;
  snapshot.scenarios[0].duration_sum_seconds = 0.0035;
  metrics.update(snapshot);
  snapshot.scenarios[0].iterations = 9;
  snapshot.scenarios[0].duration_buckets.assign(live_latency_bounds().size(), 9);
  snapshot.scenarios[0].duration_count = 9;
  snapshot.scenarios[0].duration_sum_seconds = 0.0045;
  metrics.update(snapshot);

  EXPECT_EQ(value("kubeload_iterations_total", "buy"), 9);
  EXPECT_EQ(value("kubeload_iterations_failed_total", "buy"), 2);
  EXPECT_EQ(value("kubeload_iteration_duration_seconds_count", "buy"), 9);
  EXPECT_EQ(value("kubeload_iterations_total", "browse"), 0);
  EXPECT_NE(text().find(R"(request="cart")"), std::string::npos);
}

}  // namespace
}  // namespace kubeload::loadgen
