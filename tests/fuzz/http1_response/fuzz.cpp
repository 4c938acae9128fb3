// The HTTP/1 response parser against arbitrary server bytes, fed in pieces
// whose sizes the input chooses, with pipelined responses: whatever arrives,
// the parser consumes within the bytes given, keeps its counters consistent
// and ends in a definite state.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "loadgen/engine/http1_parser.hpp"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kubeload::loadgen::Http1ResponseParser;
  if (size < 2) return 0;
  // First byte: piece size (1..64, 0 = all at once); second: HEAD or not and the limit.
  const std::size_t piece = data[0] % 65;
  const bool head = (data[1] & 1) != 0;
  Http1ResponseParser::Limits limits;
  limits.max_header_bytes = (data[1] & 2) != 0 ? 64 : 64 * 1024;
  const char* p = reinterpret_cast<const char*>(data + 2);
  std::size_t left = size - 2;

  Http1ResponseParser parser(limits);
  parser.reset(head);
  while (left > 0) {
    const std::size_t n = piece == 0 || piece > left ? left : piece;
    const std::uint64_t before = parser.total_bytes();
    const std::size_t used = parser.feed(p, n);
    const auto status = parser.status();
    if (status == Http1ResponseParser::Status::error) {
      require(parser.error() != Http1ResponseParser::Error::none);
      require(!parser.keep_alive());
      return 0;
    }
    require(used <= n);
    require(parser.total_bytes() == before + used);
    require(parser.body_bytes() <= parser.total_bytes());
    if (status == Http1ResponseParser::Status::need_more) require(used == n);
    p += used;
    left -= used;
    if (status == Http1ResponseParser::Status::complete) {
      require(parser.error() == Http1ResponseParser::Error::none);
      require(parser.status_code() >= 100 && parser.status_code() <= 999);
      if (!parser.keep_alive()) return 0;
      parser.reset(head);  // the next pipelined response
    }
  }
  parser.finish_eof();
  require(parser.status() != Http1ResponseParser::Status::need_more);
  return 0;
}
