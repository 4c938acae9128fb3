#pragma once
// Counts the socket and epoll calls the current thread makes while a counter
// is alive: send(2) and write(2) of a socket, recv(2) and read(2) of a socket
// (OpenSSL's socket BIO reads and writes with read(2) and write(2)) and the
// reads that found nothing (EAGAIN), epoll_ctl(2), epoll_wait(2). The counting definitions live in
// socket_call_counter.cpp, once for the whole test binary: they come before
// libc's and pass every call on to the next definition (libc's, or a
// sanitizer's interceptor).

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
  uint64_t epoll_changes() const;
  uint64_t epoll_waits() const;
};

}  // namespace kubeload::testing
