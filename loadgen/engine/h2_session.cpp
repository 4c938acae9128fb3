#include "loadgen/engine/h2_session.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <string_view>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "loadgen/engine/connection.hpp"

namespace kubeload::loadgen {
namespace {

// Our receive windows: large, as h2load's, since every DATA byte is consumed
// as it arrives (nothing is buffered for the window to protect).
constexpr int32_t kStreamWindow = 1 << 24;
constexpr int32_t kConnectionWindow = 1 << 30;
// A write gathers at most this much of nghttp2's output.
constexpr std::size_t kMostWriteBytes = 64 * 1024;
constexpr std::size_t kFrameHeaderBytes = 9;

H2Session& self_of(void* user_data) noexcept {
  return *static_cast<H2Session*>(user_data);
}

nghttp2_nv field(const std::string& name, const std::string& value) noexcept {
  // The strings live in the plan for the whole run: nghttp2 need not copy them.
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                    value.size(), NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
}

}  // namespace

H2Session::H2Session(ConnectionOwner& worker, asio::io_context& io, uint32_t index)
    : worker_(worker),
      ring_(worker.uring_loop()),
      index_(index),
      plain_(io),
      host_is_ip_(is_ip_literal(worker.plan().target.host)),
      // On io_uring nghttp2 reads straight from the ring's buffers.
      read_buffer_(ring_ == nullptr ? std::make_unique_for_overwrite<uint8_t[]>(kReadBufferSize)
                                    : nullptr) {
  nghttp2_session_callbacks_new(&callbacks_);
  nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks_, on_begin_frame);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks_, on_frame_recv);
  nghttp2_session_callbacks_set_on_frame_send_callback(callbacks_, on_frame_send);
  nghttp2_session_callbacks_set_on_header_callback(callbacks_, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks_, on_data_chunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks_, on_stream_close);
  nghttp2_option_new(&options_);
  // Bounded memory against a SETTINGS storm: a peer that makes us queue more
  // acknowledgements than this is disconnected by nghttp2.
  nghttp2_option_set_max_outbound_ack(options_, 1000);
  nghttp2_option_set_max_settings(options_, 32);

  const RunPlan& plan = worker.plan();
  request_fields_.reserve(plan.requests.size());
  for (const RequestTemplate& request : plan.requests) {
    auto& fields = request_fields_.emplace_back();
    fields.reserve(request.h2_fields.size());
    for (const auto& [name, value] : request.h2_fields) fields.push_back(field(name, value));
  }
  const auto streams = static_cast<std::size_t>(plan.max_streams);
  waiting_.reserve(streams);
  active_.reserve(streams);
  ending_.reserve(streams);
  out_.reserve(kMostWriteBytes + 16384);
  if (worker.tls() != nullptr) {
    cipher_in_ = std::make_unique_for_overwrite<uint8_t[]>(kCipherReadSize);
    // A batch's records: its bytes and each record's header and tag.
    cipher_out_.reserve(kMostWriteBytes + 32768);
  }
}

H2Session::~H2Session() {
  session_.reset();
  nghttp2_option_del(options_);
  nghttp2_session_callbacks_del(callbacks_);
}

Socket& H2Session::socket() noexcept {
  return plain_;
}

void H2Session::start(Connection& lane) {
  lane.first_server_.reset();
  if (state_ == State::open && !no_new_streams_) {
    submit(lane);
    if (!inside_nghttp2_) flush();
    return;
  }
  waiting_.push_back(&lane);
  // After a GOAWAY the streams still running finish first; the lanes
  // waiting then go on a new connection (see op_done).
  if (state_ == State::open && !inside_nghttp2_ && active_.empty()) return close_socket();
  if (state_ == State::closed) connect();
}

void H2Session::connect() {
  state_ = State::connecting;
  goaway_received_ = false;
  tls_failed_ = false;
  goaway_error_ = NGHTTP2_NO_ERROR;
  goaway_last_stream_ = 0;
  no_new_streams_ = false;
  orphan_header_bytes_ = 0;
  connect_started_ = Clock::now();
  if (worker_.tls() != nullptr) {
    // No operation is pending on the old connection (state closed): replacing it is safe.
    tls_.reset(SSL_new(worker_.tls()->native_handle()));
    if (!tls_) return fail_all(Outcome::connect, true);
    // Records pass through memory BIOs: the socket is read in large chunks
    // and each flush goes out in one write. OpenSSL's buffers stay
    // allocated for the connection's life.
    BIO* incoming = BIO_new(BIO_s_mem());
    BIO* outgoing = BIO_new(BIO_s_mem());
    if (incoming == nullptr || outgoing == nullptr) {
      BIO_free(incoming);
      BIO_free(outgoing);
      return fail_all(Outcome::connect, true);
    }
    BIO_set_mem_eof_return(incoming, -1);  // empty: "want read", not end of stream
    SSL_set_bio(tls_.get(), incoming, outgoing);
    SSL_clear_mode(tls_.get(), SSL_MODE_RELEASE_BUFFERS);
    configure_tls_connection(tls_.get(), worker_.plan().target, host_is_ip_, worker_.plan().tls,
                             &tls_session_);
  }
  if (ring_ != nullptr) return connect_uring(0);
  ++pending_ops_;
  asio::async_connect(
      socket(), std::span<const tcp::endpoint>(worker_.endpoints()),
      [this](const boost::system::error_code& ec, const tcp::endpoint&) { on_connected(ec); });
}

void H2Session::on_connected(const boost::system::error_code& ec) {
  --pending_ops_;
  if (state_ != State::connecting) return op_done();
  if (ec) return fail_all(Outcome::connect, true);
  boost::system::error_code ignored;
  socket().set_option(tcp::no_delay(true), ignored);
  connected();
}

void H2Session::connected() {
  counted_open_ = true;
  worker_.on_connection_opened();
  if (!tls_) return on_ready();
  SSL_set_connect_state(tls_.get());
  handshake();
}

void H2Session::handshake() {
  ERR_clear_error();
  const int done = SSL_do_handshake(tls_.get());
  if (done == 1) {
    // The run's check refused a server without h2; one
    // that changes its mind mid-run fails to connect.
    const unsigned char* alpn = nullptr;
    unsigned int alpn_length = 0;
    SSL_get0_alpn_selected(tls_.get(), &alpn, &alpn_length);
    if (std::string_view(reinterpret_cast<const char*>(alpn), alpn_length) != "h2") {
      return fail_all(Outcome::connect, true);
    }
    // Our Finished goes out with the first flush.
    return on_ready();
  }
  if (SSL_get_error(tls_.get(), done) != SSL_ERROR_WANT_READ) {
    ERR_clear_error();
    return fail_all(Outcome::connect, true);
  }
  if (!take_tls_output()) return fail_all(Outcome::connect, true);
  ++pending_ops_;
  if (!cipher_out_.empty()) {
    asio::async_write(
        plain_, asio::buffer(cipher_out_),
        with_memory(write_memory_, [this](const boost::system::error_code& ec, std::size_t) {
          --pending_ops_;
          if (state_ != State::connecting) return op_done();
          if (ec) return fail_all(Outcome::connect, true);
          handshake();
        }));
    return;
  }
  plain_.async_read_some(
      asio::buffer(cipher_in_.get(), kCipherReadSize),
      with_memory(read_memory_, [this](const boost::system::error_code& ec, std::size_t bytes) {
        --pending_ops_;
        if (state_ != State::connecting) return op_done();
        if (ec || BIO_write(SSL_get_rbio(tls_.get()), cipher_in_.get(), static_cast<int>(bytes)) !=
                      static_cast<int>(bytes)) {
          return fail_all(Outcome::connect, true);
        }
        handshake();
      }));
}

bool H2Session::take_tls_output() {
  BIO* outgoing = SSL_get_wbio(tls_.get());
  const std::size_t pending = BIO_ctrl_pending(outgoing);
  cipher_out_.resize(pending);
  return pending == 0 || BIO_read(outgoing, cipher_out_.data(), static_cast<int>(pending)) ==
                             static_cast<int>(pending);
}

void H2Session::on_ready() {
  nghttp2_session* raw = nullptr;
  if (nghttp2_session_client_new2(&raw, callbacks_, this, options_) != 0) {
    return fail_all(Outcome::connect, true);
  }
  session_.reset(raw);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<uint32_t>(kStreamWindow)},
  };
  nghttp2_submit_settings(raw, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(raw, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
  state_ = State::open;
  last_read_at_ = Clock::now();

  const int64_t connect_us = micros_between(connect_started_, Clock::now());
  bool first = true;
  std::swap(ending_, waiting_);  // submit() may put a lane back into waiting_
  for (Connection* lane : ending_) {
    // The connection and its handshake are counted once, with the request
    // that opened it; the others waited for it (their latency shows it).
    lane->timings_.connect_us = connect_us;
    lane->new_connection_ = first;
    lane->tls_handshake_ = first && tls_ != nullptr;
    lane->tls_resumed_ = lane->tls_handshake_ && SSL_session_reused(tls_.get()) == 1;
    first = false;
    submit(*lane);
  }
  ending_.clear();
  flush();
  read();
}

void H2Session::submit(Connection& lane) {
  const RequestTemplate& request = worker_.plan().requests[lane.slot_.request];
  const auto& fields = request_fields_[lane.slot_.request];
  nghttp2_data_provider body{};
  body.source.ptr = &lane;
  body.read_callback = read_body;
  const int32_t id = nghttp2_submit_request(session_.get(), nullptr, fields.data(), fields.size(),
                                            request.body.empty() ? nullptr : &body, &lane);
  if (id < 0) {
    // No stream can be opened on this connection (stream ids exhausted):
    // the request goes on the next one.
    no_new_streams_ = true;
    waiting_.push_back(&lane);
    if (!inside_nghttp2_ && active_.empty()) close_socket();
    return;
  }
  lane.stream_.id = id;
  active_.push_back(&lane);
}

void H2Session::flush() {
  if (writing_ || state_ != State::open || !session_) return;
  while (out_.size() < kMostWriteBytes) {
    const uint8_t* data = nullptr;
    inside_nghttp2_ = true;
    const ssize_t length = nghttp2_session_mem_send(session_.get(), &data);
    inside_nghttp2_ = false;
    if (close_requested_) return close();
    if (length < 0) return fail_all(Outcome::write, false);
    if (length == 0) break;
    out_.insert(out_.end(), data, data + length);
  }
  if (tls_) {
    // One SSL_write of the batch into the memory BIO, then out in one write
    // with whatever else OpenSSL queued (our Finished, a KeyUpdate answer).
    if (!out_.empty()) {
      ERR_clear_error();
      if (SSL_write(tls_.get(), out_.data(), static_cast<int>(out_.size())) <= 0) {
        tls_failed_ = true;
        ERR_clear_error();
        return fail_all(Outcome::write, false);
      }
      out_.clear();
    }
    if (!take_tls_output()) return fail_all(Outcome::write, false);
  }
  std::vector<uint8_t>& wire = tls_ ? cipher_out_ : out_;
  if (wire.empty()) {
    // Both ends are done with this connection (GOAWAY exchanged): waiting
    // lanes go on the next one.
    if (!nghttp2_session_want_read(session_.get()) && !nghttp2_session_want_write(session_.get())) {
      fail_all(lost_outcome(), false);
    }
    return;
  }
  writing_ = true;
  if (ring_ != nullptr) return send_uring();
  ++pending_ops_;
  asio::async_write(
      plain_, asio::buffer(wire),
      with_memory(write_memory_, [this](const boost::system::error_code& ec, std::size_t) {
        --pending_ops_;
        writing_ = false;
        out_.clear();
        cipher_out_.clear();
        if (state_ != State::open) return op_done();
        if (ec) {
          return fail_all(goaway_received_ ? Outcome::goaway : Outcome::write, false);
        }
        flush();
      }));
}

void H2Session::read() {
  if (ring_ != nullptr) return read_uring();
  ++pending_ops_;
  if (tls_) {
    plain_.async_read_some(
        asio::buffer(cipher_in_.get(), kCipherReadSize),
        with_memory(read_memory_, [this](const boost::system::error_code& ec, std::size_t bytes) {
          on_tls_read(ec, bytes);
        }));
    return;
  }
  plain_.async_read_some(
      asio::buffer(read_buffer_.get(), kReadBufferSize),
      with_memory(read_memory_, [this](const boost::system::error_code& ec, std::size_t bytes) {
        on_read(ec, bytes);
      }));
}

void H2Session::on_read(const boost::system::error_code& ec, std::size_t bytes) {
  --pending_ops_;
  if (state_ != State::open) return op_done();
  if (ec) return fail_all(lost_outcome(), false);
  if (receive(read_buffer_.get(), bytes)) after_receive();
}

void H2Session::on_tls_read(const boost::system::error_code& ec, std::size_t bytes) {
  --pending_ops_;
  if (state_ != State::open) return op_done();
  if (ec) return fail_all(lost_outcome(), false);
  if (BIO_write(SSL_get_rbio(tls_.get()), cipher_in_.get(), static_cast<int>(bytes)) !=
      static_cast<int>(bytes)) {
    return fail_all(Outcome::read, false);
  }
  ERR_clear_error();
  for (;;) {
    const int plain = SSL_read(tls_.get(), read_buffer_.get(), kReadBufferSize);
    if (plain > 0) {
      if (!receive(read_buffer_.get(), static_cast<std::size_t>(plain))) return;
      continue;
    }
    const int error = SSL_get_error(tls_.get(), plain);
    if (error == SSL_ERROR_WANT_READ) break;  // every whole record is read
    // The peer's close_notify, or the record layer failed.
    tls_failed_ = error == SSL_ERROR_SSL;
    ERR_clear_error();
    return fail_all(lost_outcome(), false);
  }
  after_receive();
}

bool H2Session::receive(const uint8_t* data, std::size_t bytes) {
  last_read_at_ = Clock::now();
  inside_nghttp2_ = true;
  const ssize_t consumed = nghttp2_session_mem_recv(session_.get(), data, bytes);
  inside_nghttp2_ = false;
  if (close_requested_) {
    close();
    return false;
  }
  // A protocol error: nghttp2 has queued a GOAWAY; the streams end as read errors.
  if (consumed < 0) {
    fail_all(Outcome::read, false);
    return false;
  }
  return true;
}

void H2Session::after_receive() {
  flush();
  if (state_ != State::open) return;
  if (no_new_streams_ && active_.empty() && !waiting_.empty()) return close_socket();
  read();
}

// A socket operation of a connection being closed came back: once none is
// left, the lanes that waited go on a new connection.
void H2Session::op_done() {
  if (state_ != State::closing || pending_ops_ > 0) return;
  state_ = State::closed;
  if (!waiting_.empty()) connect();
}

Outcome H2Session::lost_outcome() const noexcept {
  return goaway_received_ ? Outcome::goaway : Outcome::read;
}

void H2Session::fail_all(Outcome outcome, bool waiting_too) {
  // A handshake that began and failed: its session is not offered again, so
  // the next connection starts afresh (configure_tls_connection).
  if (tls_ && !SSL_in_before(tls_.get()) && SSL_in_init(tls_.get())) tls_session_.reset();
  std::swap(ending_, active_);
  if (waiting_too) {
    for (Connection* lane : waiting_) ending_.push_back(lane);
    waiting_.clear();
  }
  // Requests the peer's GOAWAY refused that were still queued when the
  // connection ended wait for the next one (decided before close_socket,
  // which may start that connection and forget this one's GOAWAY).
  std::erase_if(ending_, [this](Connection* lane) {
    const int32_t id = lane->stream_.id;
    lane->stream_.id = 0;
    return resend_refused(*lane, id);
  });
  close_socket();
  // Lanes that end here may be started again at once: they wait for the next
  // connection (the vectors they go into are empty now).
  for (Connection* lane : ending_) lane->end_stream(outcome);
  ending_.clear();
}

void H2Session::close_socket() noexcept {
  if (state_ == State::closed || state_ == State::closing) return;
  // A connection that ends without a TLS failure (a GOAWAY, the peer's close,
  // the run's end) leaves its session resumable: OpenSSL would otherwise mark
  // the kept session not resumable when the stream is freed.
  if (state_ == State::open && tls_ && !tls_failed_) {
    SSL_set_shutdown(tls_.get(), SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  }
  session_.reset();
  if (ring_ != nullptr) {
    close_uring();  // nothing stays pending: state closed
  } else {
    boost::system::error_code ignored;
    socket().close(ignored);
  }
  writing_ = false;
  if (counted_open_) {
    counted_open_ = false;
    worker_.on_connection_closed();
  }
  state_ = pending_ops_ > 0 ? State::closing : State::closed;
  if (state_ == State::closed && !waiting_.empty()) connect();
}

void H2Session::close() noexcept {
  // Not while nghttp2 is running our callbacks: it closes when they return.
  if (inside_nghttp2_) {
    close_requested_ = true;
    return;
  }
  close_requested_ = false;
  close_socket();
}

void H2Session::abandon(Connection& lane) {
  const auto waiting = std::find(waiting_.begin(), waiting_.end(), &lane);
  if (waiting != waiting_.end()) {
    waiting_.erase(waiting);
    lane.end_stream(Outcome::timeout);
    // Nobody needs the connection being made any more.
    if (state_ == State::connecting && waiting_.empty() && active_.empty()) close_socket();
    return;
  }
  if (lane.stream_.id == 0 || !session_) return lane.end_stream(Outcome::timeout);
  const int32_t id = lane.stream_.id;
  forget(lane);
  nghttp2_session_set_stream_user_data(session_.get(), id, nullptr);
  nghttp2_submit_rst_stream(session_.get(), NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  // A connection silent for a whole timeout may be dead: no new stream goes
  // on it; its other streams keep their own deadlines, then the next
  // requests get a new connection.
  if (Clock::now() - last_read_at_ >= worker_.plan().timeout) no_new_streams_ = true;
  lane.end_stream(Outcome::timeout);
  if (state_ == State::open && no_new_streams_ && active_.empty() && !waiting_.empty()) {
    return close_socket();
  }
  flush();
}

Connection* H2Session::lane_of(int32_t stream_id) const noexcept {
  if (!session_) return nullptr;
  return static_cast<Connection*>(nghttp2_session_get_stream_user_data(session_.get(), stream_id));
}

bool H2Session::resend_refused(Connection& lane, int32_t stream_id) {
  // A graceful GOAWAY (a server's request limit, a restart): the request is
  // sent once more, as clients do; a second refusal is the GOAWAY's error.
  if (!goaway_received_ || stream_id <= goaway_last_stream_ || goaway_error_ != NGHTTP2_NO_ERROR ||
      lane.retried_) {
    return false;
  }
  lane.retried_ = true;
  lane.stream_ = {};
  waiting_.push_back(&lane);
  return true;
}

void H2Session::forget(Connection& lane) noexcept {
  const auto found = std::find(active_.begin(), active_.end(), &lane);
  if (found != active_.end()) {
    *found = active_.back();
    active_.pop_back();
  }
  lane.stream_.id = 0;
}

int H2Session::on_begin_frame(nghttp2_session*, const nghttp2_frame_hd* hd, void* user_data) {
  H2Session& self = self_of(user_data);
  Connection* lane = self.lane_of(hd->stream_id);
  // Header blocks for streams that are no request of ours (reset, timed out)
  // come one after another only from a flooding peer: past the cap the
  // connection is dropped instead of decoding them on and on.
  const bool header_block = hd->type == NGHTTP2_HEADERS || hd->type == NGHTTP2_CONTINUATION;
  if (lane != nullptr) {
    self.orphan_header_bytes_ = 0;
  } else if (header_block && hd->stream_id != 0) {
    self.orphan_header_bytes_ += hd->length;
    if (self.orphan_header_bytes_ > kMostHeaderBytes) return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  if (lane == nullptr) return 0;
  if (lane->bytes_in_ == 0) lane->first_byte_at_ = Clock::now();
  lane->bytes_in_ += hd->length + kFrameHeaderBytes;
  return 0;
}

int H2Session::on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
  H2Session& self = self_of(user_data);
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    self.goaway_received_ = true;
    self.no_new_streams_ = true;
    self.goaway_error_ = frame->goaway.error_code;
    self.goaway_last_stream_ = frame->goaway.last_stream_id;
    return 0;
  }
  Connection* lane = self.lane_of(frame->hd.stream_id);
  if (lane == nullptr) return 0;
  if (frame->hd.type == NGHTTP2_RST_STREAM) lane->stream_.reset_by_peer = true;
  if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
    lane->stream_.complete = true;
  }
  return 0;
}

int H2Session::on_frame_send(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
  Connection* lane = self_of(user_data).lane_of(frame->hd.stream_id);
  if (lane == nullptr) return 0;
  lane->bytes_out_ += frame->hd.length + kFrameHeaderBytes;
  // The request leaves with its HEADERS frame: Waiting is measured from here.
  if (frame->hd.type == NGHTTP2_HEADERS) lane->written_at_ = Clock::now();
  return 0;
}

int H2Session::on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                         size_t namelen, const uint8_t* value, size_t valuelen, uint8_t,
                         void* user_data) {
  H2Session& self = self_of(user_data);
  Connection* lane = self.lane_of(frame->hd.stream_id);
  if (lane == nullptr) return 0;
  // HPACK's own measure of a field (RFC 7541 section 4.1): empty fields count too.
  constexpr uint64_t kFieldOverhead = 32;
  lane->stream_.header_bytes += namelen + valuelen + kFieldOverhead;
  if (lane->stream_.header_bytes > kMostHeaderBytes) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  const std::string_view field_name(reinterpret_cast<const char*>(name), namelen);
  const std::string_view field_value(reinterpret_cast<const char*>(value), valuelen);
  if (field_name == ":status") {
    int status = 0;
    for (char c : field_value) status = status * 10 + (c - '0');
    lane->stream_.status = status;
  } else if (field_name == "server" && self.worker_.first_response_needed()) {
    lane->first_server_ = std::string(field_value);
  }
  return 0;
}

int H2Session::on_data_chunk(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t*,
                             size_t len, void* user_data) {
  Connection* lane = self_of(user_data).lane_of(stream_id);
  if (lane != nullptr) lane->stream_.body_bytes += len;
  return 0;
}

int H2Session::on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t error_code,
                               void* user_data) {
  H2Session& self = self_of(user_data);
  Connection* lane = self.lane_of(stream_id);
  if (lane == nullptr) return 0;
  self.forget(*lane);
  const bool refused = self.goaway_received_ && stream_id > self.goaway_last_stream_;
  if (self.resend_refused(*lane, stream_id)) return 0;
  Outcome outcome = Outcome::success;
  if (lane->stream_.reset_by_peer) {
    outcome = Outcome::rst_stream;
  } else if (refused) {
    outcome = Outcome::goaway;  // refused by the GOAWAY: never processed
  } else if (error_code != NGHTTP2_NO_ERROR || !lane->stream_.complete) {
    outcome = Outcome::read;  // we reset it: a malformed or oversized response
  }
  lane->end_stream(outcome);
  return 0;
}

ssize_t H2Session::read_body(nghttp2_session*, int32_t, uint8_t* buf, size_t length,
                             uint32_t* data_flags, nghttp2_data_source* source, void* user_data) {
  auto* lane = static_cast<Connection*>(source->ptr);
  const std::string& body = self_of(user_data).worker_.plan().requests[lane->slot_.request].body;
  const std::size_t left = body.size() - lane->stream_.body_sent;
  const std::size_t n = std::min(left, length);
  std::memcpy(buf, body.data() + lane->stream_.body_sent, n);
  lane->stream_.body_sent += n;
  if (lane->stream_.body_sent == body.size()) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

}  // namespace kubeload::loadgen
