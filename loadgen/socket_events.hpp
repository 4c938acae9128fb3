#pragma once
// The readiness events of a worker's plain HTTP/1.1 sockets, from an epoll
// set of the worker's own, as wrk's loop has them: a socket is added once
// when it connects and read when it is ready, so a response costs one
// recv(2). Through Boost 1.74's reactor it cost two: the reactor tries a read
// as soon as a read is asked for (it finds nothing right after the request
// went out), or re-arms the socket with epoll_ctl(2) for a wait. The set is
// waited on through the io_context as one descriptor, so timers, TLS and
// HTTP/2 stay on Asio and one thread runs both.

#include <sys/epoll.h>

#include <array>
#include <cstdint>
#include <functional>

#include "loadgen/asio.hpp"
#include "loadgen/handler_memory.hpp"

namespace kubeload::loadgen {

// Who a socket's events go to: a connection's index and the generation of its
// socket, so an event fetched before a socket was closed never reaches the
// connection's next socket.
struct SocketOwner {
  uint32_t index = 0;
  uint32_t generation = 0;
};

// A socket of our own (not Asio's): closed when replaced or destroyed.
class UniqueSocket {
 public:
  UniqueSocket() = default;
  UniqueSocket(const UniqueSocket&) = delete;
  UniqueSocket& operator=(const UniqueSocket&) = delete;
  ~UniqueSocket() { reset(); }
  int get() const noexcept { return fd_; }
  bool is_open() const noexcept { return fd_ >= 0; }
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

class SocketEvents {
 public:
  // `deliver(owner, events)` runs on the io_context's thread for each event.
  using Deliver = std::function<void(SocketOwner owner, uint32_t events)>;
  SocketEvents(asio::io_context& io, Deliver deliver);
  SocketEvents(const SocketEvents&) = delete;
  SocketEvents& operator=(const SocketEvents&) = delete;

  // Each returns 0 or the errno of epoll_ctl(2). A closed socket leaves the
  // set by itself.
  int add(int socket, uint32_t events, SocketOwner owner) noexcept;
  int modify(int socket, uint32_t events, SocketOwner owner) noexcept;
  // Waiting keeps the io_context running; stop() lets it end.
  void start();
  void stop() noexcept;

 private:
  void wait();
  void dispatch();

  asio::posix::stream_descriptor set_;
  Deliver deliver_;
  HandlerMemory wait_memory_;
  std::array<epoll_event, 256> events_{};
  bool waiting_ = false;
};

}  // namespace kubeload::loadgen
