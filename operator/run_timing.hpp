#pragma once
// How long a run may take, derived from its spec alone: the bounds plan()
// enforces, the Job's backstop and the policy's length ceiling agree on them.

#include <chrono>
#include <cstdint>
#include <optional>

#include "kubeload/spec.hpp"

namespace kubeload::controller {

// Workers get the barrier's time this long before it, so that all of them
// hold it when it passes.
inline constexpr std::chrono::milliseconds kStartLead{1500};
// Added to a time-bounded run's planned length before it is overdue.
inline constexpr std::chrono::seconds kRunGrace{30};
// The run bound of a run bounded by requests when spec.timeouts.run is unset.
inline constexpr std::chrono::hours kDefaultRequestRunTimeout{1};
// How long a worker waits for POST /finish after its run (loadgen --linger).
inline constexpr std::chrono::seconds kWorkerLinger{300};

// How long the measured run may take from the barrier (see the CRD's
// timeouts.run).
std::chrono::nanoseconds run_time_bound(const LoadTestSpec& spec);
// A run bounded by time: warm-up + duration (or the stages' sum), from its
// start barrier; nullopt for a run bounded by requests (or warm-up requests).
std::optional<std::chrono::nanoseconds> planned_length(const LoadSpec& load);
// The Job's activeDeadlineSeconds: start timeout + run bound + the workers'
// linger, so the backstop never cuts a run the operator still waits for.
int64_t job_active_deadline_seconds(const LoadTestSpec& spec);

}  // namespace kubeload::controller
