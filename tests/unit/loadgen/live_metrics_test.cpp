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

}  // namespace
}  // namespace kubeload::loadgen
