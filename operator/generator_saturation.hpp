#pragma once
// Whether a run's generator was its own bottleneck (issue 30): a worker that
// used nearly all of its CPU (more than kSaturatedUtilization of its limit,
// or of the CPUs it may use without one) sent its requests late and read its
// responses late, so a closed model's latency and rps describe the worker,
// not the target. Each worker measures its CPU over the measured run and
// reports it with its final result (api::ResultHead::cpu); the kept results
// carry it per worker (api::KeptWorker::cpu); status.workers.cpu sums it up
// and the GeneratorSaturated condition says it, naming the workers and what
// to do. A warning only: it changes neither the verdict nor Ready, Stalled
// or any health a gate reads.
//
// Everything here is pure; plan() calls plan_generator_saturation.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/status.hpp"
#include "operator/conditions.hpp"
#include "operator/timestamp.hpp"
#include "operator/worker_results.hpp"

namespace kubeload::controller {

inline constexpr std::string_view kGeneratorSaturatedCondition =
    api::to_string(api::ConditionType::GeneratorSaturated);

// The saturated workers the condition names, busiest first, before "and N
// more": the message stays short however many workers there are.
inline constexpr std::size_t kSaturatedWorkersNamed = 5;

// status.workers.cpu of the workers' reports (those of the Job's `workers`
// indices that said what they used); nullopt when none did. The busiest is
// the one of the largest utilization, the lowest index among equals.
std::optional<api::WorkersCpuStatus> workers_cpu(const std::map<uint32_t, WorkerReport>& reports,
                                                 uint32_t workers);

// The GeneratorSaturated condition of a run of `workers` workers whose
// reports are `reports`:
//   True, GeneratorSaturated: every worker over kSaturatedUtilization named
//     (busiest first, at most kSaturatedWorkersNamed), with the advice (more
//     workers; a higher CPU limit when they had one);
//   False, GeneratorNotSaturated: the busiest worker's use;
//   Unknown, GeneratorCpuNotMeasured: no worker reported its CPU use.
ConditionValue decide_generator_saturation(const std::map<uint32_t, WorkerReport>& reports,
                                           uint32_t workers);

// For plan(), after compute_status: sets the GeneratorSaturated condition of
// a run that started, decided once from the reports of the pass its status
// turns final in and kept after (the kept results may be gone by then).
// Nothing before the end, for a run that never started, or for one that
// ended under an operator before this condition.
void plan_generator_saturation(const api::LoadTestStatus& current, api::LoadTestStatus& status,
                               const std::map<uint32_t, WorkerReport>& reports, uint32_t workers,
                               Timestamp now);

}  // namespace kubeload::controller
