#pragma once
// One client connection: connects (TCP, optionally TLS), sends requests the
// worker hands it, parses responses and reports each outcome back to the
// worker. It never counts anything itself. Owned by its Worker, on the
// worker's thread; handlers capture `this`.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "loadgen/asio.hpp"
#include "loadgen/http1_parser.hpp"
#include "loadgen/network.hpp"
#include "loadgen/request_slot.hpp"

namespace kubeload::loadgen {

class Worker;

class Connection {
 public:
  static constexpr std::size_t kReadBufferSize = 8192;

  Connection(Worker& worker, asio::io_context& io, uint32_t index);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint32_t index() const noexcept { return index_; }
  bool busy() const noexcept { return busy_; }
  bool is_open() const noexcept { return socket_open(); }

  // Sends the request of `slot`, connecting first when needed.
  void start(const RequestSlot& slot);
  // Called by the worker's tick: a request past its deadline is abandoned as a
  // timeout (the socket is closed, which completes the pending operation).
  void enforce_deadline(Clock::time_point now) noexcept;
  // Brings every deadline forward (used when the run is interrupted).
  void clamp_deadline(Clock::time_point latest) noexcept;
  void close() noexcept;

 private:
  bool socket_open() const noexcept;
  tcp::socket& socket() noexcept;
  void connect();
  void on_connected(const boost::system::error_code& ec);
  void write_request();
  void read_response();
  void on_read(const boost::system::error_code& ec, std::size_t bytes);
  void complete_response(bool must_close);
  void finish(Outcome outcome, bool response_complete);
  void fail(Outcome outcome, const boost::system::error_code& ec);
  bool may_resend() const noexcept;

  Worker& worker_;
  asio::io_context& io_;
  uint32_t index_;
  tcp::socket plain_;
  std::unique_ptr<asio::ssl::stream<tcp::socket>> tls_;
  std::unique_ptr<char[]> read_buffer_;
  Http1ResponseParser parser_;

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
  const bool host_is_ip_;
  SslSession tls_session_;  // the last session the server issued, for the next handshake
  bool counted_open_ = false;
  std::optional<std::string> first_server_;
};

}  // namespace kubeload::loadgen
