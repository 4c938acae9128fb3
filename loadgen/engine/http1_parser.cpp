#include "loadgen/engine/http1_parser.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>
#include <type_traits>

#include "kubeload/text.hpp"

namespace kubeload::loadgen {
namespace {

// RFC 9110 §5.6.2 tchar.
constexpr std::array<bool, 256> make_token_table() noexcept {
  std::array<bool, 256> table{};
  for (int c = '0'; c <= '9'; ++c) table[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) table[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) table[static_cast<unsigned char>(c)] = true;
  return table;
}
constexpr std::array<bool, 256> token_table = make_token_table();

bool is_token(char c) noexcept {
  return token_table[static_cast<unsigned char>(c)];
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr std::string_view http_version_prefix = "HTTP/1.";

// The header fields that decide framing and persistence. Bit i of a candidate
// mask stands for known_field_names[i], which is Field value i + 1.
constexpr std::array<std::string_view, 3> known_field_names = {"content-length",
                                                               "transfer-encoding", "connection"};
constexpr std::uint8_t all_known_fields = (1u << known_field_names.size()) - 1;

// "HTTP/1.x SSS"
constexpr std::size_t status_line_prefix_size = 12;

bool equals_lowercase(const char* text, std::string_view lowercase) noexcept {
  for (std::size_t i = 0; i < lowercase.size(); ++i) {
    if (ascii_lower(text[i]) != lowercase[i]) return false;
  }
  return true;
}

std::size_t span_size(const char* p, const char* end) noexcept {
  return static_cast<std::size_t>(end - p);
}

}  // namespace

Http1ResponseParser::Http1ResponseParser(Limits limits) noexcept : limits_(limits) {}

void Http1ResponseParser::reset(bool head_request) noexcept {
  // Every member has a default initialiser and nothing to destroy, so starting
  // over is constructing again in place. (Assigning a temporary instead costs a
  // copy through the stack, measurable at millions of responses per second.)
  static_assert(std::is_trivially_destructible_v<Http1ResponseParser>);
  const Limits limits = limits_;
  Capture* const capture = capture_;
  std::construct_at(this, limits);
  head_request_ = head_request;
  capture_ = capture;
  if (capture_ != nullptr) capture_->clear();
}

bool Http1ResponseParser::headers_complete() const noexcept {
  // fail() leaves phase_ alone, so an error in the header section keeps this false.
  return phase_ != Phase::head;
}

bool Http1ResponseParser::keep_alive() const noexcept {
  return persistent_ && status_ != Status::error;
}

std::size_t Http1ResponseParser::feed(const char* data, std::size_t size) noexcept {
  if (status_ != Status::need_more) return 0;
  const char* p = data;
  const char* const end = data + size;
  while (p < end && status_ == Status::need_more) {
    switch (phase_) {
      case Phase::head: {
        const char* const from = p;
        p = parse_head(p, end);
        if (capture_ != nullptr) [[unlikely]]
          capture_head(from, p);
        break;
      }
      case Phase::trailers:
        p = parse_head(p, end);
        break;
      case Phase::length_body:
        if (capture_ != nullptr) [[unlikely]] {
          capture_body(p, std::min<std::uint64_t>(remaining_, span_size(p, end)));
        }
        p = consume_length_body(p, end);
        break;
      case Phase::close_body:
        if (capture_ != nullptr) [[unlikely]]
          capture_body(p, span_size(p, end));
        body_bytes_ += span_size(p, end);
        p = end;
        break;
      case Phase::chunk_size_line:
        p = parse_chunk_size_line(p, end);
        break;
      case Phase::chunk_data: {
        const std::uint64_t n = std::min<std::uint64_t>(remaining_, span_size(p, end));
        if (capture_ != nullptr) [[unlikely]]
          capture_body(p, n);
        body_bytes_ += n;
        remaining_ -= n;
        p += n;
        if (remaining_ == 0) {
          phase_ = Phase::chunk_data_end;
          chunk_end_seen_cr_ = false;
        }
        break;
      }
      case Phase::chunk_data_end:
        p = parse_chunk_data_end(p, end);
        break;
      case Phase::done:
        return 0;  // unreachable: complete() sets status_ too
    }
  }
  const std::size_t consumed = span_size(data, p);
  total_bytes_ += consumed;
  return consumed;
}

void Http1ResponseParser::finish_eof() noexcept {
  if (status_ != Status::need_more) return;
  if (phase_ == Phase::close_body) {
    complete();
  } else {
    fail(Error::unexpected_eof);
  }
}

void Http1ResponseParser::complete() noexcept {
  phase_ = Phase::done;
  status_ = Status::complete;
}

void Http1ResponseParser::fail(Error error) noexcept {
  status_ = Status::error;
  error_ = error;
}

// Called only while capturing. Appending may allocate until the caller's
// buffers have grown; feed() is noexcept, so running out of memory there ends
// the process, as it would anywhere else in a worker.
void Http1ResponseParser::capture_head(const char* from, const char* to) {
  if (interim_ended_) {
    // parse_head() returned at the end of a 1xx response: everything kept so
    // far, and this span, belonged to interim responses.
    interim_ended_ = false;
    capture_->head.clear();
    return;
  }
  capture_->head.append(from, span_size(from, to));
}

void Http1ResponseParser::capture_body(const char* from, std::size_t size) {
  std::string& body = capture_->body;
  const std::size_t room = capture_->max_body - std::min(capture_->max_body, body.size());
  if (size > room) capture_->body_truncated = true;
  body.append(from, std::min(size, room));
}

const char* Http1ResponseParser::consume_length_body(const char* p, const char* end) noexcept {
  const std::uint64_t n = std::min<std::uint64_t>(remaining_, span_size(p, end));
  body_bytes_ += n;
  remaining_ -= n;
  if (remaining_ == 0) complete();
  return p + n;
}

// The header section (and the trailer section, which has the same syntax) is
// parsed byte by byte except for the parts we ignore (the reason phrase and
// uninterpreted field values), which are skipped with memchr. The scan never
// goes past the section's remaining budget, so an oversized section is
// detected at the first byte over the limit.
const char* Http1ResponseParser::parse_head(const char* p, const char* end) noexcept {
  const std::size_t budget = limits_.max_header_bytes - section_bytes_;
  const char* const start = p;
  const char* const limit = p + std::min(span_size(p, end), budget);

  while (p < limit) {
    const char c = *p;
    switch (head_state_) {
      case HeadState::status_line_start:
        // The common case, "HTTP/1.1 200" in one span, without the byte-by-byte states.
        if (span_size(p, limit) >= status_line_prefix_size &&
            std::memcmp(p, http_version_prefix.data(), http_version_prefix.size()) == 0 &&
            is_digit(p[7]) && p[8] == ' ' && p[9] >= '1' && p[9] <= '9' && is_digit(p[10]) &&
            is_digit(p[11])) {
          minor_version_ = p[7] - '0';
          status_code_ = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
          head_state_ = HeadState::after_status_code;
          p += status_line_prefix_size;
          break;
        }
        if (c == 'H') {
          status_code_ = 0;
          match_index_ = 1;
          head_state_ = HeadState::version;
        } else if (c == '\r') {
          head_state_ = HeadState::leading_empty_line_lf;
        } else if (c != '\n') {
          fail(Error::malformed_status_line);
          return p;
        }
        ++p;
        break;

      case HeadState::leading_empty_line_lf:
        if (c != '\n') {
          fail(Error::malformed_status_line);
          return p;
        }
        head_state_ = HeadState::status_line_start;
        ++p;
        break;

      case HeadState::version:
        if (c != http_version_prefix[match_index_]) {
          fail(Error::malformed_status_line);
          return p;
        }
        if (++match_index_ == http_version_prefix.size()) head_state_ = HeadState::minor_version;
        ++p;
        break;

      case HeadState::minor_version:
        if (!is_digit(c)) {
          fail(Error::malformed_status_line);
          return p;
        }
        minor_version_ = c - '0';
        head_state_ = HeadState::version_space;
        ++p;
        break;

      case HeadState::version_space:
        if (c != ' ') {
          fail(Error::malformed_status_line);
          return p;
        }
        match_index_ = 0;
        head_state_ = HeadState::status_code;
        ++p;
        break;

      case HeadState::status_code:
        // Three digits; a status code below 100 does not exist.
        if (!is_digit(c) || (match_index_ == 0 && c == '0')) {
          fail(Error::malformed_status_line);
          return p;
        }
        status_code_ = status_code_ * 10 + (c - '0');
        if (++match_index_ == 3) head_state_ = HeadState::after_status_code;
        ++p;
        break;

      case HeadState::after_status_code:
        // Some servers omit the space before an empty reason phrase.
        if (c == ' ') {
          head_state_ = HeadState::reason;
        } else if (c == '\r') {
          head_state_ = HeadState::status_line_lf;
        } else if (c == '\n') {
          head_state_ = HeadState::field_start;
        } else {
          fail(Error::malformed_status_line);
          return p;
        }
        ++p;
        break;

      case HeadState::reason:
      case HeadState::value_other: {
        // Neither is interpreted; a CR before the LF is part of the skipped text.
        const void* lf = std::memchr(p, '\n', span_size(p, limit));
        if (lf == nullptr) {
          p = limit;
        } else {
          p = static_cast<const char*>(lf) + 1;
          head_state_ = HeadState::field_start;
        }
        break;
      }

      case HeadState::status_line_lf:
        if (c != '\n') {
          fail(Error::malformed_status_line);
          return p;
        }
        head_state_ = HeadState::field_start;
        ++p;
        break;

      case HeadState::field_start:
        if (c == '\r') {
          head_state_ = HeadState::section_end_lf;
          ++p;
          break;
        }
        if (c == '\n') {
          ++p;
          finish_head_section();
          if (phase_ != Phase::head || status_ != Status::need_more) return p;
          // A 1xx response ended. Return right at its end, so that a capture
          // sees where it ended; the next response shares this section's budget.
          section_bytes_ += span_size(start, p);
          return p;
        }
        // A leading space is obs-fold (or a field hiding behind one); reject both.
        if (!is_token(c)) {
          fail(Error::malformed_header);
          return p;
        }
        {
          // Usually the whole name is in this span: scan it at once and look
          // it up. Otherwise remember which interpreted names its prefix could
          // still become and continue byte by byte in the next feed.
          const char* const name = p;
          do {
            ++p;
          } while (p < limit && is_token(*p));
          const std::size_t name_size = span_size(name, p);
          if (p == limit) {
            match_index_ = 0;
            name_candidates_ = phase_ == Phase::trailers ? 0 : all_known_fields;
            for (const char* q = name; q < p && name_candidates_ != 0; ++q) add_name_byte(*q);
            head_state_ =
                name_candidates_ != 0 ? HeadState::field_name_known : HeadState::field_name_other;
            break;
          }
          if (*p != ':') {
            fail(Error::malformed_header);  // no colon, or whitespace before it
            return p;
          }
          field_ = phase_ == Phase::trailers ? Field::other : lookup_field(name, name_size);
          head_state_ = HeadState::value_leading_ows;
          ++p;
        }
        break;

      case HeadState::field_name_known:
        if (is_token(c)) {
          if (!add_name_byte(c)) head_state_ = HeadState::field_name_other;
          ++p;
          break;
        }
        if (c != ':') {
          fail(Error::malformed_header);  // no colon, or whitespace before it
          return p;
        }
        field_ = Field::other;
        for (std::size_t i = 0; i < known_field_names.size(); ++i) {
          if ((name_candidates_ & (1u << i)) != 0 && known_field_names[i].size() == match_index_) {
            field_ = static_cast<Field>(i + 1);
          }
        }
        head_state_ = HeadState::value_leading_ows;
        ++p;
        break;

      case HeadState::field_name_other:
        while (p < limit && is_token(*p)) ++p;
        if (p == limit) break;
        if (*p != ':') {
          fail(Error::malformed_header);
          return p;
        }
        field_ = Field::other;
        head_state_ = HeadState::value_leading_ows;
        ++p;
        break;

      case HeadState::value_leading_ows:
        if (is_blank(c)) {
          ++p;
          break;
        }
        // The byte is left for the value's own state.
        field_elements_ = 0;
        switch (field_) {
          case Field::other:
            head_state_ = HeadState::value_other;
            break;
          case Field::content_length:
            number_ = 0;
            number_has_digits_ = false;
            number_ended_ = false;
            head_state_ = HeadState::value_content_length;
            break;
          case Field::transfer_encoding:
            has_transfer_encoding_ = true;
            start_list_element();
            head_state_ = HeadState::value_list;
            break;
          case Field::connection:
            start_list_element();
            head_state_ = HeadState::value_list;
            break;
        }
        break;

      case HeadState::value_content_length:
        // A list of equal values ("42, 42") is what a proxy makes of duplicate
        // fields; RFC 9110 §8.6 lets the recipient accept it.
        if (is_digit(c) && !number_ended_) {
          const auto digit = static_cast<std::uint64_t>(c - '0');
          if (number_ > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
            content_length_invalid_ = true;
          }
          number_ = number_ * 10 + digit;
          number_has_digits_ = true;
        } else if (is_blank(c)) {
          number_ended_ = number_has_digits_;
        } else if (c == ',') {
          finish_content_length_element();
        } else if (c == '\r' || c == '\n') {
          finish_field_value();
          head_state_ = c == '\r' ? HeadState::value_lf : HeadState::field_start;
        } else {
          content_length_invalid_ = true;  // a sign, a letter, "4 2", ...
        }
        ++p;
        break;

      case HeadState::value_list:
        if (c == ',') {
          finish_list_element();
        } else if (is_blank(c)) {
          element_ended_ = element_size_ > 0 || element_mismatch_;
        } else if (c == '\r' || c == '\n') {
          finish_field_value();
          head_state_ = c == '\r' ? HeadState::value_lf : HeadState::field_start;
        } else if (element_ended_ || element_size_ == sizeof(element_)) {
          element_mismatch_ = true;
        } else {
          element_[element_size_++] = ascii_lower(c);
        }
        ++p;
        break;

      case HeadState::value_lf:
        if (c != '\n') {
          fail(Error::malformed_header);
          return p;
        }
        head_state_ = HeadState::field_start;
        ++p;
        break;

      case HeadState::section_end_lf:
        if (c != '\n') {
          fail(Error::malformed_header);
          return p;
        }
        ++p;
        finish_head_section();
        if (phase_ != Phase::head || status_ != Status::need_more) return p;
        section_bytes_ += span_size(start, p);  // a 1xx response ended, as above
        return p;
    }
  }

  // The section goes on (a 1xx response and the one after it are one section).
  section_bytes_ += span_size(start, p);
  if (p != end) fail(Error::header_too_large);
  return p;
}

Http1ResponseParser::Field Http1ResponseParser::lookup_field(const char* name,
                                                             std::size_t size) noexcept {
  for (std::size_t i = 0; i < known_field_names.size(); ++i) {
    if (known_field_names[i].size() == size && equals_lowercase(name, known_field_names[i])) {
      return static_cast<Field>(i + 1);
    }
  }
  return Field::other;
}

bool Http1ResponseParser::add_name_byte(char c) noexcept {
  const char lower = ascii_lower(c);
  for (std::size_t i = 0; i < known_field_names.size(); ++i) {
    const std::string_view name = known_field_names[i];
    if (match_index_ >= name.size() || name[match_index_] != lower) {
      name_candidates_ &= static_cast<std::uint8_t>(~(1u << i));
    }
  }
  ++match_index_;
  return name_candidates_ != 0;
}

void Http1ResponseParser::start_list_element() noexcept {
  element_size_ = 0;
  element_mismatch_ = false;
  element_ended_ = false;
}

void Http1ResponseParser::finish_content_length_element() noexcept {
  if (!number_has_digits_) {
    content_length_invalid_ = true;  // empty value or empty list element
  } else if (has_content_length_ && content_length_ != number_) {
    content_length_invalid_ = true;
  }
  has_content_length_ = true;
  content_length_ = number_;
  number_ = 0;
  number_has_digits_ = false;
  number_ended_ = false;
}

void Http1ResponseParser::finish_list_element() noexcept {
  if (element_size_ == 0 && !element_mismatch_) return;  // lists may have empty elements
  if (field_elements_ < std::numeric_limits<std::uint8_t>::max()) ++field_elements_;
  const std::string_view token =
      element_mismatch_ ? std::string_view{} : std::string_view(element_, element_size_);
  if (field_ == Field::transfer_encoding) {
    const bool chunked = token == "chunked";
    if (chunked && chunked_seen_) transfer_encoding_invalid_ = true;  // RFC 9112 §7: only once
    chunked_seen_ = chunked_seen_ || chunked;
    chunked_is_final_ = chunked;
  } else if (token == "close") {
    connection_close_ = true;
  } else if (token == "keep-alive") {
    connection_keep_alive_ = true;
  }
  start_list_element();
}

void Http1ResponseParser::finish_field_value() noexcept {
  switch (field_) {
    case Field::other:
      break;
    case Field::content_length:
      finish_content_length_element();
      break;
    case Field::transfer_encoding:
      finish_list_element();
      if (field_elements_ == 0) transfer_encoding_invalid_ = true;
      break;
    case Field::connection:
      finish_list_element();
      break;
  }
}

void Http1ResponseParser::start_response_head() noexcept {
  head_state_ = HeadState::status_line_start;
  has_content_length_ = false;
  content_length_invalid_ = false;
  content_length_ = 0;
  has_transfer_encoding_ = false;
  transfer_encoding_invalid_ = false;
  chunked_seen_ = false;
  chunked_is_final_ = false;
  connection_close_ = false;
  connection_keep_alive_ = false;
}

void Http1ResponseParser::finish_head_section() noexcept {
  if (phase_ == Phase::trailers) {
    complete();
    return;
  }
  // 1xx responses other than 101 are interim: the final response follows.
  if (status_code_ < 200 && status_code_ != 101) {
    start_response_head();
    interim_ended_ = true;
    return;
  }
  choose_framing();
}

// RFC 9112 §6.3, in its order of precedence. Invalid Content-Length or
// Transfer-Encoding values are errors only where they would frame the body.
void Http1ResponseParser::choose_framing() noexcept {
  const bool http10 = minor_version_ == 0;
  const bool persistent =
      http10 ? connection_keep_alive_ && !connection_close_ : !connection_close_;

  if (head_request_ || status_code_ < 200 || status_code_ == 204 || status_code_ == 304) {
    persistent_ = persistent && status_code_ != 101;  // after 101 the connection is not HTTP
    complete();
    return;
  }
  if (has_transfer_encoding_) {
    if (transfer_encoding_invalid_) {
      fail(Error::bad_transfer_encoding);
    } else if (chunked_is_final_) {
      // Framing that smells of smuggling (§6.1, §6.3): read this response, then close.
      persistent_ = persistent && !http10 && !has_content_length_;
      start_chunk_size_line();
    } else {
      phase_ = Phase::close_body;  // §6.3 item 3: a response without final chunked
    }
    return;
  }
  if (has_content_length_) {
    if (content_length_invalid_) {
      fail(Error::bad_content_length);
      return;
    }
    persistent_ = persistent;
    remaining_ = content_length_;
    phase_ = Phase::length_body;
    if (remaining_ == 0) complete();
    return;
  }
  phase_ = Phase::close_body;
}

void Http1ResponseParser::start_chunk_size_line() noexcept {
  phase_ = Phase::chunk_size_line;
  chunk_line_state_ = ChunkLineState::first_digit;
  chunk_line_bytes_ = 0;
  chunk_size_ = 0;
}

// Chunk extensions are skipped; the line (size and extensions) is bounded like
// a header section so an endless extension cannot pin the connection.
const char* Http1ResponseParser::parse_chunk_size_line(const char* p, const char* end) noexcept {
  const char* const start = p;
  const char* const limit =
      p + std::min(span_size(p, end), limits_.max_header_bytes - chunk_line_bytes_);
  while (p < limit) {
    switch (chunk_line_state_) {
      case ChunkLineState::first_digit: {
        const int digit = hex_value(*p);
        if (digit < 0) {
          fail(Error::bad_chunk);
          return p;
        }
        chunk_size_ = static_cast<std::uint64_t>(digit);
        chunk_line_state_ = ChunkLineState::digits;
        ++p;
        break;
      }
      case ChunkLineState::digits: {
        int digit;
        while (p < limit && (digit = hex_value(*p)) >= 0) {
          if ((chunk_size_ >> 60) != 0) {
            fail(Error::bad_chunk);  // would overflow 64 bits
            return p;
          }
          chunk_size_ = (chunk_size_ << 4) | static_cast<std::uint64_t>(digit);
          ++p;
        }
        if (p == limit) break;
        const char c = *p;
        if (c == ';' || is_blank(c)) {
          chunk_line_state_ = ChunkLineState::extension;  // BWS before ';' included
        } else if (c == '\r') {
          chunk_line_state_ = ChunkLineState::lf;
        } else if (c == '\n') {
          ++p;
          finish_chunk_size_line();
          return p;
        } else {
          fail(Error::bad_chunk);
          return p;
        }
        ++p;
        break;
      }
      case ChunkLineState::extension: {
        const void* lf = std::memchr(p, '\n', span_size(p, limit));
        if (lf == nullptr) {
          p = limit;
          break;
        }
        p = static_cast<const char*>(lf) + 1;
        finish_chunk_size_line();
        return p;
      }
      case ChunkLineState::lf:
        if (*p != '\n') {
          fail(Error::bad_chunk);
          return p;
        }
        ++p;
        finish_chunk_size_line();
        return p;
    }
  }
  chunk_line_bytes_ += span_size(start, p);
  if (p != end) fail(Error::bad_chunk);
  return p;
}

void Http1ResponseParser::finish_chunk_size_line() noexcept {
  if (chunk_size_ == 0) {
    // The last chunk: the trailer section follows, with its own budget.
    phase_ = Phase::trailers;
    head_state_ = HeadState::field_start;
    section_bytes_ = 0;
  } else {
    phase_ = Phase::chunk_data;
    remaining_ = chunk_size_;
  }
}

const char* Http1ResponseParser::parse_chunk_data_end(const char* p, const char* end) noexcept {
  for (; p < end; ++p) {
    if (*p == '\r' && !chunk_end_seen_cr_) {
      chunk_end_seen_cr_ = true;
    } else if (*p == '\n') {
      start_chunk_size_line();
      return p + 1;
    } else {
      fail(Error::bad_chunk);
      return p;
    }
  }
  return p;
}

void split_header_fields(std::string_view head, std::vector<CapturedHeader>& out) {
  constexpr auto trim_ows = [](std::string_view text) {
    while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
    return text;
  };
  out.clear();
  bool status_line_seen = false;
  while (!head.empty()) {
    const std::size_t lf = head.find('\n');
    std::string_view line = head.substr(0, lf);
    head.remove_prefix(lf == std::string_view::npos ? head.size() : lf + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!status_line_seen) {
      status_line_seen = !line.empty();  // empty lines before the status line are tolerated
      continue;
    }
    if (line.empty()) return;  // the end of the header section
    const std::size_t colon = line.find(':');
    // The parser accepted only "name: value" lines; a head cut short by an
    // error may end in a piece of one, which is no field.
    if (colon == std::string_view::npos || colon == 0) continue;
    out.push_back(CapturedHeader{line.substr(0, colon), trim_ows(line.substr(colon + 1))});
  }
}

}  // namespace kubeload::loadgen
