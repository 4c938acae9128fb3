#pragma once
// Memory for the workers' /result answers, shared by every reconcile
// (--worker-result-budget): a call reserves what its answer may take (twice
// the spec's byte limit: the body and the document parsed from it) before it
// connects, and gives it back when the answer is digested. With many calls in
// flight and large specs, calls wait for each other instead of the operator
// being OOM-killed; a reservation above the whole budget takes the whole
// budget, so every call can still run, alone.

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace kubeload::controller {

class ByteBudget {
 public:
  explicit ByteBudget(std::size_t total) : total_(total), free_(total) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // Holds its bytes until it goes out of scope.
  class Lease {
   public:
    Lease(ByteBudget& budget, std::size_t bytes) : budget_(&budget), bytes_(bytes) {}
    Lease(Lease&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) {
      other.budget_ = nullptr;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (budget_ != nullptr) budget_->give_back(bytes_);
    }
    std::size_t bytes() const { return bytes_; }

   private:
    ByteBudget* budget_;
    std::size_t bytes_;
  };

  // Waits until `bytes` (at most the whole budget) are free, and takes them.
  Lease reserve(std::size_t bytes) {
    bytes = bytes < total_ ? bytes : total_;
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [&] { return free_ >= bytes; });
    free_ -= bytes;
    return Lease(*this, bytes);
  }

  std::size_t total() const { return total_; }
  std::size_t free() const {
    std::lock_guard lock(mutex_);
    return free_;
  }

 private:
  void give_back(std::size_t bytes) {
    {
      std::lock_guard lock(mutex_);
      free_ += bytes;
    }
    freed_.notify_all();
  }

  const std::size_t total_;
  std::size_t free_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
};

}  // namespace kubeload::controller
