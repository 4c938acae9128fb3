// H2Session's socket on io_uring (UringLoop), for h2c on the io_uring
// engine: the same connection as the Asio path in h2_session.cpp, driven by
// completions. What the bytes mean (nghttp2, the lanes, GOAWAY, timeouts)
// stays in h2_session.cpp.
//
// A socket is named by the session's slot and its generation, as a plain
// HTTP/1.1 connection's is (connection_uring.cpp): a completion for a
// socket since closed is dropped here, so unlike the Asio path a closed
// connection waits for nothing before the next one connects.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>

#include "loadgen/engine/h2_session.hpp"

namespace kubeload::loadgen {

void H2Session::connect_uring(std::size_t first) {
  const std::vector<tcp::endpoint>& endpoints = worker_.endpoints();
  for (endpoint_ = first; endpoint_ < endpoints.size(); ++endpoint_) {
    const tcp::endpoint& to = endpoints[endpoint_];
    // Blocking: io_uring waits for the socket itself.
    UniqueFd socket(::socket(to.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket.is_open()) continue;
    // Frames of many streams go out as they are ready: never held back for
    // an acknowledgement (Nagle) when a small one follows a large one.
    const int one = 1;
    ::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ++generation_;
    connecting_ = true;
    on_ring_ = true;
    // The ring owns the socket from here; the address lives in the
    // worker's endpoints for the whole run.
    ring_->connect(index_, socket.release(), to.data(), static_cast<socklen_t>(to.size()), owner());
    return;
  }
  // No address took a socket: the lanes fail from the loop, not inside the
  // start() that asked for this connection (whose caller may start another).
  const uint32_t attempt = ++generation_;
  ring_->post([this, attempt] {
    if (generation_ == attempt && state_ == State::connecting) fail_all(Outcome::connect, true);
  });
}

void H2Session::on_uring_completion(uint32_t generation, const UringLoop::Completion& done) {
  // A completion for a socket since closed (cancelled, or completed before
  // its cancel ran): the session has moved on.
  if (generation != generation_ || !on_ring_) return;
  switch (done.op) {
    case UringLoop::Op::connect:
      connecting_ = false;
      if (done.result < 0) {
        // Refused: the next address gets a socket of its own; none left,
        // the lanes waiting for this connection fail to connect.
        close_uring();
        if (endpoint_ + 1 < worker_.endpoints().size()) {
          return connect_uring(endpoint_ + 1);
        }
        return fail_all(Outcome::connect, true);
      }
      return connected();
    case UringLoop::Op::send:
      return on_uring_sent(done.result);
    case UringLoop::Op::receive:
      return on_uring_receive(done);
  }
}

void H2Session::send_uring() {
  // out_ stays as it is until the send completes (flush() adds nothing
  // while writing_): the kernel reads it when the socket has room.
  sent_ = 0;
  ring_->send(index_, reinterpret_cast<const char*>(out_.data()), out_.size(), owner());
}

void H2Session::on_uring_sent(int result) {
  // Nothing sent of a batch not yet complete would only repeat: an error,
  // as a send(2) that fails.
  if (result <= 0) {
    writing_ = false;
    return fail_all(goaway_received_ ? Outcome::goaway : Outcome::write, false);
  }
  sent_ += static_cast<std::size_t>(result);
  if (sent_ < out_.size()) {
    // Short only when the send buffer filled up: the rest follows.
    ring_->send(index_, reinterpret_cast<const char*>(out_.data() + sent_), out_.size() - sent_,
                owner());
    return;
  }
  writing_ = false;
  out_.clear();
  sent_ = 0;
  flush();
}

void H2Session::read_uring() {
  // Armed once per socket: every arrival comes through it.
  if (receive_armed_) return;
  receive_armed_ = true;
  ring_->receive(index_, owner());
}

void H2Session::on_uring_receive(const UringLoop::Completion& done) {
  if (!done.more) receive_armed_ = false;
  if (state_ != State::open) return;
  // No buffer was free: the data waits in the socket, and the buffers of
  // the completions handled meanwhile are back before this one is
  // submitted.
  if (done.result == -ENOBUFS) return read_uring();
  // The peer's close, or the connection failed.
  if (done.result <= 0) return fail_all(lost_outcome(), false);
  // nghttp2 reads the ring's buffer in place; it goes back to the ring
  // after this call.
  if (receive(reinterpret_cast<const uint8_t*>(done.data.data()), done.data.size())) {
    after_receive();  // flushes, and arms the receive again if it ended
  }
}

void H2Session::close_uring() noexcept {
  if (!on_ring_) return;
  // What is pending is cancelled by its user_data, then the socket closed
  // from the ring; their completions carry the old generation.
  try {
    if (connecting_) ring_->cancel(UringLoop::Op::connect, owner());
    if (writing_) ring_->cancel(UringLoop::Op::send, owner());
    if (receive_armed_) ring_->cancel(UringLoop::Op::receive, owner());
  } catch (...) {
    // The submission queue could not take them: the close ends them, late.
  }
  ring_->close(index_);
  on_ring_ = false;
  ++generation_;
  connecting_ = false;
  receive_armed_ = false;
  // A cancelled send reads out_ no more once its cancel was submitted,
  // which is before the next connection's connect completes, the earliest
  // that flush() writes into it again.
  out_.clear();
  sent_ = 0;
}

}  // namespace kubeload::loadgen
