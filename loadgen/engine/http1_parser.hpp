#pragma once
// Incremental HTTP/1.x response parser for the load generator's hot path.
// It keeps a fixed amount of state (no heap allocation, ever), discards the
// body while counting it, and reports how the response was framed. Whatever a
// server sends (garbage, a 1 GB header, an endless body, nothing) it costs
// bounded memory: the header section is limited, the body is only counted.
//
// A scenario step needs the response itself (extraction, checks, cookies):
// with a Capture set, the final response's header section and its decoded
// body (up to a bound) are copied into buffers the caller owns and reuses, so
// capturing allocates only while those buffers grow. Without one the parser
// pays a single predictable branch per span of body or head it consumes.
//
// Framing follows RFC 9112 §6.3. What real servers send beyond the letter of
// the RFC is accepted: lines ending in a bare LF, no space before an empty
// reason phrase, stray empty lines before a status line, and a Content-Length
// list of equal values. obs-fold (a header line starting with whitespace) is
// rejected as malformed_header.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/scenario/response.hpp"

namespace kubeload::loadgen {

class Http1ResponseParser {
 public:
  enum class Status { need_more, complete, error };
  enum class Error {
    none,
    malformed_status_line,
    malformed_header,
    header_too_large,  // status line + headers (or trailers) exceed Limits::max_header_bytes
    // The next two are reported only when that field would frame the body (not
    // for HEAD, 1xx, 204, 304, nor a Content-Length next to Transfer-Encoding).
    bad_content_length,     // not a number, overflow of 64 bits, or conflicting values
    bad_transfer_encoding,  // chunked applied twice, or a field without any coding
    bad_chunk,              // malformed or overlong chunk-size line, size over 64 bits, or
                            // missing CRLF after a chunk
    unexpected_eof,         // the connection closed before the response was complete
  };
  struct Limits {
    // Per response, 1xx responses included. The trailer section of a chunked
    // body and each chunk-size line (with its extensions) get the same bound.
    std::size_t max_header_bytes = 64 * 1024;
  };

  // Where a captured response goes. The caller owns it (one per virtual user
  // or connection) and keeps it alive while it is set; the strings keep their
  // capacity across responses.
  struct Capture {
    // A body that a scenario reads (JSON, a token in HTML) is small; a larger
    // one is counted in body_bytes() but only its first max_body bytes kept.
    static constexpr std::size_t default_max_body = 1024 * 1024;

    // The final response's header section as received: any stray empty lines
    // before the status line, the status line, the fields and the empty line
    // that ends them; 1xx interim responses before it are left out. Bounded
    // by Limits::max_header_bytes. Read it with split_header_fields().
    std::string head;
    // The body with the chunked framing removed (chunk sizes, extensions and
    // trailers are not in it); Content-Length and close-delimited bodies as
    // sent. Empty for HEAD, 1xx, 204 and 304.
    std::string body;
    std::size_t max_body = default_max_body;
    bool body_truncated = false;  // the body was longer than max_body

    void clear() noexcept {
      head.clear();
      body.clear();
      body_truncated = false;
    }
  };

  Http1ResponseParser() noexcept : Http1ResponseParser(Limits{}) {}
  explicit Http1ResponseParser(Limits limits) noexcept;

  // Prepares for the next response. `head_request`: the response has no body
  // whatever its headers say. Clears the capture, if one is set.
  void reset(bool head_request) noexcept;

  // Captures the responses parsed from the next reset() on into `capture`;
  // nullptr stops capturing. What a capture holds after an error is whatever
  // had arrived, and not meant to be read.
  void set_capture(Capture* capture) noexcept { capture_ = capture; }
  Capture* capture() const noexcept { return capture_; }

  // Consumes bytes of the response. Returns how many were consumed: all of
  // them while status() is need_more; on complete, the bytes after the end of
  // this response are left unconsumed; on error, the count is unspecified.
  std::size_t feed(const char* data, std::size_t size) noexcept;

  // The peer closed the connection: completes a body delimited by close,
  // otherwise an error (unexpected_eof), unless already complete.
  void finish_eof() noexcept;

  Status status() const noexcept { return status_; }
  Error error() const noexcept { return error_; }
  // The final (non-1xx) response's header section was read and framed the
  // body; false after an error in the header section.
  bool headers_complete() const noexcept;

  // Of the final response (1xx interim responses are skipped).
  int status_code() const noexcept { return status_code_; }
  int http_minor_version() const noexcept { return minor_version_; }
  // Whether the connection can carry another request: false for
  // `Connection: close`, HTTP/1.0 without `Connection: keep-alive`, bodies
  // delimited by close, 101, chunked framing that also carries Content-Length
  // or comes from HTTP/1.0 (RFC 9112 §6.1), before the final headers, and
  // after an error.
  bool keep_alive() const noexcept;
  std::uint64_t body_bytes() const noexcept { return body_bytes_; }    // decoded body length
  std::uint64_t total_bytes() const noexcept { return total_bytes_; }  // all bytes consumed

 private:
  // Where the parser is in the byte stream. The header section and the trailer
  // section share one line-oriented state machine (HeadState); the body phases
  // skip whole spans.
  enum class Phase : std::uint8_t {
    head,             // status line and header fields, 1xx interim responses included
    length_body,      // Content-Length body: remaining_ bytes to go
    close_body,       // body delimited by the connection closing
    chunk_size_line,  // chunk-size [extensions] CRLF
    chunk_data,       // remaining_ bytes of the current chunk
    chunk_data_end,   // the CRLF after a chunk's data
    trailers,         // trailer fields after the last chunk, up to the empty line
    done,             // complete (an error leaves the phase where it happened)
  };
  enum class HeadState : std::uint8_t {
    status_line_start,
    leading_empty_line_lf,  // a stray CRLF before the status line, tolerated
    version,                // inside "HTTP/1."; match_index_ counts matched bytes
    minor_version,
    version_space,
    status_code,  // match_index_ counts the digits
    after_status_code,
    reason,
    status_line_lf,
    field_start,
    field_name_known,  // the name so far is a prefix of a field we interpret
    field_name_other,
    value_leading_ows,
    value_other,  // a value we do not interpret: skipped up to LF
    value_content_length,
    value_list,  // Transfer-Encoding or Connection: a list of tokens
    value_lf,
    section_end_lf,
  };
  enum class Field : std::uint8_t { other, content_length, transfer_encoding, connection };
  enum class ChunkLineState : std::uint8_t { first_digit, digits, extension, lf };

  // Each returns where it stopped: past what it consumed, or at the byte that
  // caused an error.
  const char* parse_head(const char* p, const char* end) noexcept;
  const char* parse_chunk_size_line(const char* p, const char* end) noexcept;
  const char* parse_chunk_data_end(const char* p, const char* end) noexcept;
  const char* consume_length_body(const char* p, const char* end) noexcept;

  void start_response_head() noexcept;
  void start_list_element() noexcept;
  void start_chunk_size_line() noexcept;
  void finish_chunk_size_line() noexcept;
  static Field lookup_field(const char* name, std::size_t size) noexcept;
  bool add_name_byte(char c) noexcept;  // false: no interpreted field has this name
  void finish_content_length_element() noexcept;
  void finish_list_element() noexcept;
  void finish_field_value() noexcept;
  void finish_head_section() noexcept;
  void choose_framing() noexcept;
  void complete() noexcept;
  void fail(Error error) noexcept;
  void capture_head(const char* from, const char* to);
  void capture_body(const char* from, std::size_t size);

  Limits limits_;
  Capture* capture_ = nullptr;
  // A 1xx interim response ended in the span parse_head() last returned (it
  // returns right there, so that span ends with it): a capture drops the head
  // kept so far instead of adding to it.
  bool interim_ended_ = false;
  Status status_ = Status::need_more;
  Error error_ = Error::none;
  bool head_request_ = false;
  int status_code_ = 0;
  int minor_version_ = 1;
  std::uint64_t body_bytes_ = 0;
  std::uint64_t total_bytes_ = 0;

  Phase phase_ = Phase::head;
  HeadState head_state_ = HeadState::status_line_start;
  ChunkLineState chunk_line_state_ = ChunkLineState::first_digit;
  bool chunk_end_seen_cr_ = false;
  bool persistent_ = false;  // keep_alive() once the final headers are in
  // Bytes of the current section (header section including every 1xx, or the
  // trailer section) and of the current chunk-size line, against the limit.
  std::size_t section_bytes_ = 0;
  std::size_t chunk_line_bytes_ = 0;
  std::uint64_t remaining_ = 0;  // of the Content-Length body or the current chunk
  std::uint64_t chunk_size_ = 0;

  // Header fields of the response being parsed, reset for each 1xx.
  Field field_ = Field::other;
  std::uint8_t match_index_ = 0;      // bytes matched of the version or a field name
  std::uint8_t name_candidates_ = 0;  // bitmask of interpreted field names still matching
  bool has_content_length_ = false;
  bool content_length_invalid_ = false;  // reported only if Content-Length frames the body
  std::uint64_t content_length_ = 0;
  std::uint64_t number_ = 0;  // the Content-Length list element being parsed
  bool number_has_digits_ = false;
  bool number_ended_ = false;  // whitespace after the digits: only ',' or the end may follow
  bool has_transfer_encoding_ = false;
  bool transfer_encoding_invalid_ = false;  // reported only if the body is framed by it
  bool chunked_seen_ = false;
  bool chunked_is_final_ = false;
  bool connection_close_ = false;
  bool connection_keep_alive_ = false;
  std::uint8_t field_elements_ = 0;  // non-empty list elements in this field line (saturating)

  // The current token of a Transfer-Encoding or Connection list, lowercased.
  // Only short tokens can match ("keep-alive" is the longest we look for), so a
  // longer one is only marked as a mismatch.
  char element_[12] = {};
  std::uint8_t element_size_ = 0;
  bool element_mismatch_ = false;
  bool element_ended_ = false;  // whitespace after the token
};

// A header field of a captured head, viewing the head's bytes (name as
// received, any case; value without the whitespace around it): the field
// extraction, checks and the cookie jar read, so a step hands them over as
// they are.
using CapturedHeader = scenario::Header;

// Replaces `out` with the header fields of `head` (a Capture::head) in the
// order received, repeated names (Set-Cookie) each on its own. Stray empty
// lines and the status line are skipped; lines end in CRLF or a bare LF, as
// the parser accepts. Allocates only while `out` grows: a caller that keeps
// its vector pays nothing per response once it has the capacity.
void split_header_fields(std::string_view head, std::vector<CapturedHeader>& out);

}  // namespace kubeload::loadgen
