#pragma once
// Counts heap allocations made by the current thread while a counter is alive.
// The counting operator new lives in allocation_counter.cpp, once for the
// whole test binary.

#include <cstdint>

namespace kubeload::testing {

class AllocationCounter {
 public:
  AllocationCounter();
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;
  uint64_t count() const;
};

}  // namespace kubeload::testing
