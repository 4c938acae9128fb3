#pragma once
// The workers' results of one reconcile pass, folded into a running merge as
// each arrives. Only the merge and, per worker, what the status needs (a
// WorkerReport) are kept, so memory does not grow with the worker count: at
// 1,000 workers the operator holds one merged result plus the one being read,
// not 1,000 results (issue 12).

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "kubeload/api/kept_results.hpp"
#include "kubeload/api/worker_protocol.hpp"
#include "kubeload/result.hpp"

namespace kubeload::controller {

// One worker's latest /result document, parsed.
struct CollectedResult {
  RunResult run;  // run.finished: the final result (with histograms), else partial counters
  // The worker's wall-clock start of the measured run (unix ms); unset
  // before it started.
  std::optional<int64_t> started_at_ms;
  std::string error;                // the worker's own report of a run that broke off
  std::optional<int64_t> clock_ms;  // the worker's clock when it answered (unix ms)
  std::optional<GeneratorCpu> cpu = std::nullopt;  // what it used of its CPU (a final document's)
};

// Parses a worker's GET /result body (api::ResultDocument). Throws
// std::invalid_argument naming the bad field.
CollectedResult collected_result_from_json(const nlohmann::json& document);

// What the status keeps of a worker once its result is in the merge: what
// the results ConfigMap keeps of it.
using WorkerReport = api::KeptWorker;

class WorkerResults {
 public:
  // Workers are indexed 0 .. workers - 1 (the Job's completion indices).
  explicit WorkerResults(uint32_t workers = 0) : workers_(workers) {}
  // A merge kept earlier (the results ConfigMap), to fold on from.
  WorkerResults(uint32_t workers, std::map<uint32_t, WorkerReport> reports,
                std::optional<RunResult> merged)
      : workers_(workers), reports_(std::move(reports)), merged_(std::move(merged)) {}

  // Folds worker `index`'s result into the merge and keeps its report.
  // Returns false, folding nothing, for an index outside the Job (not ours to
  // merge) or one already folded this pass (a result counts once).
  // The merge is exact (RunResult::merge), so any order of folds gives the
  // counts and histograms of merging all results at once.
  bool fold(uint32_t index, CollectedResult collected);

  // Folds in another merge of the same Job's workers (none of them folded
  // here yet). Returns false, changing nothing, when the Jobs differ or a
  // worker is in both.
  bool absorb(WorkerResults other);

  uint32_t workers() const noexcept { return workers_; }
  // By worker index, only the workers whose result was folded.
  const std::map<uint32_t, WorkerReport>& reports() const noexcept { return reports_; }
  // The merge of every folded result; unset before the first.
  const std::optional<RunResult>& merged() const noexcept { return merged_; }

 private:
  uint32_t workers_;
  std::map<uint32_t, WorkerReport> reports_;
  std::optional<RunResult> merged_;
};

}  // namespace kubeload::controller
