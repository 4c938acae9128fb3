#include "operator/generator_saturation.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kubeload/generator_cpu.hpp"

namespace kubeload::controller {
namespace {

using api::ConditionStatus;
using api::ConditionType;
using api::Reason;

// A worker that said what it used, by index.
using Measured = std::pair<uint32_t, const GeneratorCpu*>;

// The workers of the Job that reported their CPU, busiest first (the lower
// index first among equals, so the order does not depend on the map's).
std::vector<Measured> busiest_first(const std::map<uint32_t, WorkerReport>& reports,
                                    uint32_t workers) {
  std::vector<Measured> measured;
  for (const auto& [index, report] : reports) {
    if (index < workers && report.cpu) measured.emplace_back(index, &*report.cpu);
  }
  std::stable_sort(measured.begin(), measured.end(), [](const Measured& a, const Measured& b) {
    return a.second->utilization > b.second->utilization;
  });
  return measured;
}

std::string worker_name(uint32_t index) {
  return "worker " + std::to_string(index);
}

// " (3 of 4 workers reported their CPU use)" when some did not.
std::string coverage(std::size_t measured, uint32_t workers) {
  if (measured >= workers) return "";
  return " (" + std::to_string(measured) + " of " + std::to_string(workers) +
         " workers reported their CPU use)";
}

}  // namespace

std::optional<api::WorkersCpuStatus> workers_cpu(const std::map<uint32_t, WorkerReport>& reports,
                                                 uint32_t workers) {
  const std::vector<Measured> measured = busiest_first(reports, workers);
  if (measured.empty()) return std::nullopt;
  api::WorkersCpuStatus out;
  out.measured = measured.size();
  for (const auto& [index, cpu] : measured) out.seconds += cpu->seconds;
  const auto& [busiest, cpu] = measured.front();
  out.busiest_worker = busiest;
  out.max_utilization = cpu->utilization;
  out.limit_cores = cpu->limit_cores;
  return out;
}

ConditionValue decide_generator_saturation(const std::map<uint32_t, WorkerReport>& reports,
                                           uint32_t workers) {
  const std::string type(kGeneratorSaturatedCondition);
  const std::vector<Measured> measured = busiest_first(reports, workers);
  if (measured.empty()) {
    return {type, api::name(ConditionStatus::Unknown), api::name(Reason::GeneratorCpuNotMeasured),
            "no worker reported its CPU use (a worker image before it was measured, or no "
            "worker finished its run)"};
  }
  std::vector<Measured> saturated;
  for (const Measured& worker : measured) {
    if (worker.second->saturated()) saturated.push_back(worker);
  }
  if (saturated.empty()) {
    const auto& [index, cpu] = measured.front();
    return {type, api::name(ConditionStatus::False), api::name(Reason::GeneratorNotSaturated),
            "the busiest worker, " + worker_name(index) + ", used " + describe_use(*cpu) +
                coverage(measured.size(), workers)};
  }
  // "worker 0 used 97% of its 100m CPU limit, worker 2 95%, ... and 3 more"
  std::string message =
      worker_name(saturated.front().first) + " used " + describe_use(*saturated.front().second);
  const std::size_t named = std::min(saturated.size(), kSaturatedWorkersNamed);
  for (std::size_t i = 1; i < named; ++i) {
    message +=
        ", " + worker_name(saturated[i].first) + " " + percent(saturated[i].second->utilization);
  }
  if (saturated.size() > named) {
    message += " and " + std::to_string(saturated.size() - named) + " more";
  }
  // Without a limit (or above its node's CPUs) a worker had its node's CPUs:
  // a higher limit would not help.
  const bool limited = std::any_of(saturated.begin(), saturated.end(),
                                   [](const Measured& w) { return w.second->limited(); });
  message +=
      coverage(measured.size(), workers) + ": " + std::string(kSaturationMeaning) +
      "; add workers (spec.workers)" +
      (limited ? " or raise the workers' CPU limit (spec.workerTemplate.resources.limits.cpu)"
               : " on other nodes");
  return {type, api::name(ConditionStatus::True), api::name(Reason::GeneratorSaturated), message};
}

void plan_generator_saturation(const api::LoadTestStatus& current, api::LoadTestStatus& status,
                               const std::map<uint32_t, WorkerReport>& reports, uint32_t workers,
                               Timestamp now) {
  std::optional<ConditionValue> decided;
  if (const api::Condition* kept =
          api::find_condition(current.conditions, ConditionType::GeneratorSaturated)) {
    // Decided once, when the run ended: its workers' reports go with the
    // results ConfigMap, the condition stays.
    decided = ConditionValue{kept->type, api::name(kept->status), kept->reason, kept->message};
  } else if (status.final() && !current.final() && status.start_time) {
    // Only in the pass the run ends in: a run that ended under an operator
    // before this one has no reports of its CPU left to judge.
    decided = decide_generator_saturation(reports, workers);
  }
  if (decided) {
    set_condition(status.conditions, condition(*decided, status.observed_generation, current, now));
  }
}

}  // namespace kubeload::controller
