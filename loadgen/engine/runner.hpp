#pragma once
// Runs a plan on this machine: resolves the target once, starts one Worker per
// thread with its exact share, shows progress, feeds live metrics, and merges
// the workers' results after they finish.

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "kubeload/generator_cpu.hpp"
#include "kubeload/result.hpp"
#include "kubeload/target_policy.hpp"
#include "loadgen/engine/plan.hpp"
#include "loadgen/engine/worker.hpp"
#include "reports/report.hpp"

namespace kubeload::loadgen {

class LiveMetrics;

struct RunOptions {
  bool progress = true;                     // progress lines on stderr
  LiveMetrics* metrics = nullptr;           // live Prometheus metrics, if wanted
  const std::atomic<bool>* stop = nullptr;  // set on SIGINT/SIGTERM
  // Called about once a second from the controller thread with the sum of
  // the workers' live numbers (and once more at the end).
  std::function<void(const LiveSnapshot&)> on_progress;
  // The admin's target policy (workers the operator starts): every address the
  // target resolves to is decided before any connection; one refused address
  // refuses the run. Null: no policy (loadgen on a developer's machine).
  const TargetPolicy* target_policy = nullptr;
};

struct RunOutcome {
  RunResult result;
  RunInfo info;
  bool interrupted = false;
  // What this process used of its CPU from the end of the warm-up to the end
  // of the run (cpu_meter.hpp); unset for an empty window.
  std::optional<GeneratorCpu> cpu;
  // Worth telling the user about how the engine ran ("" for nothing): on
  // io_uring, the kernel refused the sockets a registered file table.
  std::string engine_note;
};

// Throws std::runtime_error with a one-line message when the run cannot start
// (the host does not resolve, the TLS context cannot be made).
RunOutcome run_plan(const RunPlan& plan, const RunOptions& options);

}  // namespace kubeload::loadgen
