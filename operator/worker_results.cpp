#include "operator/worker_results.hpp"

#include "kubeload/api/worker_protocol.hpp"

namespace kubeload::controller {

CollectedResult collected_result_from_json(const nlohmann::json& document) {
  api::ResultDocument read = api::result_document_from_json(document);
  return CollectedResult{std::move(read.run), read.head.started_at_ms, std::move(read.head.error),
                         read.head.clock_ms, read.head.cpu};
}

bool WorkerResults::fold(uint32_t index, CollectedResult collected) {
  if (index >= workers_ || reports_.contains(index)) return false;
  WorkerReport report{collected.run.finished, collected.started_at_ms, std::move(collected.error),
                      collected.cpu};
  if (merged_) {
    merged_->merge(collected.run);
  } else {
    merged_ = std::move(collected.run);
  }
  reports_.emplace(index, std::move(report));
  return true;
}

bool WorkerResults::absorb(WorkerResults other) {
  if (other.workers_ != workers_) return false;
  for (const auto& [index, report] : other.reports_) {
    if (reports_.contains(index)) return false;
  }
  if (other.merged_) {
    if (merged_) {
      merged_->merge(*other.merged_);
    } else {
      merged_ = std::move(other.merged_);
    }
  }
  reports_.merge(other.reports_);
  return true;
}

}  // namespace kubeload::controller
