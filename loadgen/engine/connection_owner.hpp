#pragma once
// What a connection and an HTTP/2 session need of the worker that owns them:
// its plan, where and how to connect, its event loop (epoll or io_uring), and where each outcome
// goes. Worker (worker.hpp) is the one implementation; connection.cpp and
// h2_session.cpp see only this.

#include <cstdint>
#include <string>
#include <vector>

#include "loadgen/engine/asio.hpp"
#include "loadgen/engine/event_loop.hpp"
#include "loadgen/engine/plan.hpp"
#include "loadgen/engine/request_slot.hpp"
#include "loadgen/engine/uring_loop.hpp"

namespace kubeload::loadgen {

class Connection;

class ConnectionOwner {
 public:
  virtual const RunPlan& plan() const noexcept = 0;
  virtual const std::vector<tcp::endpoint>& endpoints() const noexcept = 0;
  virtual asio::ssl::context* tls() const noexcept = 0;
  // HTTP/1.1 on epoll (plain or over TLS): the worker's own event loop;
  // null otherwise (HTTP/2 over TLS, and h2c off io_uring, run on the
  // io_context).
  virtual EventLoop* event_loop() const noexcept = 0;
  // Plain HTTP/1.1 and h2c on the io_uring engine: the worker's ring (then
  // event_loop() is null); null otherwise.
  virtual UringLoop* uring_loop() const noexcept = 0;
  virtual void on_complete(Connection& connection, const RequestSlot& slot,
                           const Completion& done) = 0;
  virtual void on_first_response(std::string server, uint64_t body_length) = 0;
  virtual bool first_response_needed() const noexcept = 0;
  virtual void on_connection_opened() noexcept = 0;
  virtual void on_connection_closed() noexcept = 0;
  // HTTP/1.1 over TLS on epoll: whether new connections may hand their
  // records to the kernel (kTLS, connection_tls.cpp); no longer once a
  // server asked one of them for a renegotiation, which the kernel cannot
  // make.
  virtual bool kernel_tls_allowed() const noexcept = 0;
  virtual void refuse_kernel_tls() noexcept = 0;

 protected:
  ~ConnectionOwner() = default;
};

}  // namespace kubeload::loadgen
