#pragma once
// One HTTP/2 connection (h2 over TLS, or h2c with prior knowledge) carrying
// the requests of up to RunPlan::max_streams lanes at once. nghttp2's session
// does the framing, HPACK and flow control; this class owns the socket, the
// reads and writes, and turns each stream's end into its lane's outcome. The
// worker schedules lanes exactly as it schedules HTTP/1.1 connections, so
// counting, stages, warm-up and the open model are the same code.
//
// The socket's I/O runs on Asio (h2 over TLS, and h2c on the epoll engine),
// or, for h2c on the io_uring engine, on the worker's UringLoop
// (h2_session_uring.cpp): the session's slot holds its socket, one
// multishot receive hands each arrival to nghttp2 straight from the ring's
// buffer, and each flush is one send submitted with the loop's next wait.
// Everything between the bytes and the lanes is the same code for both.
//
// TLS runs on OpenSSL over memory BIOs that this class fills and drains with
// plain socket operations: each flush is one SSL_write of everything nghttp2
// has queued and one socket write, and each read of the socket (up to
// kCipherReadSize) yields every whole record in it before the next flush.
// (asio::ssl::stream turns a write into one socket operation per record,
// reads a record at a time, and frees OpenSSL's buffers between records.)
//
// Hostile peers cost bounded memory: a response's header section is capped
// (kMostHeaderBytes), nghttp2 bounds queued SETTINGS/PING acknowledgements,
// and every stream ends at its lane's timeout with RST_STREAM.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>

#include "loadgen/engine/asio.hpp"
#include "loadgen/engine/connection_owner.hpp"
#include "loadgen/engine/handler_memory.hpp"
#include "loadgen/engine/lane_session.hpp"
#include "loadgen/engine/network.hpp"
#include "loadgen/engine/request_slot.hpp"
#include "loadgen/engine/uring_loop.hpp"

namespace kubeload::loadgen {

class Connection;

class H2Session final : public LaneSession {
 public:
  static constexpr std::size_t kReadBufferSize = 16384;
  static constexpr std::size_t kCipherReadSize = 65536;
  // A response header section larger than this resets its stream (error
  // kind read): HEADERS and CONTINUATION floods cannot grow our memory.
  static constexpr uint64_t kMostHeaderBytes = 256 * 1024;

  // `index`: the session's own among the worker's (its io_uring slot).
  H2Session(ConnectionOwner& worker, asio::io_context& io, uint32_t index);
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;
  ~H2Session();

  // Sends the lane's request on a stream, connecting first when needed.
  void start(Connection& lane) override;
  // Ends the lane's request as a timeout: its stream is reset (CANCEL), or it
  // stops waiting for the connection.
  void abandon(Connection& lane) override;
  // Closes the connection (the run is over; no lane is busy).
  void close() noexcept override;
  bool is_open() const noexcept override { return state_ == State::open; }
  // h2c on io_uring: an operation on the session's socket completed;
  // `generation`: of the socket it was for.
  void on_uring_completion(uint32_t generation, const UringLoop::Completion& done);

 private:
  enum class State { closed, connecting, open, closing };
  struct SessionDelete {
    void operator()(nghttp2_session* session) const noexcept { nghttp2_session_del(session); }
  };
  struct SslFree {
    void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
  };

  Socket& socket() noexcept;
  void connect();
  void on_connected(const boost::system::error_code& ec);
  // The socket is connected (either transport): counted, then TLS's
  // handshake or the session.
  void connected();
  // h2c on io_uring (h2_session_uring.cpp): connect, send what flush()
  // gathered, keep the multishot receive armed, close.
  void connect_uring(std::size_t first);
  void send_uring();
  void on_uring_sent(int result);
  void read_uring();
  void on_uring_receive(const UringLoop::Completion& done);
  void close_uring() noexcept;
  SocketOwner owner() const noexcept { return {index_, generation_}; }
  void handshake();
  void on_ready();
  void submit(Connection& lane);
  void flush();
  // Moves what OpenSSL has queued for the wire into cipher_out_ (empty when
  // nothing is); false when the BIO fails.
  bool take_tls_output();
  void read();
  void on_read(const boost::system::error_code& ec, std::size_t bytes);
  void on_tls_read(const boost::system::error_code& ec, std::size_t bytes);
  // Hands `bytes` at `data` to nghttp2; false when the connection ended on
  // the way (closed or failed).
  bool receive(const uint8_t* data, std::size_t bytes);
  // After a read's bytes went to nghttp2: flush, then read on.
  void after_receive();
  void op_done();
  // The connection is lost: every lane on it ends with `outcome`, and the
  // socket closes.
  // waiting lanes too with `waiting_too` (the connection could not be
  // made); otherwise they go on the next connection.
  void fail_all(Outcome outcome, bool waiting_too);
  // How a request ends when its connection is lost.
  Outcome lost_outcome() const noexcept;
  void close_socket() noexcept;
  Connection* lane_of(int32_t stream_id) const noexcept;
  // Puts a request the peer's graceful GOAWAY refused (its stream above the
  // last stream id: never processed, RFC 9113 section 6.8) back to wait for
  // the next connection, once; true if it did.
  bool resend_refused(Connection& lane, int32_t stream_id);
  void forget(Connection& lane) noexcept;

  // nghttp2 callbacks (user_data is the H2Session).
  static int on_begin_frame(nghttp2_session*, const nghttp2_frame_hd* hd, void* self);
  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int on_frame_send(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t namelen, const uint8_t* value, size_t valuelen, uint8_t flags,
                       void* self);
  static int on_data_chunk(nghttp2_session*, uint8_t flags, int32_t stream_id, const uint8_t* data,
                           size_t len, void* self);
  static int on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* self);
  static ssize_t read_body(nghttp2_session*, int32_t stream_id, uint8_t* buf, size_t length,
                           uint32_t* data_flags, nghttp2_data_source* source, void* self);

  ConnectionOwner& worker_;
  UringLoop* const ring_;  // h2c on io_uring; null: Asio
  const uint32_t index_;
  // io_uring: the ring holds the session's socket (its slot is index_),
  // whose generation names its completions; what is pending on it.
  bool on_ring_ = false;
  uint32_t generation_ = 0;
  std::size_t endpoint_ = 0;  // the address the ring's socket connects to
  bool connecting_ = false;
  bool receive_armed_ = false;
  std::size_t sent_ = 0;  // of out_, by the send pending (writing_)
  Socket plain_;
  std::unique_ptr<SSL, SslFree> tls_;  // https only, over memory BIOs
  SslSession tls_session_;             // the last session the server issued, for the next handshake
  const bool host_is_ip_;
  std::unique_ptr<nghttp2_session, SessionDelete> session_;
  nghttp2_session_callbacks* callbacks_ = nullptr;
  nghttp2_option* options_ = nullptr;
  // Per request template: the header fields as nghttp2 takes them, built
  // once; they point into the worker's plan.
  std::vector<std::vector<nghttp2_nv>> request_fields_;

  State state_ = State::closed;
  int pending_ops_ = 0;  // Asio's socket operations not yet completed
  bool counted_open_ = false;
  // Inside nghttp2_session_mem_recv or _mem_send: our callbacks must not
  // re-enter nghttp2 or delete its session.
  bool inside_nghttp2_ = false;
  bool close_requested_ = false;
  bool writing_ = false;
  bool goaway_received_ = false;
  // OpenSSL failed on this connection (not a peer's close): its session is
  // not resumed.
  bool tls_failed_ = false;
  uint32_t goaway_error_ = NGHTTP2_NO_ERROR;
  int32_t goaway_last_stream_ = 0;
  bool no_new_streams_ = false;  // GOAWAY received or stream ids exhausted
  // Header-block bytes received in a row for streams no lane owns.
  uint64_t orphan_header_bytes_ = 0;
  Clock::time_point connect_started_{};
  Clock::time_point last_read_at_{};
  std::vector<Connection*> waiting_;  // lanes started before the connection was ready
  std::vector<Connection*> active_;   // lanes with a stream
  std::vector<Connection*> ending_;   // scratch for fail_all
  std::vector<uint8_t> out_;
  std::unique_ptr<uint8_t[]> read_buffer_;
  // TLS: records as read from the socket, and as they go out.
  std::unique_ptr<uint8_t[]> cipher_in_;
  std::vector<uint8_t> cipher_out_;
  // The session reads and writes at once: memory for each direction.
  HandlerMemory read_memory_;
  HandlerMemory write_memory_;
};

}  // namespace kubeload::loadgen
