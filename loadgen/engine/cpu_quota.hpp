#pragma once
// How many event-loop threads to start by default: the CPUs the container may
// use (its cgroup CPU quota), not the cores of the node it runs on. A pod
// limited to 2 CPUs on a 64-core node that starts 64 threads is throttled in
// every CFS period, and the stalls show up as server latency. And the cgroup
// counters of the CPU time used against that quota (cpu_meter.hpp).

#include <cstdint>
#include <optional>
#include <string>

namespace kubeload::loadgen {

// The contents of the cgroup files that set a CPU quota; nullopt for a file
// that does not exist.
struct CgroupCpuFiles {
  std::optional<std::string> v2_cpu_max;     // cgroup v2 cpu.max: "max 100000" or "200000 100000"
  std::optional<std::string> v1_cfs_quota;   // cgroup v1 cpu.cfs_quota_us: "-1" or "200000"
  std::optional<std::string> v1_cfs_period;  // cgroup v1 cpu.cfs_period_us: "100000"
};

// The CPU quota in CPUs (quota / period), nullopt when there is none or the
// contents do not parse. cgroup v2 wins when both are present.
std::optional<double> cgroup_cpu_limit(const CgroupCpuFiles& files);

// Threads for a CPU limit on a machine with `hardware_threads` (0: unknown):
// the whole CPUs of the quota (at least 1, so a half-CPU pod still runs),
// never more than the hardware has.
uint32_t threads_for_cpu_limit(std::optional<double> cpu_limit, uint32_t hardware_threads);

// Reads this process's cgroup files (v2 /sys/fs/cgroup/cpu.max, v1
// /sys/fs/cgroup/cpu{,,cpuacct}/cpu.cfs_*_us).
CgroupCpuFiles read_cgroup_cpu_files();

// The default for -t: threads_for_cpu_limit of this process's quota and cores.
uint32_t default_thread_count();

// The contents of the cgroup files that count the CPU time the cgroup used
// (issue 30: a generator measures its own CPU); nullopt for a file that does
// not exist.
struct CgroupCpuUsageFiles {
  // cgroup v2 cpu.stat: "usage_usec 123456\nuser_usec 100000\n..." (microseconds)
  std::optional<std::string> v2_cpu_stat;
  // cgroup v1 cpuacct.usage: "123456789000" (nanoseconds)
  std::optional<std::string> v1_cpuacct_usage;
};

// The CPU time the cgroup used, in seconds; nullopt when there is no file or
// it does not parse. cgroup v2 wins when both are present.
std::optional<double> cgroup_cpu_seconds(const CgroupCpuUsageFiles& files);

// Reads this process's cgroup files (v2 /sys/fs/cgroup/cpu.stat, v1
// /sys/fs/cgroup/cpu{acct,,cpuacct}/cpuacct.usage), from the same places as
// read_cgroup_cpu_files: the cgroup whose quota they are.
CgroupCpuUsageFiles read_cgroup_cpu_usage_files();

}  // namespace kubeload::loadgen
