#include "operator/run_timing.hpp"

#include <cmath>

namespace kubeload::controller {

std::optional<std::chrono::nanoseconds> planned_length(const LoadSpec& load) {
  if ((!load.duration && load.stages.empty()) || load.warmup_requests) return std::nullopt;
  std::chrono::nanoseconds planned = load.warmup.value_or(std::chrono::nanoseconds(0));
  if (!load.stages.empty()) {
    for (const StageSpec& stage : load.stages) planned += stage.duration;
  } else {
    planned += *load.duration;
  }
  return planned;
}

std::chrono::nanoseconds run_time_bound(const LoadTestSpec& spec) {
  if (spec.run_timeout) return *spec.run_timeout;
  const auto planned = planned_length(spec.load);
  if (!planned) return kDefaultRequestRunTimeout;
  return *planned + spec.load.timeout + kRunGrace;
}

int64_t job_active_deadline_seconds(const LoadTestSpec& spec) {
  const auto total = spec.start_timeout + kStartLead + run_time_bound(spec) + kWorkerLinger;
  return static_cast<int64_t>(std::ceil(std::chrono::duration<double>(total).count()));
}

}  // namespace kubeload::controller
