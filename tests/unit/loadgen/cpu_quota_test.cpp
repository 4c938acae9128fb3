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

TEST(CpuQuota, ReadsTheCgroupsCpuTimeFromCpuStatOrCpuacctUsage) {
  struct Case {
    CgroupCpuUsageFiles files;
    std::optional<double> seconds;
  };
  const std::vector<Case> cases = {
      // cgroup v2 cpu.stat as the kernel writes it: microseconds.
      {{"usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 40\n"
        "nr_throttled 38\nthrottled_usec 3100000\n",
        {}},
       2.5},
      {{"user_usec 1\nusage_usec 1000\n", {}}, 0.001},  // any order
      {{"usage_usec 0\n", {}}, 0.0},
      {{"usage_usec   7000000  \n", {}}, 7.0},
      {{"user_usec 1\nsystem_usec 1\n", {}}, std::nullopt},  // no usage_usec
      {{"usage_usec -5\n", {}}, std::nullopt},
      {{"usage_usec lots\n", {}}, std::nullopt},
      {{"usage_usecs 5\n", {}}, std::nullopt},  // another key
      {{"", {}}, std::nullopt},
      // cgroup v1 cpuacct.usage: nanoseconds.
      {{{}, "1500000000\n"}, 1.5},
      {{{}, "0"}, 0.0},
      {{{}, "-1"}, std::nullopt},
      {{{}, "1.5"}, std::nullopt},
      {{{}, ""}, std::nullopt},
      {{{}, {}}, std::nullopt},
      // v2 wins when a hybrid host shows both.
      {{"usage_usec 3000000\n", "9000000000"}, 3.0},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(cgroup_cpu_seconds(c.files), c.seconds)
        << "cpu.stat=" << c.files.v2_cpu_stat.value_or("<none>")
        << " cpuacct.usage=" << c.files.v1_cpuacct_usage.value_or("<none>");
  }
}

}  // namespace
}  // namespace kubeload::loadgen
