#pragma once
// Memory for the asynchronous operations of one owner (a connection, the
// open model's arrival timer), reused for each of them: the wrk model's
// "no heap allocation per request" without depending on Asio's per-thread
// cache. Boost 1.74's Asio keeps one freed handler block per thread; a worker
// whose arrival timer is re-armed between a connection's operations outruns
// it, and every arrival reached the heap. (Asio's own answers, bind_allocator
// and recycling_allocator, arrived in Boost 1.79 and 1.80, after Debian's.)
//
// An operation that finds the memory taken (an owner with two operations
// outstanding, e.g. a timer re-armed before its cancelled wait completed) or
// too small gets the heap instead: never wrong, only slower.

#include <array>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace kubeload::loadgen {

class HandlerMemory {
 public:
  HandlerMemory() = default;
  HandlerMemory(const HandlerMemory&) = delete;
  HandlerMemory& operator=(const HandlerMemory&) = delete;

  void* allocate(std::size_t size) {
    if (!in_use_ && size <= storage_.size()) {
      in_use_ = true;
      return storage_.data();
    }
    return ::operator new(size);
  }

  void deallocate(void* pointer) noexcept {
    if (pointer == storage_.data()) {
      in_use_ = false;
    } else {
      ::operator delete(pointer);
    }
  }

 private:
  // Room for a socket operation wrapping a composed write or a TLS operation
  // and its handler: at most 288 bytes in Boost 1.74 (a TLS write, measured).
  alignas(std::max_align_t) std::array<std::byte, 512> storage_{};
  bool in_use_ = false;
};

// The allocator Asio finds on a handler bound with with_memory().
template <typename T>
class HandlerAllocator {
 public:
  using value_type = T;

  explicit HandlerAllocator(HandlerMemory& memory) noexcept : memory_(&memory) {}
  template <typename U>
  HandlerAllocator(const HandlerAllocator<U>& other) noexcept : memory_(other.memory_) {}

  T* allocate(std::size_t n) { return static_cast<T*>(memory_->allocate(sizeof(T) * n)); }
  void deallocate(T* pointer, std::size_t) noexcept { memory_->deallocate(pointer); }

  template <typename U>
  bool operator==(const HandlerAllocator<U>& other) const noexcept {
    return memory_ == other.memory_;
  }

 private:
  template <typename>
  friend class HandlerAllocator;
  HandlerMemory* memory_;
};

template <typename Handler>
class MemoryBoundHandler {
 public:
  using allocator_type = HandlerAllocator<Handler>;

  MemoryBoundHandler(HandlerMemory& memory, Handler handler)
      : memory_(&memory), handler_(std::move(handler)) {}

  allocator_type get_allocator() const noexcept { return allocator_type(*memory_); }

  template <typename... Args>
  void operator()(Args&&... args) {
    handler_(std::forward<Args>(args)...);
  }

 private:
  HandlerMemory* memory_;
  Handler handler_;
};

// `handler`, with its operations' memory taken from `memory`.
template <typename Handler>
MemoryBoundHandler<std::decay_t<Handler>> with_memory(HandlerMemory& memory, Handler&& handler) {
  return MemoryBoundHandler<std::decay_t<Handler>>(memory, std::forward<Handler>(handler));
}

}  // namespace kubeload::loadgen
