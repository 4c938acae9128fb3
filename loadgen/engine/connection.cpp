#include "loadgen/engine/connection.hpp"

#include <algorithm>
#include <cstring>
#include <span>
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

int64_t micros_between(Clock::time_point from, Clock::time_point to) noexcept {
  return std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::microseconds>(to - from).count());
}

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

Connection::Connection(ConnectionOwner& worker, asio::io_context& io, uint32_t index,
                       LaneSession* h2)
    : worker_(worker),
      io_(io),
      index_(index),
      // On io_uring the kernel reads into the ring's buffers.
      read_buffer_(h2 == nullptr && worker.plan().engine != Engine::io_uring
                       ? std::make_unique_for_overwrite<char[]>(kReadBufferSize)
                       : nullptr),
      operation_memory_(h2 == nullptr && worker.tls() != nullptr ? std::make_unique<HandlerMemory>()
                                                                 : nullptr),
      host_is_ip_(is_ip_literal(worker.plan().target.host)),
      h2_(h2) {}

bool Connection::is_open() const noexcept {
  return h2_ != nullptr ? h2_->is_open() : socket_open();
}

bool Connection::socket_open() const noexcept {
  return tls_ ? tls_->next_layer().is_open() : plain_.is_open() || on_ring_;
}

Socket& Connection::socket() noexcept {
  return tls_->next_layer();
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
  // already left out): the first that accepts is used. Plain connections are
  // those the worker runs on its own loop.
  if (worker_.uring_loop() != nullptr) return connect_uring(0, ECONNREFUSED);
  if (worker_.event_loop() != nullptr) return connect_plain(0, ECONNREFUSED);
  // A TLS stream cannot be reused after its connection closed; no operation
  // is pending here, so replacing it is safe.
  tls_ = std::make_unique<asio::ssl::stream<Socket>>(io_, *worker_.tls());
  configure_tls_connection(tls_->native_handle(), worker_.plan().target, host_is_ip_,
                           worker_.plan().tls, &tls_session_);
  // A span, not the vector: the operation copies its range, and a copy of
  // the vector would be an allocation per connection.
  asio::async_connect(
      socket(), std::span<const tcp::endpoint>(worker_.endpoints()),
      [this](const boost::system::error_code& ec, const tcp::endpoint&) { on_connected(ec); });
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
    if (const int e =
            worker_.event_loop()->modify(plain_.get(), EPOLLIN | EPOLLRDHUP | EPOLLET, owner())) {
      return fail(Outcome::connect, boost::system::error_code(e, boost::system::system_category()));
    }
    return on_connected({});
  }
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

void Connection::on_connected(const boost::system::error_code& ec) {
  if (ec) return fail(Outcome::connect, ec);
  if (tls_) {
    boost::system::error_code ignored;
    socket().set_option(tcp::no_delay(true), ignored);
    // write_request sends on the socket directly: it must never block.
    socket().non_blocking(true, ignored);
  }  // a plain socket has TCP_NODELAY from before its connect
  counted_open_ = true;
  worker_.on_connection_opened();
  if (!tls_) {
    const Clock::time_point now = Clock::now();
    timings_.connect_us = micros_between(connect_started_, now);
    return write_request(now);
  }
  tls_->async_handshake(asio::ssl::stream_base::client,
                        [this](const boost::system::error_code& handshake_error) {
                          if (handshake_error) {
                            // Not offered again: the next connection
                            // starts afresh (configure_tls_connection).
                            tls_session_.reset();
                            return fail(Outcome::connect, handshake_error);
                          }
                          tls_handshake_ = true;
                          tls_resumed_ = SSL_session_reused(tls_->native_handle()) == 1;
                          const Clock::time_point now = Clock::now();
                          timings_.connect_us = micros_between(connect_started_, now);
                          write_request(now);
                        });
}

void Connection::write_request(Clock::time_point now) {
  // The caller's clock, read just before the request leaves, not when the
  // completion handler runs: the handler may run later than the server starts
  // working, and Waiting must never come out shorter than the server's own
  // time. A request is one send, so the two coincide but for that delay.
  written_at_ = now;
  if (worker_.uring_loop() != nullptr) {
    unsent_ = 0;
    return send_uring();
  }
  if (!tls_) return send_plain(0);
  const std::string& wire = slot_.outgoing->wire;
  asio::async_write(*tls_, asio::buffer(wire),
                    with_memory(*operation_memory_,
                                [this](const boost::system::error_code& ec, std::size_t bytes) {
                                  bytes_out_ += bytes;
                                  if (ec) return fail(Outcome::write, ec);
                                  read_response();
                                }));
}

// A request fits the socket's send buffer nearly always: one send(2), as wrk
// does. What does not fit waits for room (EPOLLOUT, asked for only then).
void Connection::send_plain(std::size_t offset) {
  const std::string& wire = slot_.outgoing->wire;
  EventLoop& loop = *worker_.event_loop();
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
    if (!sending_) {
      sending_ = true;
      if (const int e =
              loop.modify(plain_.get(), EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, owner())) {
        return fail_later(Outcome::write, e);
      }
    }
    return;
  }
  if (sending_) {
    sending_ = false;
    if (const int e = loop.modify(plain_.get(), EPOLLIN | EPOLLRDHUP | EPOLLET, owner())) {
      return fail_later(Outcome::write, e);
    }
  }
  read_response();
}

void Connection::read_response() {
  if (!tls_) {
    // The response's readiness event calls receive(), which reads on while
    // a read fills the buffer (on io_uring: the socket's multishot receive
    // completes with it, on_uring_receive()).
    want_read_ = true;
    return;
  }
  tls_->async_read_some(asio::buffer(read_buffer_.get(), kReadBufferSize),
                        with_memory(*operation_memory_,
                                    [this](const boost::system::error_code& ec, std::size_t bytes) {
                                      on_read(ec, read_buffer_.get(), bytes);
                                    }));
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
      return on_read(boost::system::error_code(errno, boost::system::system_category()), nullptr,
                     0);
    }
    if (received == 0) return on_read(asio::error::eof, nullptr, 0);
    on_read({}, read_buffer_.get(), static_cast<std::size_t>(received));
    // A short read took all the data there was: what comes next is a new event.
    if (static_cast<std::size_t>(received) < kReadBufferSize && !peer_closed) return;
  }
}

void Connection::fail_later(Outcome outcome, int error) {
  close();
  post([this, outcome, error] {
    fail(outcome, boost::system::error_code(error, boost::system::system_category()));
  });
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
    if (tls_) SSL_set_shutdown(tls_->native_handle(), SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
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
  busy_ = false;
  worker_.on_complete(*this, slot_, done);
}

Clock::time_point Connection::enforce_deadline(Clock::time_point now) noexcept {
  if (!busy_ || timed_out_) return Clock::time_point::max();
  if (now < deadline_) return deadline_;
  timed_out_ = true;
  if (h2_ != nullptr) {
    h2_->abandon(*this);
  } else if (tls_) {
    // Closing completes the pending operation with operation_aborted; its
    // handler then reports the timeout.
    close();
  } else {
    // A plain socket: on epoll nothing is pending; on io_uring closing
    // cancels what is, and the stale completions are dropped.
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
  if (tls_) {
    boost::system::error_code ignored;
    socket().close(ignored);
  } else if (worker_.uring_loop() != nullptr) {
    close_uring();
  } else {
    plain_.reset();
    ++generation_;
    connecting_ = false;
    sending_ = false;
    events_while_sending_ = 0;
    want_read_ = false;
  }
  if (counted_open_) {
    counted_open_ = false;
    worker_.on_connection_closed();
  }
}

}  // namespace kubeload::loadgen
