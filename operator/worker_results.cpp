#include "operator/worker_results.hpp"

#include <nlohmann/json.hpp>

#include "kubeload/json_access.hpp"

namespace kubeload::controller {

using json_access::member;
using json_access::text;

CollectedResult collected_result_from_json(const nlohmann::json& document) {
  CollectedResult collected;
  collected.run = run_result_from_json(document);
  const nlohmann::json& started = member(document, "startedAtMs");
  if (started.is_number_integer() && started.get<int64_t>() > 0) {
    collected.started_at_ms = started.get<int64_t>();
  }
  collected.error = text(member(document, "error"));
  return collected;
}

bool WorkerResults::fold(uint32_t index, CollectedResult collected) {
  if (index >= workers_ || reports_.contains(index)) return false;
  WorkerReport report{collected.run.finished, collected.started_at_ms, std::move(collected.error)};
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
