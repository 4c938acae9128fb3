#include "loadgen/engine/tls_records.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace kubeload::loadgen {

// Made once per process (thread-safe, as a static's initialization is) and
// never changed after; it lives as long as the process.
const BIO_METHOD* TlsRecords::method() {
  static const BIO_METHOD* const made = []() -> BIO_METHOD* {
    BIO_METHOD* m =
        BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "kubeload TLS records");
    if (m == nullptr) return nullptr;
    if (BIO_meth_set_read_ex(m, &TlsRecords::read) != 1 ||
        BIO_meth_set_write_ex(m, &TlsRecords::write) != 1 ||
        BIO_meth_set_ctrl(m, &TlsRecords::control) != 1) {
      BIO_meth_free(m);
      return nullptr;
    }
    return m;
  }();
  return made;
}

BIO* TlsRecords::new_bio() {
  const BIO_METHOD* records = method();
  if (records == nullptr) return nullptr;
  BIO* bio = BIO_new(records);
  if (bio == nullptr) return nullptr;
  BIO_set_data(bio, this);
  BIO_set_init(bio, 1);
  end_of_stream_ = false;
  return bio;
}

int TlsRecords::read(BIO* bio, char* out, std::size_t size, std::size_t* read) {
  auto& records = *static_cast<TlsRecords*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  if (records.received_.empty()) {
    *read = 0;
    // Nothing more until the next receive: OpenSSL asks again then. At the
    // end of the stream no retry is flagged, which OpenSSL reads as EOF.
    if (!records.end_of_stream_) BIO_set_retry_read(bio);
    return 0;
  }
  const std::size_t taken = std::min(size, records.received_.size());
  std::memcpy(out, records.received_.data(), taken);
  records.received_ = records.received_.subspan(taken);
  *read = taken;
  return 1;
}

int TlsRecords::write(BIO* bio, const char* in, std::size_t size, std::size_t* written) {
  auto& records = *static_cast<TlsRecords*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  records.written_.append(in, size);
  *written = size;
  return 1;
}

long TlsRecords::control(BIO* bio, int command, long, void*) {
  const auto& records = *static_cast<const TlsRecords*>(BIO_get_data(bio));
  switch (command) {
    case BIO_CTRL_FLUSH:
      // The connection sends what was written once the SSL call returns.
      return 1;
    case BIO_CTRL_PENDING:
      return static_cast<long>(records.received_.size());
    case BIO_CTRL_EOF:
      return records.received_.empty() && records.end_of_stream_ ? 1 : 0;
    default:
      // Not asked of a source/sink BIO with nothing pushed on it, or not
      // supported (kTLS among them: the kernel never sees these records).
      return 0;
  }
}

std::span<const char> TlsRecords::start_send() noexcept {
  // The buffers swap: the one the last send read gets the next records,
  // keeping its capacity (no allocation per request).
  std::swap(written_, in_flight_);
  written_.clear();
  sent_ = 0;
  request_bytes_in_flight_ = std::exchange(request_bytes_written_, 0);
  return in_flight_;
}

uint64_t TlsRecords::finish_send() noexcept {
  in_flight_.clear();
  sent_ = 0;
  return std::exchange(request_bytes_in_flight_, 0);
}

void TlsRecords::clear() noexcept {
  received_ = {};
  end_of_stream_ = false;
  written_.clear();
  in_flight_.clear();
  sent_ = 0;
  request_bytes_written_ = 0;
  request_bytes_in_flight_ = 0;
}

}  // namespace kubeload::loadgen
