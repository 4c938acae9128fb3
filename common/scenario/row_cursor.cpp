#include "common/scenario/row_cursor.hpp"

#include <limits>
#include <stdexcept>

namespace kubeload::scenario {

std::optional<std::string> RunPart::check() const {
  if (workers == 0) return std::string("no workers: a run has at least one");
  if (threads == 0) return std::string("no threads: a worker has at least one");
  if (worker >= workers) {
    return "worker " + std::to_string(worker) + " of " + std::to_string(workers) +
           ": the index counts from 0";
  }
  if (thread >= threads) {
    return "thread " + std::to_string(thread) + " of " + std::to_string(threads) +
           ": the index counts from 0";
  }
  if (workers > std::numeric_limits<std::uint64_t>::max() / threads) {
    return std::to_string(workers) + " workers of " + std::to_string(threads) +
           " threads: more parts than 64 bits count";
  }
  return std::nullopt;
}

namespace {

const RunPart& checked(const RunPart& part) {
  if (auto problem = part.check()) throw std::invalid_argument("unique rows: " + *problem);
  return part;
}

}  // namespace

UniqueRows::UniqueRows(std::uint64_t rows, const RunPart& part, OnExhausted on_exhausted)
    : rows_(rows),
      part_(checked(part).index()),
      parts_(part.count()),
      // g, g + G, ... below N: ceil((N - g) / G) of them when g < N.
      owned_(part_ < rows ? (rows - part_ - 1) / parts_ + 1 : 0),
      on_exhausted_(on_exhausted) {}

std::optional<std::uint64_t> UniqueRows::next() {
  if (on_exhausted_ == OnExhausted::recycle) {
    if (owned_ == 0) {
      if (rows_ == 0) return std::nullopt;
      return part_ % rows_;
    }
    if (taken_ == owned_) taken_ = 0;
  }
  if (taken_ == owned_) return std::nullopt;
  // taken_ < owned_, so part_ + taken_ * parts_ < rows_: no overflow.
  return part_ + taken_++ * parts_;
}

}  // namespace kubeload::scenario
