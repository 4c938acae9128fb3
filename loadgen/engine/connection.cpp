#include "loadgen/engine/connection.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <cerrno>
#include <utility>

#include "kubeload/text.hpp"

namespace kubeload::loadgen {
namespace {

// The value of the Server header, if the header section starts in `head`.
std::string server_header(std::string_view head) {
  constexpr std::string_view kName = "\nserver:";
  const auto header_end = head.find("\r\n\r\n");
  if (header_end != std::string_view::npos) head = head.substr(0, header_end + 2);
  for (size_t i = 0; i + kName.size() <= head.size(); ++i) {
    bool match = true;
    for (size_t j = 0; j < kName.size() && match; ++j) {
      match = ascii_lower(head[i + j]) == kName[j];
    }
    if (!match) continue;
    size_t start = i + kName.size();
    const size_t end = head.find_first_of("\r\n", start);
    if (end == std::string_view::npos) return {};
    while (start < end && (head[start] == ' ' || head[start] == '\t')) ++start;
    return std::string(head.substr(start, end - start));
  }
  return {};
}

}  // namespace

Connection::Connection(ConnectionOwner& worker, uint32_t index, LaneSession* h2)
    : worker_(worker),
      index_(index),
      // On io_uring the kernel reads into the ring's buffers; over TLS
      // OpenSSL decrypts from there into this one.
      read_buffer_(h2 == nullptr &&
                           (worker.plan().engine != Engine::io_uring || worker.plan().target.tls())
                       ? std::make_unique_for_overwrite<char[]>(kReadBufferSize)
                       : nullptr),
      host_is_ip_(is_ip_literal(worker.plan().target.host)),
      h2_(h2) {}

bool Connection::is_open() const noexcept {
  return h2_ != nullptr ? h2_->is_open() : socket_open();
}

bool Connection::socket_open() const noexcept {
  return plain_.is_open() || on_ring_;
}

void Connection::start(const RequestSlot& slot, Clock::time_point now) {
  busy_ = true;
  timed_out_ = false;
  slot_ = slot;
  timings_ = {};
  bytes_in_ = 0;
  bytes_out_ = 0;
  new_connection_ = false;
  retried_ = false;
  tls_handshake_ = false;
  tls_resumed_ = false;
  tls_kernel_send_ = false;
  tls_kernel_receive_ = false;
  deadline_ = now + worker_.plan().timeout;
  if (h2_ != nullptr) {
    stream_ = {};
    return h2_->start(*this);
  }
  parser_.reset(slot.outgoing->head);
  if (socket_open()) {
    write_request(now);
  } else {
    connect();
  }
}

void Connection::connect() {
  new_connection_ = true;
  connect_started_ = Clock::now();
  // The addresses in order, as resolved (those that refused before the run
  // already left out): the first that accepts is used.
  if (worker_.uring_loop() != nullptr) return connect_uring(0, ECONNREFUSED);
  connect_plain(0, ECONNREFUSED);
}

void Connection::connect_plain(std::size_t first, int error) {
  const std::vector<tcp::endpoint>& endpoints = worker_.endpoints();
  EventLoop& loop = *worker_.event_loop();
  for (endpoint_ = first; endpoint_ < endpoints.size(); ++endpoint_) {
    const tcp::endpoint& to = endpoints[endpoint_];
    plain_.reset(::socket(to.protocol().family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!plain_.is_open()) {
      error = errno;
      continue;
    }
    // Before connecting: the option holds for the connection it makes.
    const int one = 1;
    ::setsockopt(plain_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(plain_.get(), to.data(), static_cast<socklen_t>(to.size())) != 0 &&
        errno != EINPROGRESS) {
      error = errno;
      continue;
    }
    // Done or not, the socket's first event says how it went.
    ++generation_;
    error = loop.add(plain_.get(), EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, owner());
    if (error != 0) continue;
    writable_wanted_ = true;
    connecting_ = true;
    return;
  }
  plain_.reset();
  fail_later(Outcome::connect, error);
}

void Connection::on_socket_event(uint32_t generation, uint32_t events) {
  if (generation != generation_ || !plain_.is_open()) return;  // for a socket since closed
  if (connecting_) {
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(plain_.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    if (error == 0 && (events & EPOLLOUT) == 0) return;  // still connecting
    connecting_ = false;
    if (error != 0) return connect_plain(endpoint_ + 1, error);
    // From now on readable only: room to write is asked for when a request
    // does not fit (not on every ACK).
    if (const int e = want_writable(false)) return fail(Outcome::connect, system_error(e));
    return on_connected();
  }
  if (ssl_) return on_tls_event(events);
  if (sending_) {
    // What arrives while the request goes out (an early answer, the peer's
    // close) is read once it went: its event comes only once.
    events_while_sending_ |= events;
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == 0) return;
    send_plain(unsent_);
    if (sending_ || generation != generation_ || !plain_.is_open()) return;
    events = std::exchange(events_while_sending_, 0);
  }
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) != 0) receive(events);
}

void Connection::on_connected() {
  counted_open_ = true;
  worker_.on_connection_opened();
  if (worker_.tls() != nullptr) return start_tls();
  const Clock::time_point now = Clock::now();
  timings_.connect_us = micros_between(connect_started_, now);
  write_request(now);
}

void Connection::write_request(Clock::time_point now) {
  // The caller's clock, read just before the request leaves, not when the
  // completion handler runs: the handler may run later than the server starts
  // working, and Waiting must never come out shorter than the server's own
  // time. A request is one send, so the two coincide but for that delay.
  written_at_ = now;
  unsent_ = 0;
  if (worker_.uring_loop() != nullptr) return send_uring();
  if (ssl_) return send_tls();
  send_plain(0);
}

// A request fits the socket's send buffer nearly always: one send(2), as wrk
// does. What does not fit waits for room (EPOLLOUT, asked for only then).
void Connection::send_plain(std::size_t offset) {
  const std::string& wire = slot_.outgoing->wire;
  while (offset < wire.size()) {
    const ssize_t sent =
        ::send(plain_.get(), wire.data() + offset, wire.size() - offset, MSG_NOSIGNAL);
    if (sent >= 0) {
      offset += static_cast<std::size_t>(sent);
      bytes_out_ += static_cast<uint64_t>(sent);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return fail_later(Outcome::write, errno);
    unsent_ = offset;
    return wait_to_send(true);
  }
  request_sent();
}

void Connection::wait_to_send(bool writable) {
  sending_ = true;
  if (const int e = want_writable(writable)) fail_later(Outcome::write, e);
}

void Connection::request_sent() {
  if (sending_) {
    sending_ = false;
    if (const int e = want_writable(false)) return fail_later(Outcome::write, e);
  }
  read_response();
}

void Connection::read_response() {
  // The response's readiness event calls receive() (receive_tls()), which
  // reads on while there is more; on io_uring the socket's multishot
  // receive completes with it (on_uring_receive()).
  want_read_ = true;
}

void Connection::receive(uint32_t events) {
  // The event's flags are the socket's state when it was fetched: a peer
  // that had closed by then gets no event of its own for it, so the socket
  // is read to the end of the stream. Anything that arrives after the fetch
  // is a new event.
  const bool peer_closed = (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
  // A response that completes may close this socket and its next request
  // open another: that one's events are its own.
  const uint32_t generation = generation_;
  while (plain_.is_open() && generation == generation_) {
    const ssize_t received = ::recv(plain_.get(), read_buffer_.get(), kReadBufferSize, 0);
    if (received < 0 && errno == EINTR) continue;
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (!busy_ || !want_read_) {
      // Between requests: the server closed the kept-alive connection (or
      // sent what nothing asked for). Closed now, the next request connects.
      return close();
    }
    want_read_ = false;
    if (received < 0) {
      return on_read(system_error(errno), nullptr, 0);
    }
    if (received == 0) return on_read(asio::error::eof, nullptr, 0);
    on_read({}, read_buffer_.get(), static_cast<std::size_t>(received));
    // A short read took all the data there was: what comes next is a new event.
    if (static_cast<std::size_t>(received) < kReadBufferSize && !peer_closed) return;
  }
}

void Connection::fail_later(Outcome outcome, int error) {
  close();
  post([this, outcome, error] { fail(outcome, system_error(error)); });
}

void Connection::post(std::function<void()> callback) {
  if (UringLoop* ring = worker_.uring_loop()) return ring->post(std::move(callback));
  worker_.event_loop()->post(std::move(callback));
}

void Connection::on_read(const boost::system::error_code& ec, const char* data, std::size_t bytes) {
  if (timed_out_) return fail(Outcome::timeout, ec);
  if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
    parser_.finish_eof();
    if (parser_.status() == Http1ResponseParser::Status::complete) {
      return complete_response(false, Clock::now());
    }
    return fail(Outcome::read, ec);
  }
  if (ec) return fail(Outcome::read, ec);

  // One clock reading per read: the first byte's time, and the last byte's
  // when this read completes the response.
  const Clock::time_point now = Clock::now();
  if (bytes_in_ == 0) {
    first_byte_at_ = now;
    if (worker_.first_response_needed()) first_server_ = server_header({data, bytes});
  }
  bytes_in_ += bytes;
  const std::size_t consumed = parser_.feed(data, bytes);
  switch (parser_.status()) {
    case Http1ResponseParser::Status::need_more:
      return read_response();
    case Http1ResponseParser::Status::error:
      return fail(Outcome::read, {});
    case Http1ResponseParser::Status::complete:
      // Bytes after a complete response cannot belong to a request we sent:
      // the connection is out of step with the server and must not be reused.
      return complete_response(consumed < bytes, now);
  }
}

Outcome Connection::judge(int status, uint64_t body_bytes) const noexcept {
  const RequestTemplate& request = *slot_.outgoing;
  if (!request.is_success_status(status)) return Outcome::status;
  if (request.expected_length && body_bytes != *request.expected_length) return Outcome::length;
  return Outcome::success;
}

void Connection::end_stream(Outcome outcome) {
  if (timed_out_) outcome = Outcome::timeout;
  const bool complete = outcome == Outcome::success && stream_.complete;
  if (complete) {
    outcome = judge(stream_.status, stream_.body_bytes);
    if (first_server_) {
      worker_.on_first_response(std::move(*first_server_), stream_.body_bytes);
      first_server_.reset();
    }
  }
  finish(outcome, complete, Clock::now());
}

void Connection::complete_response(bool must_close, Clock::time_point now) {
  const Outcome outcome = judge(parser_.status_code(), parser_.body_bytes());
  // io_uring: the server answered before the request's send completed (an
  // early error); the next request must not follow a send still pending.
  if (sending_) must_close = true;
  if (must_close || !parser_.keep_alive() || !worker_.plan().keep_alive) {
    // The exchange ended cleanly: without this, freeing the TLS stream marks
    // its session as not resumable (OpenSSL's rule for a connection that
    // may have been cut), and the next connection pays a full handshake.
    // No close_notify is sent, as the socket is closed right away.
    if (ssl_) SSL_set_shutdown(ssl_.get(), SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    close();
  }
  if (first_server_) {
    worker_.on_first_response(std::move(*first_server_), parser_.body_bytes());
    first_server_.reset();
  }
  finish(outcome, true, now);
}

void Connection::fail(Outcome outcome, const boost::system::error_code&) {
  if (timed_out_) outcome = Outcome::timeout;
  close();
  // A server may close an idle keep-alive connection just as we reuse it.
  // Nothing of a response arrived, so the request is sent again once on a
  // fresh connection, as HTTP clients do (RFC 9112 section 9.3.1).
  const bool stale_keep_alive =
      !new_connection_ && bytes_in_ == 0 && (outcome == Outcome::read || outcome == Outcome::write);
  if (stale_keep_alive && !retried_ && may_resend()) {
    retried_ = true;
    parser_.reset(slot_.outgoing->head);
    return connect();
  }
  finish(outcome, false, Clock::now());
}

// RFC 9110 section 9.2.2: only an idempotent request may be sent again
// without the user's say-so; the server may have acted on the first one.
bool Connection::may_resend() const noexcept {
  return worker_.plan().retry_non_idempotent || is_idempotent_method(slot_.outgoing->method);
}

void Connection::finish(Outcome outcome, bool response_complete, Clock::time_point now) {
  Completion done;
  done.outcome = outcome;
  done.ended_at = now;
  done.response_complete = response_complete;
  const int status = h2_ != nullptr ? stream_.status : parser_.status_code();
  done.status = response_complete ? status : 0;
  done.timings = timings_;
  done.timings.total_us = micros_between(slot_.intended, now);
  if (bytes_in_ > 0) done.timings.waiting_us = micros_between(written_at_, first_byte_at_);
  done.bytes_in = bytes_in_;
  const uint64_t body_bytes = h2_ != nullptr ? stream_.body_bytes : parser_.body_bytes();
  done.body_bytes_in = response_complete ? body_bytes : 0;
  done.bytes_out = bytes_out_;
  done.new_connection = new_connection_;
  done.retried = retried_;
  done.tls_handshake = tls_handshake_;
  done.tls_resumed = tls_resumed_;
  done.tls_kernel_send = tls_kernel_send_;
  done.tls_kernel_receive = tls_kernel_receive_;
  busy_ = false;
  worker_.on_complete(*this, slot_, done);
}

Clock::time_point Connection::enforce_deadline(Clock::time_point now) noexcept {
  if (!busy_ || timed_out_) return Clock::time_point::max();
  if (now < deadline_) return deadline_;
  timed_out_ = true;
  if (h2_ != nullptr) {
    h2_->abandon(*this);
  } else {
    // On epoll nothing is pending; on io_uring closing cancels what is, and
    // the stale completions are dropped.
    fail_later(Outcome::timeout, ETIMEDOUT);
  }
  return Clock::time_point::max();
}

void Connection::clamp_deadline(Clock::time_point latest) noexcept {
  deadline_ = std::min(deadline_, latest);
}

void Connection::capture_responses(std::size_t max_body) {
  capture_ = std::make_unique<Http1ResponseParser::Capture>();
  capture_->max_body = max_body;
  parser_.set_capture(capture_.get());
}

void Connection::close() noexcept {
  if (h2_ != nullptr) return h2_->close();
  if (!socket_open()) return;
  if (worker_.uring_loop() != nullptr) {
    close_uring();
  } else {
    // The session stays resumable only if the exchange ended cleanly
    // (complete_response); SSL_free leaves the socket to plain_.
    ssl_.reset();
    handshaking_ = false;
    plain_.reset();
    ++generation_;
    connecting_ = false;
    sending_ = false;
    writable_wanted_ = false;
    events_while_sending_ = 0;
    want_read_ = false;
  }
  if (counted_open_) {
    counted_open_ = false;
    worker_.on_connection_closed();
  }
}

}  // namespace kubeload::loadgen
