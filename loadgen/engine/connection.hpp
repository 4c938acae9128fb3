#pragma once
// One client connection: connects (TCP, optionally TLS), sends requests the
// worker hands it, parses responses and reports each outcome back to the
// worker. It never counts anything itself. Owned by its Worker, on the
// worker's thread; handlers capture `this`. Its transports: plain HTTP/1.1
// and HTTP/1.1 over TLS on the worker's epoll loop (connection.cpp,
// connection_tls.cpp) or on io_uring (connection_uring.cpp, with the TLS
// records through tls_records.hpp); an HTTP/2 lane's I/O is its session's
// (h2_session.cpp).

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <openssl/ssl.h>

#include "loadgen/engine/asio.hpp"
#include "loadgen/engine/connection_owner.hpp"
#include "loadgen/engine/event_loop.hpp"
#include "loadgen/engine/http1_parser.hpp"
#include "loadgen/engine/lane_session.hpp"
#include "loadgen/engine/network.hpp"
#include "loadgen/engine/request_slot.hpp"
#include "loadgen/engine/tls_records.hpp"
#include "loadgen/engine/uring_loop.hpp"

namespace kubeload::loadgen {

class H2Session;

class Connection {
 public:
  static constexpr std::size_t kReadBufferSize = 8192;

  // `h2`: an HTTP/2 lane, whose requests travel as streams of that session
  // (shared with other lanes); null: an HTTP/1.1 connection of its own.
  Connection(ConnectionOwner& worker, uint32_t index, LaneSession* h2 = nullptr);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint32_t index() const noexcept { return index_; }
  bool busy() const noexcept { return busy_; }
  bool is_open() const noexcept;

  // Sends the request of `slot`, connecting first when needed. `now`: the
  // caller's clock, read as it chose this request (its deadline counts from
  // there, and on an open connection it is when the request leaves).
  void start(const RequestSlot& slot, Clock::time_point now);
  // Called by the worker's tick: a request past its deadline is abandoned as a
  // timeout (the socket is closed, which completes the pending operation).
  // Returns the deadline still ahead (time_point::max() when none).
  Clock::time_point enforce_deadline(Clock::time_point now) noexcept;
  // Brings every deadline forward (used when the run is interrupted).
  void clamp_deadline(Clock::time_point latest) noexcept;
  void close() noexcept;
  // Scenarios: each response's header section and body (up to `max_body`
  // bytes) are kept until the next request, for extraction and checks.
  void capture_responses(std::size_t max_body);
  const Http1ResponseParser::Capture& captured() const noexcept { return *capture_; }
  // HTTP/1.1 on epoll (plain or TLS): a readiness event of this connection's
  // socket, from the worker's EventLoop; `generation`: of the socket it was for.
  void on_socket_event(uint32_t generation, uint32_t events);
  // HTTP/1.1 on io_uring (plain or TLS): an operation on this connection's socket
  // completed; `generation`: of the socket it was for.
  void on_uring_completion(uint32_t generation, const UringLoop::Completion& done);

 private:
  friend class H2Session;
  // What an HTTP/2 stream has brought so far (the HTTP/1.1 parser's part).
  struct H2Stream {
    int32_t id = 0;  // 0: no stream (yet)
    int status = 0;
    uint64_t header_bytes = 0;
    uint64_t body_bytes = 0;
    uint64_t body_sent = 0;
    bool complete = false;  // END_STREAM received
    bool reset_by_peer = false;
  };

  struct SslFree {
    void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
  };

  static boost::system::error_code system_error(int error) noexcept {
    return {error, boost::system::system_category()};
  }
  bool socket_open() const noexcept;
  void connect();
  // HTTP/1.1 on epoll: the worker's addresses in order from `first`; the
  // first that accepts is used. `error`: what to report when none is left.
  void connect_plain(std::size_t first, int error);
  // The TCP connection is up: the request goes out, after the TLS handshake
  // over TLS.
  void on_connected();
  // HTTP/1.1 over TLS (connection_tls.cpp): as send_plain and receive,
  // through OpenSSL on the socket (epoll) or on tls_records_ (io_uring).
  void start_tls();
  void continue_handshake();
  void send_tls();
  void on_tls_event(uint32_t events);
  // `peer_closed`: the event said so; the socket is then read to its end.
  void receive_tls(bool peer_closed);
  // Asks for EPOLLOUT events (or no more of them) besides the readable
  // ones; an errno when the loop refused.
  int want_writable(bool writable) noexcept;
  // HTTP/1.1 on epoll: the request waits for the socket (for room to write
  // when `writable`), or went out whole and its response is awaited.
  void wait_to_send(bool writable);
  void request_sent();
  // HTTP/1.1 on io_uring (connection_uring.cpp): as connect_plain,
  // send_plain and receive, with completions instead of readiness.
  void connect_uring(std::size_t first, int error);
  void send_uring();
  void arm_receive();
  void on_uring_receive(const UringLoop::Completion& done);
  // Over TLS: the request into records, the records of a receive into
  // OpenSSL, and what OpenSSL wrote out through the ring.
  void send_tls_uring();
  void receive_tls_uring(const UringLoop::Completion& done);
  void on_tls_records_sent(const UringLoop::Completion& done);
  void send_tls_records();
  void close_uring() noexcept;
  void write_request(Clock::time_point now);
  void send_plain(std::size_t offset);
  void read_response();
  // Plain HTTP/1.1, on a readiness event: reads until the socket is drained
  // (to the end of the stream when the peer had closed) or the response ends.
  void receive(uint32_t events);
  // Fails the request from the event loop, not from inside the caller (a
  // start, the tick), as an Asio operation's completion would.
  void fail_later(Outcome outcome, int error);
  void post(std::function<void()> callback);
  SocketOwner owner() const noexcept { return {index_, generation_}; }
  // `data`: what was read (a connection's own buffer, or the ring's).
  void on_read(const boost::system::error_code& ec, const char* data, std::size_t bytes);
  void complete_response(bool must_close, Clock::time_point now);
  // `now`: when the outcome was known (the last byte read, the error).
  void finish(Outcome outcome, bool response_complete, Clock::time_point now);
  // The status and length checks of a complete response.
  Outcome judge(int status, uint64_t body_bytes) const noexcept;
  // HTTP/2: the lane's stream ended (or never began).
  void end_stream(Outcome outcome);
  void fail(Outcome outcome, const boost::system::error_code& ec);
  bool may_resend() const noexcept;

  ConnectionOwner& worker_;
  uint32_t index_;
  // HTTP/1.1: a socket of our own, its events from the worker's EventLoop;
  // over TLS OpenSSL (ssl_) reads and writes it. (HTTP/2: the session's.)
  // On io_uring the ring owns the socket (on_ring_), and `sending_` means a
  // send is pending (not only waiting for room) and `connecting_` a connect.
  UniqueFd plain_;
  uint32_t generation_ = 0;            // of plain_, bumped when it closes
  bool connecting_ = false;            // plain_ waits for its connect to complete
  std::size_t endpoint_ = 0;           // the address plain_ connects to
  std::size_t unsent_ = 0;             // where a request's send stopped (the buffer was full)
  bool sending_ = false;               // a request waits for room in the send buffer
  uint32_t events_while_sending_ = 0;  // events that came while it did
  bool want_read_ = false;             // the response needs more than has been read
  bool writable_wanted_ = false;       // epoll: EPOLLOUT is in the socket's events
  bool receive_armed_ = false;         // io_uring: the socket's multishot receive is pending
  // io_uring: the ring holds this connection's socket, in its slot (index_);
  // plain_ stays closed, the ring owns the socket.
  bool on_ring_ = false;
  std::unique_ptr<SSL, SslFree> ssl_;  // over TLS, for plain_'s connection (or the ring's)
  TlsRecords tls_records_;             // over TLS on io_uring: what OpenSSL reads and writes
  bool tls_write_waits_ = false;       // ... a request's SSL_write waits for a renegotiation
  bool handshaking_ = false;
  std::unique_ptr<char[]> read_buffer_;
  Http1ResponseParser parser_;
  std::unique_ptr<Http1ResponseParser::Capture> capture_;  // scenarios only

  bool busy_ = false;
  bool timed_out_ = false;
  RequestSlot slot_{};
  Clock::time_point deadline_{};
  Clock::time_point connect_started_{};
  Clock::time_point written_at_{};
  Clock::time_point first_byte_at_{};
  RequestTimings timings_{};
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
  bool new_connection_ = false;
  bool retried_ = false;  // resent once after a stale keep-alive connection
  bool tls_handshake_ = false;
  bool tls_resumed_ = false;
  bool tls_kernel_send_ = false;
  bool tls_kernel_receive_ = false;
  // OpenSSL's last read(2) on the socket took all there was (it came back
  // short, or would block): noted by the socket BIO's callback.
  bool tls_socket_drained_ = false;
  const bool host_is_ip_;
  SslSession tls_session_;  // the last session the server issued, for the next handshake
  bool counted_open_ = false;
  std::optional<std::string> first_server_;
  LaneSession* const h2_;
  H2Stream stream_{};
};

}  // namespace kubeload::loadgen
