#pragma once
// What this generator used of the CPU it may use over the measured run
// (issue 30): read at the end of the warm-up and at the end of the run, so a
// worker (and `loadgen run`) can say that it, not the target, set the pace.
// With a CPU quota the quota's cgroup is measured (its cpu.stat, or v1
// cpuacct.usage): the quota throttles the cgroup, whatever in it used the
// CPU. Without one, this process's own threads (getrusage) against the CPUs
// its affinity allows: the cgroup's counters there may be a whole machine's.

#include <chrono>
#include <cstdint>
#include <optional>

#include "kubeload/generator_cpu.hpp"

namespace kubeload::loadgen {

// The CPU counters at one moment.
struct CpuReading {
  std::chrono::steady_clock::time_point at;
  std::optional<double> cgroup_seconds;  // the quota's cgroup's CPU time; unset: unreadable
  double process_seconds = 0;            // this process's, every thread's (user + system)
};

// What the generator may use: its cgroup CPU quota in cores (unset: none),
// and the CPUs its affinity allows (at least 1).
struct CpuAllowance {
  std::optional<double> limit_cores;
  uint32_t allowed_cpus = 1;
};

// The use between two readings: the cgroup's CPU time when there is a quota
// and both readings have it, else the process's, against the quota or else
// the allowed CPUs.
GeneratorCpu cpu_use_between(const CpuReading& start, const CpuReading& end,
                             const CpuAllowance& allowance);

// The counters now.
CpuReading read_cpu();
// This process's quota (cpu_quota.hpp) and the CPUs of its affinity mask.
CpuAllowance read_cpu_allowance();

}  // namespace kubeload::loadgen
