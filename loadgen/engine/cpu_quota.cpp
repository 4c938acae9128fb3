#include "loadgen/engine/cpu_quota.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

namespace kubeload::loadgen {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// A whole number that is the entire (trimmed) text; "-1" included.
std::optional<int64_t> whole_number(std::string_view text) {
  text = trim(text);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> quota_over_period(std::optional<int64_t> quota,
                                        std::optional<int64_t> period) {
  // A negative quota (v1 "-1") means unlimited.
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

std::optional<std::string> read_whole(const char* path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

}  // namespace

std::optional<double> cgroup_cpu_limit(const CgroupCpuFiles& files) {
  if (files.v2_cpu_max) {
    const std::string_view line = trim(*files.v2_cpu_max);
    const auto space = line.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const std::string_view quota = line.substr(0, space);
    if (quota == "max") return std::nullopt;
    return quota_over_period(whole_number(quota), whole_number(line.substr(space + 1)));
  }
  if (files.v1_cfs_quota && files.v1_cfs_period) {
    return quota_over_period(whole_number(*files.v1_cfs_quota), whole_number(*files.v1_cfs_period));
  }
  return std::nullopt;
}

uint32_t threads_for_cpu_limit(std::optional<double> cpu_limit, uint32_t hardware_threads) {
  const uint32_t hardware = std::max(1u, hardware_threads);
  if (!cpu_limit) return hardware;
  // Whole CPUs only: a thread more than the quota pays for itself in throttled
  // periods, which would be measured as the server's latency.
  const double whole = std::floor(*cpu_limit);
  if (whole < 1) return 1;
  return whole >= hardware ? hardware : static_cast<uint32_t>(whole);
}

CgroupCpuFiles read_cgroup_cpu_files() {
  CgroupCpuFiles files;
  files.v2_cpu_max = read_whole("/sys/fs/cgroup/cpu.max");
  if (files.v2_cpu_max) return files;
  for (const char* directory : {"/sys/fs/cgroup/cpu/", "/sys/fs/cgroup/cpu,cpuacct/"}) {
    files.v1_cfs_quota = read_whole((std::string(directory) + "cpu.cfs_quota_us").c_str());
    files.v1_cfs_period = read_whole((std::string(directory) + "cpu.cfs_period_us").c_str());
    if (files.v1_cfs_quota && files.v1_cfs_period) break;
  }
  return files;
}

std::optional<double> cgroup_cpu_seconds(const CgroupCpuUsageFiles& files) {
  if (files.v2_cpu_stat) {
    // One "key value" pair a line; usage_usec is the sum of user and system.
    std::string_view rest = *files.v2_cpu_stat;
    while (!rest.empty()) {
      const auto end = rest.find('\n');
      const std::string_view line = trim(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      constexpr std::string_view kUsage = "usage_usec ";
      if (!line.starts_with(kUsage)) continue;
      const std::optional<int64_t> usec = whole_number(line.substr(kUsage.size()));
      if (!usec || *usec < 0) return std::nullopt;
      return static_cast<double>(*usec) / 1e6;
    }
    return std::nullopt;
  }
  if (files.v1_cpuacct_usage) {
    const std::optional<int64_t> nsec = whole_number(*files.v1_cpuacct_usage);
    if (!nsec || *nsec < 0) return std::nullopt;
    return static_cast<double>(*nsec) / 1e9;
  }
  return std::nullopt;
}

CgroupCpuUsageFiles read_cgroup_cpu_usage_files() {
  CgroupCpuUsageFiles files;
  files.v2_cpu_stat = read_whole("/sys/fs/cgroup/cpu.stat");
  if (files.v2_cpu_stat) return files;
  for (const char* path :
       {"/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/cpu/cpuacct.usage",
        "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage"}) {
    files.v1_cpuacct_usage = read_whole(path);
    if (files.v1_cpuacct_usage) break;
  }
  return files;
}

uint32_t default_thread_count() {
  return threads_for_cpu_limit(cgroup_cpu_limit(read_cgroup_cpu_files()),
                               std::thread::hardware_concurrency());
}

}  // namespace kubeload::loadgen
