// A generator measures what it used of its CPU over the measured run
// (issue 30): the cgroup's counters against its quota, else its own CPU
// time against the CPUs it may use.

#include "loadgen/engine/cpu_meter.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <vector>

namespace kubeload::loadgen {
namespace {

using std::chrono::seconds;

CpuReading at(double wall_seconds, std::optional<double> cgroup, double process) {
  CpuReading reading;
  reading.at = std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(wall_seconds)));
  reading.cgroup_seconds = cgroup;
  reading.process_seconds = process;
  return reading;
}

TEST(CpuMeter, TheUseBetweenTwoReadingsIsOfTheQuotaElseOfTheAllowedCpus) {
  struct Case {
    const char* what;
    CpuReading start, end;
    CpuAllowance allowance;
    double seconds;
    std::optional<double> limit;
    double cores;
    double utilization;
  };
  const std::vector<Case> cases = {
      {"100m limit, the cgroup used 2.9 s in 30 s",
       at(10, 100.0, 50.0),
       at(40, 102.9, 52.5),
       {0.1, 8},
       2.9,
       0.1,
       0.1,
       2.9 / 3.0},
      {"a quota counts the cgroup, whatever in it used the CPU",
       at(0, 0.0, 0.0),
       at(10, 15.0, 12.0),
       {2.0, 8},
       15.0,
       2.0,
       2.0,
       0.75},
      {"no quota: this process's own time against its affinity",
       at(0, 0.0, 1.0),
       at(10, 500.0, 19.0),
       {std::nullopt, 2},
       18.0,
       std::nullopt,
       2.0,
       0.9},
      {"a quota without cgroup counters: the process's time against the quota",
       at(0, {}, 1.0),
       at(20, {}, 2.0),
       {0.5, 4},
       1.0,
       0.5,
       0.5,
       0.1},
      {"a quota above the CPUs it may run on: those CPUs",
       at(0, 0.0, 0.0),
       at(10, 19.0, 19.0),
       {4.0, 2},
       19.0,
       4.0,
       2.0,
       0.95},
      {"no allowed CPUs said: one",
       at(0, {}, 0.0),
       at(4, {}, 2.0),
       {std::nullopt, 0},
       2.0,
       std::nullopt,
       1.0,
       0.5},
      {"an empty window uses nothing",
       at(5, 1.0, 1.0),
       at(5, 1.0, 1.0),
       {1.0, 2},
       0.0,
       1.0,
       1.0,
       0.0},
      {"counters that went back (a reset cgroup) use nothing",
       at(0, 9.0, 0.0),
       at(10, 1.0, 0.0),
       {1.0, 2},
       0.0,
       1.0,
       1.0,
       0.0},
  };
  for (const Case& c : cases) {
    const GeneratorCpu use = cpu_use_between(c.start, c.end, c.allowance);
    EXPECT_NEAR(use.seconds, c.seconds, 1e-9) << c.what;
    EXPECT_EQ(use.limit_cores, c.limit) << c.what;
    EXPECT_DOUBLE_EQ(use.cores, c.cores) << c.what;
    EXPECT_NEAR(use.utilization, c.utilization, 1e-9) << c.what;
  }
}

TEST(CpuMeter, AWorkerLimitedTo100mThatUsedItAllIsSaturated) {
  const GeneratorCpu use = cpu_use_between(at(0, 0.0, 0.0), at(30, 2.95, 2.95), {0.1, 2});
  EXPECT_TRUE(use.saturated());
  EXPECT_EQ(describe_use(use), "98.3% of its 100m CPU limit");
}

TEST(CpuMeter, ThisProcessReadsItsOwnCpuTimeAndItsCpus) {
  const CpuReading before = read_cpu();
  // Burn a little CPU: the process's counter must move, never back.
  volatile double sink = 0;
  for (int i = 0; i < 2'000'000; ++i) sink = sink + std::sqrt(static_cast<double>(i));
  const CpuReading after = read_cpu();
  EXPECT_GE(after.process_seconds, before.process_seconds);
  EXPECT_GT(after.at, before.at);
  const CpuAllowance allowance = read_cpu_allowance();
  EXPECT_GE(allowance.allowed_cpus, 1u);
  EXPECT_GT(allowance.limit_cores.value_or(1), 0);
}

}  // namespace
}  // namespace kubeload::loadgen
