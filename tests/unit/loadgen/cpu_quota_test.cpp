// Default threads follow the cgroup CPU quota (issue 8, defect 10).

#include "loadgen/engine/cpu_quota.hpp"

#include <gtest/gtest.h>

namespace kubeload::loadgen {
namespace {

struct LimitCase {
  CgroupCpuFiles files;
  std::optional<double> limit;
};

TEST(CpuQuota, ParsesCgroupV2AndV1Contents) {
  const std::vector<LimitCase> cases = {
      {{"max 100000\n", {}, {}}, std::nullopt},
      {{"200000 100000\n", {}, {}}, 2.0},
      {{"150000 100000", {}, {}}, 1.5},
      {{"50000 100000\n", {}, {}}, 0.5},
      {{"6400000 100000\n", {}, {}}, 64.0},
      {{"", {}, {}}, std::nullopt},
      {{"garbage", {}, {}}, std::nullopt},
      {{"200000 abc", {}, {}}, std::nullopt},
      {{"0 100000", {}, {}}, std::nullopt},
      {{{}, "-1\n", "100000\n"}, std::nullopt},
      {{{}, "400000\n", "100000\n"}, 4.0},
      {{{}, "25000\n", "50000\n"}, 0.5},
      {{{}, "400000\n", {}}, std::nullopt},
      {{{}, "x", "100000"}, std::nullopt},
      {{{}, {}, {}}, std::nullopt},
      // v2 wins when a hybrid host shows both.
      {{"300000 100000", "-1", "100000"}, 3.0},
  };
  for (const auto& c : cases) {
    const auto limit = cgroup_cpu_limit(c.files);
    EXPECT_EQ(limit, c.limit) << "v2=" << c.files.v2_cpu_max.value_or("<none>")
                              << " v1 quota=" << c.files.v1_cfs_quota.value_or("<none>")
                              << " period=" << c.files.v1_cfs_period.value_or("<none>");
  }
}

TEST(CpuQuota, ThreadsAreTheWholeCpusOfTheQuotaCappedByTheHardware) {
  struct Case {
    std::optional<double> limit;
    uint32_t hardware;
    uint32_t threads;
  };
  const std::vector<Case> cases = {
      {std::nullopt, 64, 64}, {2.0, 64, 2}, {1.5, 64, 1},         {0.5, 64, 1},  {0.01, 8, 1},
      {64.0, 8, 8},           {2.0, 0, 1},  {std::nullopt, 0, 1}, {3.99, 16, 3}, {16.0, 16, 16},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(threads_for_cpu_limit(c.limit, c.hardware), c.threads)
        << "limit " << c.limit.value_or(-1) << " on " << c.hardware << " hardware threads";
  }
}

TEST(CpuQuota, APodLimitedTo2CpusOnA64CoreNodeStarts2Threads) {
  EXPECT_EQ(threads_for_cpu_limit(cgroup_cpu_limit({"200000 100000\n", {}, {}}), 64), 2u);
}

}  // namespace
}  // namespace kubeload::loadgen
