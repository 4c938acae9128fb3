#include "loadgen/engine/cpu_meter.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <thread>

#include "loadgen/engine/cpu_quota.hpp"

namespace kubeload::loadgen {
namespace {

double seconds_of(const timeval& time) {
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
}

}  // namespace

GeneratorCpu cpu_use_between(const CpuReading& start, const CpuReading& end,
                             const CpuAllowance& allowance) {
  const double window = std::chrono::duration<double>(end.at - start.at).count();
  const bool by_cgroup = allowance.limit_cores && start.cgroup_seconds && end.cgroup_seconds;
  const double used = by_cgroup ? *end.cgroup_seconds - *start.cgroup_seconds
                                : end.process_seconds - start.process_seconds;
  // A quota above the CPUs it may run on cannot be used up: those CPUs are
  // all it has.
  const double allowed = std::max(1u, allowance.allowed_cpus);
  const double cores = std::min(allowance.limit_cores.value_or(allowed), allowed);
  return GeneratorCpu::of(std::max(0.0, used), std::max(0.0, window), allowance.limit_cores, cores);
}

CpuReading read_cpu() {
  CpuReading reading;
  reading.at = std::chrono::steady_clock::now();
  reading.cgroup_seconds = cgroup_cpu_seconds(read_cgroup_cpu_usage_files());
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    reading.process_seconds = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
  }
  return reading;
}

CpuAllowance read_cpu_allowance() {
  CpuAllowance allowance;
  allowance.limit_cores = cgroup_cpu_limit(read_cgroup_cpu_files());
  cpu_set_t set;
  CPU_ZERO(&set);
  const int allowed = sched_getaffinity(0, sizeof set, &set) == 0
                          ? CPU_COUNT(&set)
                          : static_cast<int>(std::thread::hardware_concurrency());
  allowance.allowed_cpus = static_cast<uint32_t>(std::max(1, allowed));
  return allowance;
}

}  // namespace kubeload::loadgen
