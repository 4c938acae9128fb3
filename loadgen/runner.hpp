#pragma once
// Runs a plan on this machine: resolves the target once, starts one Worker per
// thread with its exact share, shows progress, feeds live metrics, and merges
// the workers' results after they finish.

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "kubeload/result.hpp"
#include "loadgen/plan.hpp"
#include "loadgen/report.hpp"

namespace kubeload::loadgen {

class LiveMetrics;

struct RunOptions {
  bool progress = true;                 // progress lines on stderr
  LiveMetrics* metrics = nullptr;       // live Prometheus metrics, if wanted
  const std::atomic<bool>* stop = nullptr;  // set on SIGINT/SIGTERM
};

struct RunOutcome {
  RunResult result;
  RunInfo info;
  bool interrupted = false;
};

// Throws std::runtime_error with a one-line message when the run cannot start
// (the host does not resolve, the TLS context cannot be made).
RunOutcome run_plan(const RunPlan& plan, const RunOptions& options);

}  // namespace kubeload::loadgen
