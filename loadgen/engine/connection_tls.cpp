// Connection's HTTP/1.1-over-TLS transport. On the worker's epoll loop
// OpenSSL reads and writes the socket itself (its socket BIO), as wrk does,
// instead of Asio's stream, which passes every record through a pair of
// memory BIOs and a composed operation. On the socket BIO OpenSSL can also
// hand the record layer to the kernel (kTLS, SSL_OP_ENABLE_KTLS) once the
// handshake is done, where the kernel has the tls module; elsewhere it
// encrypts in user space. On io_uring the ring moves the records
// (connection_uring.cpp) and OpenSSL reads and writes them through
// tls_records_: the handshake and the reading below are the same on both.
// What the response means (parsing, counting, retrying a stale keep-alive
// connection) stays in connection.cpp.
//
// OpenSSL's rule for non-blocking sockets: an operation that wants to read
// or write is repeated with the same arguments once the socket is ready,
// and the thread's error queue is empty before each call (it is cleared
// after every failure here, so no call pays for clearing it on success).

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <utility>

#include "loadgen/engine/connection.hpp"

namespace kubeload::loadgen {
namespace {

// The failure an SSL call ended in, and the error queue emptied for the next
// call on this thread.
boost::system::error_code take_tls_error(int ssl_error) noexcept {
  const unsigned long queued = ERR_get_error();
  ERR_clear_error();
  if (ssl_error == SSL_ERROR_SYSCALL && queued == 0 && errno != 0) {
    return {errno, boost::system::system_category()};
  }
  if (queued != 0 && ERR_GET_REASON(queued) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
    // The peer closed without close_notify: a response delimited by the
    // end of the connection still ends there (on_read), as over Asio.
    return asio::ssl::error::stream_truncated;
  }
  return {static_cast<int>(queued), asio::error::get_ssl_category()};
}

// The socket BIO's callback: whether its last read(2) took all the socket
// had, as a short recv(2) tells the plain path (Connection::receive).
// Watched on OpenSSL's own socket BIO rather than through a BIO of ours in
// front of it, which would hide the socket from kTLS.
long note_socket_read(BIO* bio, int operation, const char*, std::size_t asked, int, long, int ret,
                      std::size_t* read) {
  if (operation == (BIO_CB_READ | BIO_CB_RETURN)) {
    *reinterpret_cast<bool*>(BIO_get_callback_arg(bio)) =
        ret > 0 ? *read < asked : BIO_should_retry(bio) != 0;
  }
  return ret;
}

// The handshakes of a connection that may hand its records to the kernel
// (kTLS), whose SSL's app data is its ConnectionOwner. Where the kernel
// holds the keys, they can never change, and a connection that must change
// them ends (each seen under Debian 12's kernel with its tls module, in the
// kernel-tls tier: every such request then cost a new connection):
// - Over TLS 1.3 OpenSSL 3.0 hands the kernel only the records it sends,
//   and could not then take a server's KeyUpdate asking for the client's
//   (RFC 8446 section 4.6.3). The option is cleared once the server's hello
//   has named TLS 1.3 (the client's version is its highest until then),
//   before the handshake sets the application keys, when OpenSSL reads it.
// - Over TLS 1.2 a renegotiation the server asks for (its HelloRequest, as
//   Apache's per-location client certificates do) cannot be made: this
//   connection ends, its request goes out again on a new one, and the
//   worker's connections from then on keep their records in user space.
void on_kernel_tls_handshake(const SSL* ssl, int where, int) {
  if ((where & SSL_CB_LOOP) != 0 && SSL_get_state(ssl) == TLS_ST_CR_SRVR_HELLO &&
      SSL_version(ssl) == TLS1_3_VERSION) {
    // The callback's SSL is this connection's own, handed back as const.
    SSL_clear_options(const_cast<SSL*>(ssl), SSL_OP_ENABLE_KTLS);
  }
  if ((where & SSL_CB_HANDSHAKE_START) != 0 &&
      (BIO_get_ktls_send(SSL_get_wbio(ssl)) || BIO_get_ktls_recv(SSL_get_rbio(ssl)))) {
    static_cast<ConnectionOwner*>(SSL_get_app_data(ssl))->refuse_kernel_tls();
  }
}

}  // namespace

void Connection::start_tls() {
  ssl_.reset(SSL_new(worker_.tls()->native_handle()));
  if (!ssl_) return fail(Outcome::connect, take_tls_error(SSL_ERROR_SSL));
  if (on_ring_) {
    BIO* records = tls_records_.new_bio();
    if (records == nullptr) return fail(Outcome::connect, take_tls_error(SSL_ERROR_SSL));
    SSL_set_bio(ssl_.get(), records, records);
  } else {
    if (SSL_set_fd(ssl_.get(), plain_.get()) != 1) {
      return fail(Outcome::connect, take_tls_error(SSL_ERROR_SSL));
    }
    BIO* socket_bio = SSL_get_rbio(ssl_.get());
    BIO_set_callback_arg(socket_bio, reinterpret_cast<char*>(&tls_socket_drained_));
    BIO_set_callback_ex(socket_bio, note_socket_read);
  }
  const RunPlan& plan = worker_.plan();
  configure_tls_connection(ssl_.get(), plan.target, host_is_ip_, plan.tls, &tls_session_);
  // The records to the kernel after a TLS 1.2 handshake, where it can take
  // them, for connections kept alive: a connection for one exchange would
  // pay the handover (three setsockopt calls, the kernel's cipher setup) for
  // a single response (reasoned, not measured: no kernel here to time it).
  // OpenSSL stays in user space when the kernel refuses this connection,
  // over TLS 1.3, and once a server asked for a renegotiation
  // (on_kernel_tls_handshake).
  if (!on_ring_ && plan.keep_alive && worker_.kernel_tls_allowed() && kernel_tls_available()) {
    SSL_set_options(ssl_.get(), SSL_OP_ENABLE_KTLS);
    SSL_set_app_data(ssl_.get(), &worker_);
    SSL_set_info_callback(ssl_.get(), on_kernel_tls_handshake);
  }
  // A whole response in one recv(2) (one read of the records received), not
  // a record header and then its body.
  SSL_set_read_ahead(ssl_.get(), 1);
  // A request larger than a record goes out record by record, each counted
  // in bytes_out_ as it leaves.
  SSL_set_mode(ssl_.get(), SSL_MODE_ENABLE_PARTIAL_WRITE);
  SSL_set_connect_state(ssl_.get());
  handshaking_ = true;
  continue_handshake();
}

void Connection::continue_handshake() {
  const int done = SSL_do_handshake(ssl_.get());
  if (done == 1) {
    handshaking_ = false;
    if (const int e = want_writable(false)) return fail(Outcome::connect, system_error(e));
    tls_handshake_ = true;
    tls_resumed_ = SSL_session_reused(ssl_.get()) == 1;
    tls_kernel_send_ = BIO_get_ktls_send(SSL_get_wbio(ssl_.get()));
    tls_kernel_receive_ = BIO_get_ktls_recv(SSL_get_rbio(ssl_.get()));
    const Clock::time_point now = Clock::now();
    timings_.connect_us = micros_between(connect_started_, now);
    return write_request(now);
  }
  const int error = SSL_get_error(ssl_.get(), done);
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
    // On the ring the flight OpenSSL wrote goes out now; the answer comes
    // through the socket's receive.
    if (on_ring_) return send_tls_records();
    if (const int e = want_writable(error == SSL_ERROR_WANT_WRITE)) {
      return fail(Outcome::connect, system_error(e));
    }
    return;
  }
  const boost::system::error_code ec = take_tls_error(error);
  // Not offered again: the next connection starts afresh
  // (configure_tls_connection).
  tls_session_.reset();
  fail(Outcome::connect, ec);
}

void Connection::send_tls() {
  const std::string& wire = slot_.outgoing->wire;
  while (unsent_ < wire.size()) {
    const int sent =
        SSL_write(ssl_.get(), wire.data() + unsent_,
                  static_cast<int>(std::min<std::size_t>(wire.size() - unsent_, INT_MAX)));
    if (sent > 0) {
      unsent_ += static_cast<std::size_t>(sent);
      bytes_out_ += static_cast<uint64_t>(sent);
      continue;
    }
    const int error = SSL_get_error(ssl_.get(), sent);
    if (error != SSL_ERROR_WANT_WRITE && error != SSL_ERROR_WANT_READ) {
      const boost::system::error_code ec = take_tls_error(error);
      return fail_later(Outcome::write,
                        ec.category() == boost::system::system_category() ? ec.value() : EPROTO);
    }
    // Repeated from on_tls_event with the same arguments (unsent_ has not
    // moved); a wish to read is met by the readable events always asked for.
    return wait_to_send(error == SSL_ERROR_WANT_WRITE);
  }
  request_sent();
}

void Connection::on_tls_event(uint32_t events) {
  if (handshaking_) return continue_handshake();
  const uint32_t generation = generation_;
  if (sending_) {
    // As on the plain path: what came meanwhile (the peer's close) is read
    // once the request went.
    events_while_sending_ |= events;
    send_tls();
    if (sending_ || generation != generation_ || !plain_.is_open()) return;
    events = std::exchange(events_while_sending_, 0);
  }
  // Room to write was asked for by a read (a key update's answer): it is
  // repeated now, and asks again if it must.
  if (const int e = want_writable(false)) return fail(Outcome::read, system_error(e));
  receive_tls((events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
}

void Connection::receive_tls(bool peer_closed) {
  // Edge-triggered: read until OpenSSL has nothing left and the socket has
  // nothing more (a short read, or one that would block), or this socket
  // closed (a response that completes may close it, and its next request
  // open another: that one's events are its own).
  const uint32_t generation = generation_;
  while (socket_open() && generation == generation_) {
    const int received = SSL_read(ssl_.get(), read_buffer_.get(), kReadBufferSize);
    const int error = received > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_.get(), received);
    // A post-handshake message (a session ticket, a key update) is taken in
    // by SSL_read without data for us.
    if (error == SSL_ERROR_WANT_READ) return;
    if (error == SSL_ERROR_WANT_WRITE) {
      // A key update's answer waits for room; what was read stays buffered.
      if (const int e = want_writable(true)) return fail(Outcome::read, system_error(e));
      return;
    }
    if (busy_ && !want_read_) {
      // A request still being written (its write waits for room, or for a
      // renegotiation's answer) finds the connection ended, or unasked-for
      // data: a failed write, sent again on a new connection as on a stale
      // one.
      int cause = EPIPE;
      if (error != SSL_ERROR_NONE) {
        const boost::system::error_code ec = take_tls_error(error);
        if (ec && ec.category() == boost::system::system_category()) cause = ec.value();
      }
      return fail_later(Outcome::write, cause);
    }
    if (!busy_) {
      // Between requests: the server closed the kept-alive connection (or
      // sent what nothing asked for). Closed now, the next request connects.
      if (error != SSL_ERROR_NONE) take_tls_error(error);
      return close();
    }
    want_read_ = false;
    if (error == SSL_ERROR_ZERO_RETURN) return on_read(asio::error::eof, nullptr, 0);
    if (error != SSL_ERROR_NONE) return on_read(take_tls_error(error), nullptr, 0);
    on_read({}, read_buffer_.get(), static_cast<std::size_t>(received));
    if (generation != generation_ || !socket_open()) return;
    // All there was is read: what comes next is a new event (a completion
    // on the ring). On epoll this saves the read(2) that would find the
    // socket empty, one per response; not where the kernel decrypts (kTLS
    // receive): OpenSSL then reads record by record with recvmsg(2), and a
    // short read need not mean the socket is empty. On the ring it saves the
    // SSL_read that would find the receive's records all read.
    const bool all_read = on_ring_
                              ? !tls_records_.unread()
                              : tls_socket_drained_ && !BIO_get_ktls_recv(SSL_get_rbio(ssl_.get()));
    if (all_read && !peer_closed && SSL_has_pending(ssl_.get()) == 0) return;
  }
}

int Connection::want_writable(bool writable) noexcept {
  // On the ring a send waits for room itself, and OpenSSL's writes never do.
  if (on_ring_ || writable == writable_wanted_) return 0;
  writable_wanted_ = writable;
  // Readable always; room to write only while something waits for it (not
  // on every ACK).
  const uint32_t events =
      EPOLLIN | EPOLLRDHUP | EPOLLET | (writable ? static_cast<uint32_t>(EPOLLOUT) : 0U);
  return worker_.event_loop()->modify(plain_.get(), events, owner());
}

}  // namespace kubeload::loadgen
