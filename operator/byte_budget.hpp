#pragma once
// Memory for the workers' /result answers, shared by every reconcile
// (--worker-result-budget): a call reserves what it holds before it connects
// (its read buffer and the answer's header), trades that for what the answer
// will take once the header says how long it is (WorkerClient::result), and
// gives it back when the answer is digested. With many calls in flight and
// large answers, calls wait for each other instead of the operator being
// OOM-killed; a reservation above the whole budget takes the whole budget, so
// every call can still run, alone. A call waits only while it holds nothing,
// so calls cannot wait for each other in a circle.

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
    // Gives back what it holds, then waits until `bytes` (at most the whole
    // budget) are free and takes them: it never waits while holding any.
    void resize(std::size_t bytes) {
      budget_->give_back(bytes_);
      bytes_ = 0;
      bytes_ = budget_->take(bytes);
    }

   private:
    ByteBudget* budget_;
    std::size_t bytes_;
  };

  // Waits until `bytes` (at most the whole budget) are free, and takes them.
  Lease reserve(std::size_t bytes) { return Lease(*this, take(bytes)); }

  std::size_t total() const { return total_; }
  std::size_t free() const {
    std::lock_guard lock(mutex_);
    return free_;
  }

 private:
  std::size_t take(std::size_t bytes) {
    bytes = bytes < total_ ? bytes : total_;
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [&] { return free_ >= bytes; });
    free_ -= bytes;
    return bytes;
  }
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
