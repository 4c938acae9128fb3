// The HTTP/1 response parser against arbitrary server bytes, fed in pieces
// whose sizes the input chooses, with pipelined responses: whatever arrives,
// the parser consumes within the bytes given, keeps its counters consistent
// and ends in a definite state. With a capture (a flag of the input), the
// parser must report exactly what it reports without one, keep at most
// max_body bytes of body, capture the same whether fed in pieces or byte by
// byte, and capture what a reference decoder reads from the same bytes: the
// head is the bytes just before the body, the body those after it (chunked
// framing removed).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loadgen/engine/http1_parser.hpp"

namespace {

using kubeload::loadgen::Http1ResponseParser;
using Status = Http1ResponseParser::Status;

void require(bool condition) {
  if (!condition) std::abort();
}

// What one response of the stream gave.
struct Parsed {
  Status status = Status::need_more;
  int status_code = 0;
  bool keep_alive = false;
  std::uint64_t body_bytes = 0;
  std::uint64_t total_bytes = 0;
  std::size_t start = 0;     // offset of the response in the stream
  std::size_t head_end = 0;  // offset in the response where the body starts (byte-by-byte runs)
  std::string head;
  std::string body;
  bool body_truncated = false;
};

// Parses the pipelined responses of `stream` in pieces of `piece` bytes (0:
// all at once), checking the invariants of every feed.
std::vector<Parsed> parse_stream(std::string_view stream, std::size_t piece, bool head,
                                 Http1ResponseParser::Limits limits,
                                 Http1ResponseParser::Capture* capture) {
  std::vector<Parsed> responses;
  Http1ResponseParser parser(limits);
  parser.set_capture(capture);
  parser.reset(head);
  std::size_t offset = 0;
  Parsed current;
  const auto finish = [&] {
    current.status = parser.status();
    current.status_code = parser.status_code();
    current.keep_alive = parser.keep_alive();
    current.body_bytes = parser.body_bytes();
    current.total_bytes = parser.total_bytes();
    if (capture != nullptr) {
      current.head = capture->head;
      current.body = capture->body;
      current.body_truncated = capture->body_truncated;
    }
    responses.push_back(current);
  };
  while (offset < stream.size()) {
    const std::size_t left = stream.size() - offset;
    const std::size_t n = piece == 0 || piece > left ? left : piece;
    const std::uint64_t before = parser.total_bytes();
    const bool headers_before = parser.headers_complete();
    const std::size_t used = parser.feed(stream.data() + offset, n);
    const auto status = parser.status();
    if (status == Status::error) {
      require(parser.error() != Http1ResponseParser::Error::none);
      require(!parser.keep_alive());
      finish();
      return responses;
    }
    require(used <= n);
    require(parser.total_bytes() == before + used);
    require(parser.body_bytes() <= parser.total_bytes());
    if (status == Status::need_more) require(used == n);
    if (!headers_before && parser.headers_complete()) {
      current.head_end = static_cast<std::size_t>(parser.total_bytes());  // exact when piece == 1
    }
    offset += used;
    if (status == Status::complete) {
      require(parser.error() == Http1ResponseParser::Error::none);
      require(parser.status_code() >= 100 && parser.status_code() <= 999);
      finish();
      if (!parser.keep_alive()) return responses;
      parser.reset(head);  // the next pipelined response
      current = Parsed{};
      current.start = offset;
    }
  }
  parser.finish_eof();
  require(parser.status() != Status::need_more);
  finish();
  return responses;
}

// A chunked body's data, read the simple way: size line, data, line end, up
// to the last chunk (its trailers are no part of the body).
std::optional<std::string> decode_chunked(std::string_view rest) {
  std::string out;
  while (true) {
    const std::size_t lf = rest.find('\n');
    if (lf == std::string_view::npos) return std::nullopt;
    const std::string_view line = rest.substr(0, lf);
    rest.remove_prefix(lf + 1);
    std::uint64_t size = 0;
    std::size_t digits = 0;
    for (; digits < line.size(); ++digits) {
      const char c = line[digits];
      int value = -1;
      if (c >= '0' && c <= '9') value = c - '0';
      if (c >= 'a' && c <= 'f') value = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') value = c - 'A' + 10;
      if (value < 0) break;
      if ((size >> 60) != 0) return std::nullopt;
      size = size * 16 + static_cast<std::uint64_t>(value);
    }
    if (digits == 0) return std::nullopt;
    if (size == 0) return out;
    if (rest.size() < size) return std::nullopt;
    out.append(rest.substr(0, size));
    rest.remove_prefix(size);
    if (!rest.empty() && rest.front() == '\r') rest.remove_prefix(1);
    if (rest.empty() || rest.front() != '\n') return std::nullopt;
    rest.remove_prefix(1);
  }
}

void check_capture(std::string_view stream, std::size_t piece, bool head,
                   Http1ResponseParser::Limits limits, std::size_t max_body,
                   const std::vector<Parsed>& without_capture) {
  Http1ResponseParser::Capture capture;
  capture.max_body = max_body;
  const std::vector<Parsed> captured = parse_stream(stream, piece, head, limits, &capture);
  const std::vector<Parsed> bytewise = parse_stream(stream, 1, head, limits, &capture);
  require(captured.size() == without_capture.size());
  require(bytewise.size() == captured.size());
  for (std::size_t i = 0; i < captured.size(); ++i) {
    const Parsed& a = without_capture[i];
    const Parsed& c = captured[i];
    const Parsed& b = bytewise[i];
    // Capturing changes nothing else.
    require(c.status == a.status && c.status_code == a.status_code &&
            c.keep_alive == a.keep_alive && c.body_bytes == a.body_bytes &&
            c.total_bytes == a.total_bytes);
    require(c.head.size() <= limits.max_header_bytes);
    require(c.body.size() <= max_body);
    if (c.status != Status::complete) continue;
    require(b.status == Status::complete);
    require(c.body.size() == std::min<std::uint64_t>(c.body_bytes, max_body));
    require(c.body_truncated == (c.body_bytes > max_body));
    // The same wherever the bytes were cut.
    require(b.head == c.head && b.body == c.body && b.body_truncated == c.body_truncated);
    // What a reference reading of the same bytes finds.
    const std::string_view raw = stream.substr(b.start, b.total_bytes);
    require(b.head_end >= b.head.size() && b.head_end <= raw.size());
    require(raw.substr(b.head_end - b.head.size(), b.head.size()) == b.head);
    const std::string_view rest = raw.substr(b.head_end);
    if (rest.size() == b.body_bytes) {
      require(b.body == rest.substr(0, b.body.size()));  // Content-Length or close-delimited
    } else {
      const std::optional<std::string> decoded = decode_chunked(rest);
      require(decoded && decoded->size() == b.body_bytes);
      require(b.body == std::string_view(*decoded).substr(0, b.body.size()));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // First byte: piece size (1..64, 0 = all at once). Second: bit 0 HEAD, bit 1
  // a 64-byte header limit, bit 2 capture too, bit 3 capture at most 8 bytes of body.
  const std::size_t piece = data[0] % 65;
  const bool head = (data[1] & 1) != 0;
  Http1ResponseParser::Limits limits;
  limits.max_header_bytes = (data[1] & 2) != 0 ? 64 : 64 * 1024;
  const bool capture = (data[1] & 4) != 0;
  const std::size_t max_body = (data[1] & 8) != 0 ? 8 : 64 * 1024;
  const std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);

  const std::vector<Parsed> responses = parse_stream(stream, piece, head, limits, nullptr);
  if (capture) check_capture(stream, piece, head, limits, max_body, responses);
  return 0;
}
