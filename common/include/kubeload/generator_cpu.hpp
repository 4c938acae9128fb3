#pragma once
// What a load generator (a worker pod, `loadgen run`) used of the CPU it may
// use over the measured run (issue 30): a generator near all of its CPU sets
// the pace itself, and a closed model's latency and rps then describe the
// generator, not the target. The worker measures it (loadgen/engine/
// cpu_meter.hpp), the worker protocol carries it (api/worker_protocol.hpp),
// the operator turns it into the GeneratorSaturated condition
// (operator/generator_saturation.hpp) and `loadgen run` into a warning; the
// threshold and the wording of "how much of what" are here, once.

#include <optional>
#include <string>
#include <string_view>

namespace kubeload {

// A generator that used more than this fraction of its CPU was the
// bottleneck: with CFS quotas, the last tenth is where throttling begins
// to stall the event loops, so its requests wait for the generator's CPU.
inline constexpr double kSaturatedUtilization = 0.9;

// What a saturated generator's numbers mean, as every warning of it says.
inline constexpr std::string_view kSaturationMeaning =
    "the numbers describe the generator, not the target";

struct GeneratorCpu {
  double seconds = 0;         // CPU time used (user + system) in the window
  double window_seconds = 0;  // the wall-clock window: the measured run, warm-up excluded
  // The CPU quota (cgroup cpu.max) in cores; unset: none.
  std::optional<double> limit_cores;
  // The CPUs it may use: limit_cores when set, else (or when fewer) the
  // CPUs its affinity allows.
  double cores = 0;
  // seconds / (window_seconds x cores): 1 is all of it.
  double utilization = 0;

  // A use of `seconds` over `window_seconds` with `cores` to use (utilization
  // 0 for an empty window or no cores).
  static GeneratorCpu of(double seconds, double window_seconds, std::optional<double> limit_cores,
                         double cores);
  bool saturated() const { return utilization > kSaturatedUtilization; }
  // Its CPU limit is what bounds it (not the CPUs it may run on): a higher
  // limit would give it more.
  bool limited() const { return limit_cores && *limit_cores <= cores; }
  bool operator==(const GeneratorCpu&) const = default;
};

// A CPU amount as a Kubernetes quantity: 0.1 -> "100m", 2 -> "2", 1.5 ->
// "1500m" (whole millicores).
std::string cpu_quantity(double cores);

// A fraction as a percent, down to the tenth: 0.97 -> "97%", 0.9041 ->
// "90.4%", 0.8999 -> "89.9%".
std::string percent(double fraction);

// "97% of its 100m CPU limit" or, without a limit (or with one above the
// CPUs it may run on), "97% of the 2 CPUs it may use".
std::string describe_use(const GeneratorCpu& cpu);

}  // namespace kubeload
