#pragma once
// HTTP/1.1 over TLS on io_uring: the records between OpenSSL and the ring.
// There the ring moves the bytes, completing later, so OpenSSL cannot read
// and write the socket itself (as it does on epoll, connection_tls.cpp,
// where kTLS needs its socket BIO). It reads the records of the receive
// being handled, straight from the ring's buffer, and writes its records
// into a buffer the connection then sends: a BIO of our own. OpenSSL's
// memory BIO would copy each received record once more, into the BIO, before
// OpenSSL copies it into its own buffer.
//
// One send at a time: what OpenSSL writes while a send is in flight waits
// for it (the ring's send may still read the buffer it was given).

#include <openssl/bio.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace kubeload::loadgen {

class TlsRecords {
 public:
  TlsRecords() = default;
  // The BIO keeps a pointer to this.
  TlsRecords(const TlsRecords&) = delete;
  TlsRecords& operator=(const TlsRecords&) = delete;

  // A new BIO over these records, for SSL_set_bio (the SSL owns it); null
  // when OpenSSL could not make one (its error queue says why).
  BIO* new_bio();

  // The records a receive brought: OpenSSL reads them until it wants more
  // (SSL_read or SSL_do_handshake then say SSL_ERROR_WANT_READ). Valid
  // until forget_received(), which is called before the ring reuses its
  // buffer.
  void received(std::span<const char> records) noexcept { received_ = records; }
  // The peer closed: once the records received are read, OpenSSL reads the
  // end of the stream.
  void received_end() noexcept { end_of_stream_ = true; }
  void forget_received() noexcept { received_ = {}; }
  // OpenSSL has not yet read all of the receive's records.
  bool unread() const noexcept { return !received_.empty(); }

  // `bytes` of a request went into records (SSL_write): counted as sent
  // once the send carrying them is whole.
  void wrote_request_bytes(std::size_t bytes) noexcept { request_bytes_written_ += bytes; }
  // Records are waiting and no send is in flight.
  bool ready_to_send() const noexcept { return !written_.empty() && !sending(); }
  bool sending() const noexcept { return sent_ < in_flight_.size(); }
  // Makes the waiting records the send in flight: what to send.
  std::span<const char> start_send() noexcept;
  // The kernel took `bytes` more of the send in flight.
  void sent(std::size_t bytes) noexcept { sent_ += bytes; }
  // What of the send in flight is still to go (after a short send).
  std::span<const char> unsent() const noexcept {
    return std::span<const char>(in_flight_).subspan(sent_);
  }
  // The send went whole: the request bytes it carried (wrote_request_bytes).
  uint64_t finish_send() noexcept;

  // The connection closed: nothing kept for the next one.
  void clear() noexcept;

 private:
  // How OpenSSL reaches a TlsRecords (BIO_get_data).
  static const BIO_METHOD* method();
  static int read(BIO* bio, char* out, std::size_t size, std::size_t* read);
  static int write(BIO* bio, const char* in, std::size_t size, std::size_t* written);
  static long control(BIO* bio, int command, long number, void* pointer);

  std::span<const char> received_;
  bool end_of_stream_ = false;
  std::string written_;    // records OpenSSL wrote since the last send started
  std::string in_flight_;  // the records the send in flight carries
  std::size_t sent_ = 0;   // of in_flight_
  uint64_t request_bytes_written_ = 0;
  uint64_t request_bytes_in_flight_ = 0;
};

}  // namespace kubeload::loadgen
