// Connection's HTTP/1.1 transport on io_uring (UringLoop): the same exchange
// as connect_plain/send_plain/receive in connection.cpp, driven by
// completions instead of readiness. Over TLS the ring carries the records
// and OpenSSL reads and writes them in memory (tls_records.hpp); the
// handshake and the reading are connection_tls.cpp's, as on epoll. What the
// response means (parsing, counting, retrying a stale keep-alive
// connection) stays in connection.cpp.

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <span>

#include "loadgen/engine/connection.hpp"

namespace kubeload::loadgen {
namespace {

// A request this small the kernel takes whole at once: HTTP/1.1 sends a
// request only once the answer before it came whole, so nothing of ours is
// unsent on the socket then (that answer acknowledged it), and the socket's
// send buffer is never below this (tcp_wmem's minimum, 4 KiB). A larger one
// (a request body) may wait for the server to read: its completion must
// end the wait (UringLoop::send_request).
constexpr std::size_t kSentAtOnce = 4096;

}  // namespace

void Connection::connect_uring(std::size_t first, int error) {
  const std::vector<tcp::endpoint>& endpoints = worker_.endpoints();
  UringLoop& ring = *worker_.uring_loop();
  for (endpoint_ = first; endpoint_ < endpoints.size(); ++endpoint_) {
    const tcp::endpoint& to = endpoints[endpoint_];
    // Blocking: io_uring waits for the socket itself. On a non-blocking
    // socket an operation issued from its worker threads would end in EAGAIN
    // instead of waiting.
    UniqueFd socket(::socket(to.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket.is_open()) {
      error = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ++generation_;
    connecting_ = true;
    on_ring_ = true;
    // The ring owns the socket from here, in this connection's slot. The
    // address lives in the worker's endpoints for the whole run.
    ring.connect(index_, socket.release(), to.data(), static_cast<socklen_t>(to.size()), owner());
    return;
  }
  fail_later(Outcome::connect, error);
}

void Connection::on_uring_completion(uint32_t generation, const UringLoop::Completion& done) {
  // A completion for a socket since closed (cancelled, or completed before
  // its cancel ran): its connection has moved on.
  if (generation != generation_ || !on_ring_) return;
  switch (done.op) {
    case UringLoop::Op::connect:
      connecting_ = false;
      if (done.result < 0) {
        // Refused: the next address gets a socket of its own.
        close_uring();
        return connect_uring(endpoint_ + 1, -done.result);
      }
      // Armed once for the socket's life: every response arrives through it.
      arm_receive();
      return on_connected();
    case UringLoop::Op::send:
      if (ssl_) return on_tls_records_sent(done);
      sending_ = false;
      // Nothing sent of a request not yet complete would only repeat: an
      // error, as a send(2) that fails.
      if (done.result <= 0) {
        return fail(Outcome::write, system_error(done.result < 0 ? -done.result : EPIPE));
      }
      bytes_out_ += static_cast<uint64_t>(done.result);
      unsent_ += static_cast<std::size_t>(done.result);
      // Short only when the send buffer filled up: the rest follows.
      if (busy_ && unsent_ < slot_.outgoing->wire.size()) send_uring();
      return;
    case UringLoop::Op::receive:
      return on_uring_receive(done);
  }
}

void Connection::send_uring() {
  if (ssl_) return send_tls_uring();
  const std::string& wire = slot_.outgoing->wire;
  sending_ = true;
  UringLoop& ring = *worker_.uring_loop();
  if (unsent_ == 0 && wire.size() <= kSentAtOnce) {
    ring.send_request(index_, wire.data(), wire.size(), owner());
  } else {
    ring.send(index_, wire.data() + unsent_, wire.size() - unsent_, owner());
  }
  // The response may arrive before the send's completion is handled (both
  // come in one batch): the request is answerable from now on.
  read_response();
}

void Connection::arm_receive() {
  receive_armed_ = true;
  worker_.uring_loop()->receive(index_, owner());
}

void Connection::on_uring_receive(const UringLoop::Completion& done) {
  if (!done.more) receive_armed_ = false;
  // No buffer was free: the data waits in the socket, and the buffers of
  // the completions handled meanwhile are back before this one is submitted.
  if (done.result == -ENOBUFS) return arm_receive();
  if (ssl_) return receive_tls_uring(done);
  if (!busy_ || !want_read_) {
    // Between requests: the server closed the kept-alive connection (or
    // sent what nothing asked for). Closed now, the next request connects.
    return close();
  }
  want_read_ = false;
  if (done.result < 0) {
    return on_read(system_error(-done.result), nullptr, 0);
  }
  if (done.result == 0) return on_read(asio::error::eof, nullptr, 0);
  const uint32_t generation = generation_;
  on_read({}, done.data.data(), done.data.size());
  // The multishot receive ended (the kernel may end one, e.g. when its
  // completions overflowed) while the socket lives on: armed again.
  if (generation == generation_ && on_ring_ && !receive_armed_) arm_receive();
}

void Connection::send_tls_uring() {
  const std::string& wire = slot_.outgoing->wire;
  // OpenSSL's writes never wait for room here (they go into tls_records_),
  // so the whole request becomes records at once, a record at a time; they
  // wait only while a renegotiation (TLS 1.2, the server's HelloRequest)
  // needs the server's answer first: then the handshake's records go out
  // and the write is repeated once a receive was read (receive_tls_uring).
  tls_write_waits_ = false;
  while (unsent_ < wire.size()) {
    const int written =
        SSL_write(ssl_.get(), wire.data() + unsent_,
                  static_cast<int>(std::min<std::size_t>(wire.size() - unsent_, INT_MAX)));
    if (written > 0) {
      unsent_ += static_cast<std::size_t>(written);
      tls_records_.wrote_request_bytes(static_cast<std::size_t>(written));
      continue;
    }
    if (SSL_get_error(ssl_.get(), written) == SSL_ERROR_WANT_READ) {
      tls_write_waits_ = true;
      return send_tls_records();
    }
    // Otherwise the connection is broken (an alert arrived).
    ERR_clear_error();
    return fail_later(Outcome::write, EPROTO);
  }
  // Answerable from now on, as on the plain path; and its records go out
  // as a request (send_tls_records).
  read_response();
  send_tls_records();
}

void Connection::send_tls_records() {
  if (!tls_records_.ready_to_send()) return;
  const std::span<const char> records = tls_records_.start_send();
  sending_ = true;
  UringLoop& ring = *worker_.uring_loop();
  // A request's records, or a handshake's flight, are answered through the
  // receive: as a plain request, the send completes with its answer
  // (kSentAtOnce says when the kernel takes it whole at once).
  if ((handshaking_ || want_read_) && records.size() <= kSentAtOnce) {
    ring.send_request(index_, records.data(), records.size(), owner());
  } else {
    ring.send(index_, records.data(), records.size(), owner());
  }
}

void Connection::on_tls_records_sent(const UringLoop::Completion& done) {
  sending_ = false;
  if (done.result <= 0) {
    const int error = done.result < 0 ? -done.result : EPIPE;
    return fail(handshaking_ ? Outcome::connect : Outcome::write, system_error(error));
  }
  tls_records_.sent(static_cast<std::size_t>(done.result));
  if (tls_records_.sending()) {
    // Short only when the send buffer filled up: the rest follows.
    sending_ = true;
    const std::span<const char> rest = tls_records_.unsent();
    worker_.uring_loop()->send(index_, rest.data(), rest.size(), owner());
    return;
  }
  // A request counts as sent once all its records went, as on epoll once
  // OpenSSL's write(2) of them did.
  bytes_out_ += tls_records_.finish_send();
  // What OpenSSL wrote while this send was in flight.
  send_tls_records();
}

void Connection::receive_tls_uring(const UringLoop::Completion& done) {
  if (done.result < 0) {
    if (handshaking_) return fail(Outcome::connect, system_error(-done.result));
    if (tls_write_waits_) return fail(Outcome::write, system_error(-done.result));
    if (!busy_ || !want_read_) return close();
    want_read_ = false;
    return on_read(system_error(-done.result), nullptr, 0);
  }
  const uint32_t generation = generation_;
  if (done.result == 0) {
    tls_records_.received_end();
  } else {
    tls_records_.received(done.data);
  }
  if (handshaking_) continue_handshake();
  // A request waiting for a renegotiation: its write reads the server's
  // answer (or its end) first, as on epoll (on_tls_event), and reading
  // follows once it went.
  if (generation == generation_ && on_ring_ && tls_write_waits_) send_tls_uring();
  // After the handshake, the rest of what arrived with its last flight (a
  // session ticket) is read as any other records are.
  if (generation == generation_ && on_ring_ && !handshaking_ && !tls_write_waits_) {
    receive_tls(done.result == 0);
  }
  if (generation != generation_ || !on_ring_) return;
  // OpenSSL read all it was given (receive_tls reads until then): the
  // ring's buffer goes back after this call.
  tls_records_.forget_received();
  // What reading wrote, if anything (an alert, a TLS 1.2 renegotiation's
  // hello). A key update's answer is not among it: OpenSSL writes that with
  // the next request (HttpsKeyUpdatesAreTakenInAndAnsweredOnEachEngine).
  send_tls_records();
  if (done.result > 0 && !receive_armed_) arm_receive();
}

void Connection::close_uring() noexcept {
  UringLoop& ring = *worker_.uring_loop();
  // What is pending is cancelled by its user_data, then the socket closed
  // from the ring: nothing of the old socket reaches the next one (its
  // generation differs), and no system call is spent on the close.
  try {
    if (connecting_) ring.cancel(UringLoop::Op::connect, owner());
    if (sending_) ring.cancel(UringLoop::Op::send, owner());
    if (receive_armed_) ring.cancel(UringLoop::Op::receive, owner());
  } catch (...) {
    // The submission queue could not take them (the kernel refused a
    // submission): the close below ends what is pending, late, and its
    // completions are stale by then.
  }
  ring.close(index_);
  // The session stays resumable only if the exchange ended cleanly
  // (complete_response). A send still in flight reads tls_records_' buffer
  // until its cancel ran: the buffer is kept (cleared, not freed).
  ssl_.reset();
  handshaking_ = false;
  tls_write_waits_ = false;
  tls_records_.clear();
  on_ring_ = false;
  ++generation_;
  connecting_ = false;
  sending_ = false;
  want_read_ = false;
  receive_armed_ = false;
}

}  // namespace kubeload::loadgen
