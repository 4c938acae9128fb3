#pragma once
// Counts the send(2) and recv(2) calls the current thread makes while a
// counter is alive, and the reads that found nothing (EAGAIN). The counting
// send and recv live in socket_call_counter.cpp, once for the whole test
// binary: its own definitions come before libc's and pass every call on to
// the next definition (libc's, or a sanitizer's interceptor).

#include <cstdint>

namespace kubeload::testing {

class SocketCallCounter {
 public:
  SocketCallCounter();
  ~SocketCallCounter();
  SocketCallCounter(const SocketCallCounter&) = delete;
  SocketCallCounter& operator=(const SocketCallCounter&) = delete;
  uint64_t sends() const;
  uint64_t receives() const;
  uint64_t receives_that_found_nothing() const;
};

}  // namespace kubeload::testing
