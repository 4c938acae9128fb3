#include "loadgen/engine/http1_parser.hpp"

#include "allocation_counter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace kubeload::loadgen {
namespace {

using Parser = Http1ResponseParser;
using Status = Parser::Status;
using Error = Parser::Error;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::size_t kMiB = std::size_t{1} << 20;

// Everything a caller can observe after a parse. `consumed` is the sum of what
// feed() returned; it is left out of comparisons after an error, where the API
// leaves it unspecified.
struct Outcome {
  Status status = Status::need_more;
  Error error = Error::none;
  int status_code = 0;
  int minor_version = 0;
  std::uint64_t body_bytes = 0;
  bool keep_alive = false;
  bool headers_complete = false;
  std::size_t consumed = 0;
  std::uint64_t total_bytes = 0;
};

bool same_outcome(const Outcome& a, const Outcome& b) {
  const bool same_observations =
      a.status == b.status && a.error == b.error && a.status_code == b.status_code &&
      a.minor_version == b.minor_version && a.body_bytes == b.body_bytes &&
      a.keep_alive == b.keep_alive && a.headers_complete == b.headers_complete;
  if (!same_observations) return false;
  if (a.status == Status::error) return true;
  return a.consumed == b.consumed && a.total_bytes == b.total_bytes;
}

std::ostream& operator<<(std::ostream& out, const Outcome& o) {
  return out << "{status=" << static_cast<int>(o.status) << " error=" << static_cast<int>(o.error)
             << " code=" << o.status_code << " minor=" << o.minor_version
             << " body=" << o.body_bytes << " keep_alive=" << o.keep_alive
             << " headers_complete=" << o.headers_complete << " consumed=" << o.consumed
             << " total=" << o.total_bytes << "}";
}

Outcome observe(const Parser& parser, std::size_t consumed) {
  return Outcome{parser.status(),           parser.error(),
                 parser.status_code(),      parser.http_minor_version(),
                 parser.body_bytes(),       parser.keep_alive(),
                 parser.headers_complete(), consumed,
                 parser.total_bytes()};
}

// Feeds `input` cut at `cuts` (ascending offsets), stopping once the parser is
// no longer asking for more; then signals EOF if asked to. With `capture`, the
// response is captured into it.
Outcome parse_in_pieces(std::string_view input, const std::vector<std::size_t>& cuts,
                        bool head_request, bool eof_at_end, Parser::Capture* capture = nullptr) {
  Parser parser;
  parser.set_capture(capture);
  parser.reset(head_request);
  std::size_t consumed = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= cuts.size(); ++i) {
    const std::size_t piece_end = i < cuts.size() ? cuts[i] : input.size();
    const std::size_t size = piece_end - begin;
    const std::size_t n = parser.feed(input.data() + begin, size);
    consumed += n;
    if (parser.status() != Status::need_more) break;
    EXPECT_EQ(n, size) << "while more is needed, every byte must be consumed";
    begin = piece_end;
  }
  if (eof_at_end) parser.finish_eof();
  return observe(parser, consumed);
}

Outcome parse_whole(std::string_view input, bool head_request = false, bool eof_at_end = false) {
  return parse_in_pieces(input, {}, head_request, eof_at_end);
}

struct Case {
  const char* name;
  std::string input;
  bool head_request;
  bool eof_at_end;  // the server closes the connection after sending `input`
  Outcome expected;
};

// Keeps gtest from dumping a Case as raw bytes when a parameterised test fails.
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

constexpr std::size_t kAll = static_cast<std::size_t>(-1);  // "consumed the whole input"

Case ok_case(const char* name, std::string input, int code, int minor, std::uint64_t body,
             bool keep_alive, std::size_t consumed = kAll, bool head_request = false,
             bool eof_at_end = false) {
  const std::size_t used = consumed == kAll ? input.size() : consumed;
  return Case{
      name, std::move(input), head_request, eof_at_end,
      Outcome{Status::complete, Error::none, code, minor, body, keep_alive, true, used, used}};
}

Case error_case(const char* name, std::string input, Error error, bool headers_complete = false,
                bool eof_at_end = false) {
  return Case{name, std::move(input), false, eof_at_end,
              Outcome{Status::error, error, 0, 0, 0, false, headers_complete, 0, 0}};
}

// A response and the start of the next one on the same connection.
const std::string kNext = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

const std::string kNginx200 =
    "HTTP/1.1 200 OK\r\n"
    "Server: nginx/1.22.1\r\n"
    "Date: Sun, 29 Nov 2026 18:00:00 GMT\r\n"
    "Content-Type: text/html\r\n"
    "Content-Length: 13\r\n"
    "Last-Modified: Sat, 28 Nov 2026 10:00:00 GMT\r\n"
    "Connection: keep-alive\r\n"
    "ETag: \"6929f1e0-d\"\r\n"
    "Accept-Ranges: bytes\r\n"
    "\r\n"
    "Hello, world!";

std::vector<Case> valid_cases() {
  std::vector<Case> cases;
  cases.push_back(ok_case("nginx_200_content_length", kNginx200, 200, 1, 13, true));
  cases.push_back(ok_case(
      "chunked_with_extensions_and_trailers",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: Expires, X-Checksum\r\n\r\n"
      "4;name=value\r\nWiki\r\n"
      "6 ; quoted=\"a;b\"\r\npedia \r\n"
      "E\r\nin \r\n\r\nchunks.\r\n"
      "0;last\r\n"
      "Expires: Wed, 21 Oct 2015 07:28:00 GMT\r\nX-Checksum: abc\r\n\r\n",
      200, 1, 4 + 6 + 14, true));
  cases.push_back(ok_case("chunked_zero_size_only",
                          "HTTP/1.1 200 OK\r\ntransfer-encoding: CHUNKED\r\n\r\n0\r\n\r\n", 200, 1,
                          0, true));
  cases.push_back(ok_case("chunked_uppercase_hex_leading_zeros_bare_lf",
                          "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n001A\n"
                          "abcdefghijklmnopqrstuvwxyz\n0\n\n",
                          200, 1, 26, true));
  cases.push_back(ok_case("connection_close_body_to_eof",
                          "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody until close", 200, 1,
                          16, false, kAll, false, true));
  cases.push_back(ok_case("http11_without_framing_is_close_delimited",
                          "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\n"
                          "oops",
                          500, 1, 4, false, kAll, false, true));
  cases.push_back(ok_case("close_delimited_empty_body", "HTTP/1.1 200 OK\r\n\r\n", 200, 1, 0, false,
                          kAll, false, true));
  cases.push_back(ok_case("http10_without_keep_alive",
                          "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, 0, 5, false));
  cases.push_back(ok_case("http10_with_keep_alive",
                          "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 5\r\n\r\n"
                          "hello",
                          200, 0, 5, true));
  cases.push_back(ok_case("http10_close_delimited",
                          "HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6\r\n\r\n<html></html>\n", 200,
                          0, 14, false, kAll, false, true));
  {
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n";
    cases.push_back(
        ok_case("head_with_content_length", head + kNext, 200, 1, 0, true, head.size(), true));
  }
  {
    const std::string head = "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n";
    cases.push_back(ok_case("204_with_content_length", head + kNext, 204, 1, 0, true, head.size()));
  }
  {
    const std::string head =
        "HTTP/1.1 304 Not Modified\r\nETag: \"abc\"\r\nContent-Length: 512\r\n\r\n";
    cases.push_back(ok_case("304_with_content_length", head + kNext, 304, 1, 0, true, head.size()));
  }
  {
    // Framing headers of a response without a body are not interpreted.
    const std::string head =
        "HTTP/1.1 304 Not Modified\r\nContent-Length: nonsense\r\nTransfer-Encoding: ,\r\n\r\n";
    cases.push_back(
        ok_case("304_ignores_invalid_framing", head + kNext, 304, 1, 0, true, head.size()));
  }
  cases.push_back(ok_case("100_continue_then_200",
                          "HTTP/1.1 100 Continue\r\n\r\n"
                          "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                          200, 1, 2, true));
  cases.push_back(
      ok_case("103_early_hints_then_200",
              "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n"
              "Link: </script.js>; rel=preload; as=script\r\nContent-Length: 99\r\nConnection: "
              "close\r\n\r\n"
              "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
              200, 1, 3, true));
  cases.push_back(ok_case("two_interim_responses_then_200",
                          "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n"
                          "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
                          201, 1, 0, true));
  {
    const std::string first = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst";
    cases.push_back(ok_case("pipelined_first_of_two",
                            first + "HTTP/1.1 200 OK\r\nContent-Length: "
                                    "6\r\n\r\nsecond",
                            200, 1, 5, true, first.size()));
  }
  {
    const std::string first =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    cases.push_back(
        ok_case("pipelined_chunked_first_of_two", first + kNext, 200, 1, 3, true, first.size()));
  }
  {
    const std::string head =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\n\r\n";
    cases.push_back(ok_case("101_switching_protocols_is_final", head + "\x81\x05hello", 101, 1, 0,
                            false, head.size()));
  }
  cases.push_back(ok_case("bare_lf_line_endings", "HTTP/1.1 200 OK\nContent-Length: 3\n\nabc", 200,
                          1, 3, true));
  cases.push_back(ok_case("empty_reason_after_space", "HTTP/1.1 200 \r\nContent-Length: 1\r\n\r\nx",
                          200, 1, 1, true));
  cases.push_back(ok_case("missing_space_before_empty_reason",
                          "HTTP/1.1 404\r\nContent-Length: 1\r\n\r\nx", 404, 1, 1, true));
  cases.push_back(ok_case("reason_with_odd_bytes",
                          "HTTP/1.1 200 Ok \xc3\xa9\t:-)\r\nContent-Length: 1\r\n\r\nx", 200, 1, 1,
                          true));
  cases.push_back(
      ok_case("case_insensitive_names_and_ows",
              "HTTP/1.1 200 OK\r\nCONTENT-length:\t 7 \t\r\ncOnNeCtIoN:  KEEP-ALIVE \r\n"
              "X-Empty:\r\nX-Spaces:   \r\n\r\n1234567",
              200, 1, 7, true));
  cases.push_back(ok_case("prefixes_of_known_names_after_known_names",
                          "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n"
                          "Connection: keep-alive\r\nConnectio: close\r\nTransfer-Enc: gzip\r\n"
                          "\r\nabc",
                          200, 1, 3, true));
  cases.push_back(ok_case("duplicate_equal_content_lengths",
                          "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
                          200, 1, 3, true));
  cases.push_back(ok_case("content_length_list_of_equal_values",
                          "HTTP/1.1 200 OK\r\nContent-Length: 3, 3,3\r\n\r\nabc", 200, 1, 3, true));
  cases.push_back(ok_case("content_length_leading_zeros",
                          "HTTP/1.1 200 OK\r\nContent-Length: 0003\r\n\r\nabc", 200, 1, 3, true));
  cases.push_back(
      ok_case("names_that_extend_known_ones_are_ignored",
              "HTTP/1.1 200 OK\r\nContent-Length-X: 99\r\nConnectionX: close\r\n"
              "Content: 5\r\nTransfer-Encoding-Old: chunked\r\nContent-Length: 2\r\n\r\n"
              "ok",
              200, 1, 2, true));
  cases.push_back(
      ok_case("connection_close_in_token_list",
              "HTTP/1.1 200 OK\r\nConnection: Upgrade, ,CLOSE\r\nContent-Length: 2\r\n\r\n"
              "ok",
              200, 1, 2, false));
  cases.push_back(ok_case("connection_close_across_lines",
                          "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\n"
                          "Content-Length: 2\r\n\r\nok",
                          200, 1, 2, false));
  cases.push_back(ok_case("connection_token_that_only_contains_close",
                          "HTTP/1.1 200 OK\r\nConnection: closed, x-close, close-ish\r\n"
                          "Content-Length: 2\r\n\r\nok",
                          200, 1, 2, true));
  cases.push_back(ok_case("transfer_encoding_gzip_then_chunked",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                          "2\r\nzz\r\n0\r\n\r\n",
                          200, 1, 2, true));
  cases.push_back(
      ok_case("transfer_encoding_split_over_lines",
              "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"
              "\r\n2\r\nzz\r\n0\r\n\r\n",
              200, 1, 2, true));
  cases.push_back(ok_case("transfer_encoding_chunked_not_final_is_close_delimited",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"
                          "2\r\nzz\r\n0\r\n\r\n",
                          200, 1, 12, false, kAll, false, true));
  cases.push_back(
      ok_case("transfer_encoding_unknown_is_close_delimited",
              "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 3\r\n\r\n"
              "abcdef",
              200, 1, 6, false, kAll, false, true));
  cases.push_back(ok_case("transfer_encoding_resembling_chunked_is_close_delimited",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunk, chunkedx\r\n\r\n"
                          "3\r\nabc\r\n0\r\n\r\n",
                          200, 1, 13, false, kAll, false, true));
  cases.push_back(
      ok_case("transfer_encoding_overrides_content_length_and_closes",
              "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n"
              "3\r\nabc\r\n0\r\n\r\n",
              200, 1, 3, false));
  cases.push_back(
      ok_case("transfer_encoding_ignores_invalid_content_length",
              "HTTP/1.1 200 OK\r\nContent-Length: -5\r\nTransfer-Encoding: chunked\r\n\r\n"
              "3\r\nabc\r\n0\r\n\r\n",
              200, 1, 3, false));
  cases.push_back(
      ok_case("http10_chunked_is_read_then_closed",
              "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n"
              "\r\n3\r\nabc\r\n0\r\n\r\n",
              200, 0, 3, false));
  {
    const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    cases.push_back(ok_case("leading_empty_lines_tolerated", "\r\n\n" + response, 200, 1, 2, true));
  }
  cases.push_back(ok_case("trailer_section_with_bare_lf",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n"
                          "X-Trailer: 1\n\n",
                          200, 1, 1, true));
  cases.push_back(ok_case("content_length_max_uint64_with_head",
                          "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\n", 200, 1,
                          0, true, kAll, true));
  cases.push_back(ok_case("status_600_passes_through",
                          "HTTP/1.1 600 Custom\r\nContent-Length: 0\r\n\r\n", 600, 1, 0, true));
  return cases;
}

std::vector<Case> hostile_cases() {
  std::vector<Case> cases;
  cases.push_back(error_case("garbage_instead_of_status_line",
                             "<html><body>It works!</body></html>\r\n",
                             Error::malformed_status_line));
  cases.push_back(error_case("lowercase_protocol_name", "http/1.1 200 OK\r\n\r\n",
                             Error::malformed_status_line));
  cases.push_back(
      error_case("http2_version", "HTTP/2 200 OK\r\n\r\n", Error::malformed_status_line));
  cases.push_back(
      error_case("two_digit_minor", "HTTP/1.10 200 OK\r\n\r\n", Error::malformed_status_line));
  cases.push_back(
      error_case("two_digit_status", "HTTP/1.1 20 OK\r\n\r\n", Error::malformed_status_line));
  cases.push_back(
      error_case("four_digit_status", "HTTP/1.1 2000 OK\r\n\r\n", Error::malformed_status_line));
  cases.push_back(
      error_case("status_below_100", "HTTP/1.1 099 Low\r\n\r\n", Error::malformed_status_line));
  cases.push_back(
      error_case("tab_after_version", "HTTP/1.1\t200 OK\r\n\r\n", Error::malformed_status_line));
  cases.push_back(error_case("status_code_glued_to_reason", "HTTP/1.1 200OK\r\n\r\n",
                             Error::malformed_status_line));
  cases.push_back(error_case("bare_cr_in_status_line", "HTTP/1.1 200\rX\r\n\r\n",
                             Error::malformed_status_line));
  cases.push_back(error_case("header_line_without_colon",
                             "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nNoColonHere\r\n\r\nok",
                             Error::malformed_header));
  cases.push_back(error_case("space_in_header_name", "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
                             Error::malformed_header));
  cases.push_back(error_case("space_before_colon",
                             "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok",
                             Error::malformed_header));
  cases.push_back(error_case("obs_fold_rejected",
                             "HTTP/1.1 200 OK\r\nX-Long: part one\r\n  part two\r\n\r\n",
                             Error::malformed_header));
  cases.push_back(error_case("empty_header_name", "HTTP/1.1 200 OK\r\n: value\r\n\r\n",
                             Error::malformed_header));
  cases.push_back(error_case("bare_cr_after_header_value",
                             "HTTP/1.1 200 OK\r\nContent-Length: 2\rX: y\r\n\r\nok",
                             Error::malformed_header));
  cases.push_back(error_case("bare_cr_ending_header_section",
                             "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\rok",
                             Error::malformed_header));
  for (const char* value : {"-1", "abc", "12abc", "0x10", "+5", "", "1 2", "5,", ",5",
                            "18446744073709551616", "99999999999999999999999"}) {
    cases.push_back(
        error_case("invalid_content_length",
                   std::string("HTTP/1.1 200 OK\r\nContent-Length: ") + value + "\r\n\r\nbody",
                   Error::bad_content_length));
  }
  cases.push_back(error_case("conflicting_content_lengths",
                             "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"
                             "hello!",
                             Error::bad_content_length));
  cases.push_back(error_case("conflicting_content_length_list",
                             "HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!",
                             Error::bad_content_length));
  cases.push_back(error_case("chunked_applied_twice",
                             "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
                             Error::bad_transfer_encoding));
  cases.push_back(error_case("empty_transfer_encoding",
                             "HTTP/1.1 200 OK\r\nTransfer-Encoding: , \r\n\r\n",
                             Error::bad_transfer_encoding));
  const std::string chunked_head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  cases.push_back(error_case("chunk_size_not_hex", chunked_head + "zz\r\nab\r\n0\r\n\r\n",
                             Error::bad_chunk, true));
  cases.push_back(error_case("chunk_size_missing", chunked_head + "\r\nab\r\n0\r\n\r\n",
                             Error::bad_chunk, true));
  cases.push_back(
      error_case("chunk_size_negative", chunked_head + "-1\r\n", Error::bad_chunk, true));
  cases.push_back(error_case("chunk_size_overflows_64_bits", chunked_head + "10000000000000000\r\n",
                             Error::bad_chunk, true));
  cases.push_back(error_case("chunk_size_followed_by_junk", chunked_head + "4x\r\nWiki\r\n",
                             Error::bad_chunk, true));
  cases.push_back(error_case("chunk_data_without_crlf", chunked_head + "4\r\nWikiXX\r\n0\r\n\r\n",
                             Error::bad_chunk, true));
  cases.push_back(error_case("chunk_data_cr_without_lf", chunked_head + "4\r\nWiki\r\r\n0\r\n\r\n",
                             Error::bad_chunk, true));
  cases.push_back(
      error_case("bare_cr_after_chunk_size", chunked_head + "4\rWiki\r\n", Error::bad_chunk, true));
  cases.push_back(error_case("malformed_trailer", chunked_head + "0\r\nNo colon\r\n\r\n",
                             Error::malformed_header, true));
  cases.push_back(error_case("eof_with_nothing", "", Error::unexpected_eof, false, true));
  cases.push_back(
      error_case("eof_mid_status_line", "HTTP/1.1 20", Error::unexpected_eof, false, true));
  cases.push_back(error_case("eof_mid_headers", "HTTP/1.1 200 OK\r\nContent-Len",
                             Error::unexpected_eof, false, true));
  cases.push_back(error_case("eof_after_interim_response", "HTTP/1.1 100 Continue\r\n\r\n",
                             Error::unexpected_eof, false, true));
  cases.push_back(error_case("eof_mid_body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
                             Error::unexpected_eof, true, true));
  cases.push_back(
      error_case("eof_mid_chunk", chunked_head + "a\r\nabc", Error::unexpected_eof, true, true));
  cases.push_back(error_case("eof_before_last_chunk", chunked_head + "3\r\nabc\r\n",
                             Error::unexpected_eof, true, true));
  cases.push_back(error_case("eof_mid_trailers", chunked_head + "0\r\nX-T: 1\r\n",
                             Error::unexpected_eof, true, true));
  return cases;
}

// Error cases are checked for the error and what it implies; the status code
// and version of a response that failed are not part of the contract.
void expect_matches_table(const Case& c, const Outcome& actual) {
  if (c.expected.status == Status::error) {
    EXPECT_EQ(actual.status, Status::error);
    EXPECT_EQ(actual.error, c.expected.error);
    EXPECT_EQ(actual.headers_complete, c.expected.headers_complete);
    EXPECT_FALSE(actual.keep_alive);
    EXPECT_LE(actual.consumed, c.input.size());
  } else {
    EXPECT_TRUE(same_outcome(actual, c.expected))
        << "expected " << c.expected << "\nactual   " << actual;
  }
}

class ParserTableTest : public ::testing::TestWithParam<Case> {};

TEST_P(ParserTableTest, WholeBufferMatchesTable) {
  const Case& c = GetParam();
  expect_matches_table(c, parse_whole(c.input, c.head_request, c.eof_at_end));
}

TEST_P(ParserTableTest, EveryTwoPieceSplitGivesTheSameOutcome) {
  const Case& c = GetParam();
  const Outcome whole = parse_whole(c.input, c.head_request, c.eof_at_end);
  for (std::size_t cut = 0; cut <= c.input.size(); ++cut) {
    const Outcome split = parse_in_pieces(c.input, {cut}, c.head_request, c.eof_at_end);
    ASSERT_TRUE(same_outcome(split, whole))
        << "cut at " << cut << "\nwhole " << whole << "\nsplit " << split;
  }
}

TEST_P(ParserTableTest, ByteByByteGivesTheSameOutcome) {
  const Case& c = GetParam();
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < c.input.size(); ++i) cuts.push_back(i);
  const Outcome whole = parse_whole(c.input, c.head_request, c.eof_at_end);
  const Outcome bytewise = parse_in_pieces(c.input, cuts, c.head_request, c.eof_at_end);
  EXPECT_TRUE(same_outcome(bytewise, whole)) << "whole " << whole << "\nbytewise " << bytewise;
  expect_matches_table(c, bytewise);
}

// Capturing (http1_capture_test.cpp tests what it keeps) must not change what
// the parser reports, wherever the input is cut.
TEST_P(ParserTableTest, CapturingChangesNothingElse) {
  const Case& c = GetParam();
  const Outcome whole = parse_whole(c.input, c.head_request, c.eof_at_end);
  Parser::Capture capture;
  capture.max_body = 5;  // truncation too
  for (std::size_t cut = 0; cut <= c.input.size(); ++cut) {
    const Outcome captured =
        parse_in_pieces(c.input, {cut}, c.head_request, c.eof_at_end, &capture);
    ASSERT_TRUE(same_outcome(captured, whole))
        << "cut at " << cut << "\nwithout capture " << whole << "\nwith capture    " << captured;
    if (captured.status == Status::complete) {
      EXPECT_EQ(capture.body.size(), std::min<std::uint64_t>(captured.body_bytes, 5));
      EXPECT_EQ(capture.body_truncated, captured.body_bytes > 5);
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.name) + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Valid, ParserTableTest, ::testing::ValuesIn(valid_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Hostile, ParserTableTest, ::testing::ValuesIn(hostile_cases()), case_name);

TEST(Http1ParserTest, ReportsStatusCodeAndVersionOfFinalResponse) {
  Parser parser;
  const std::string input =
      "HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.0 503 Service Unavailable\r\nContent-Length: "
      "0\r\n\r\n";
  EXPECT_EQ(parser.feed(input.data(), input.size()), input.size());
  EXPECT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(parser.status_code(), 503);
  EXPECT_EQ(parser.http_minor_version(), 0);
  EXPECT_FALSE(parser.keep_alive());
}

TEST(Http1ParserTest, HeadersCompleteBeforeTheBodyArrives) {
  Parser parser;
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
  EXPECT_EQ(parser.feed(head.data(), head.size() - 1), head.size() - 1);
  EXPECT_FALSE(parser.headers_complete());
  EXPECT_EQ(parser.feed(head.data() + head.size() - 1, 1), 1u);
  EXPECT_TRUE(parser.headers_complete());
  EXPECT_EQ(parser.status(), Status::need_more);
  EXPECT_EQ(parser.status_code(), 200);
}

TEST(Http1ParserTest, FeedAfterCompletionConsumesNothing) {
  Parser parser;
  const std::string input = "HTTP/1.1 204 No Content\r\n\r\n";
  ASSERT_EQ(parser.feed(input.data(), input.size()), input.size());
  ASSERT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(parser.feed(input.data(), input.size()), 0u);
  parser.finish_eof();  // an idle close after a complete response is not an error
  EXPECT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(parser.total_bytes(), input.size());
}

TEST(Http1ParserTest, ResetMakesTheParserReusable) {
  Parser parser;
  const std::string get_response = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
  const std::string head_response = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n";
  const std::string stream = get_response + head_response + "garbage" + get_response;
  std::size_t offset = 0;

  offset += parser.feed(stream.data() + offset, stream.size() - offset);
  ASSERT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(offset, get_response.size());
  EXPECT_EQ(parser.body_bytes(), 3u);

  parser.reset(/*head_request=*/true);
  EXPECT_EQ(parser.status(), Status::need_more);
  EXPECT_FALSE(parser.headers_complete());
  EXPECT_EQ(parser.body_bytes(), 0u);
  EXPECT_EQ(parser.total_bytes(), 0u);
  offset += parser.feed(stream.data() + offset, stream.size() - offset);
  ASSERT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(offset, get_response.size() + head_response.size());
  EXPECT_EQ(parser.body_bytes(), 0u);
  EXPECT_EQ(parser.total_bytes(), head_response.size());

  parser.reset(false);
  parser.feed(stream.data() + offset, stream.size() - offset);
  ASSERT_EQ(parser.status(), Status::error);
  EXPECT_EQ(parser.error(), Error::malformed_status_line);
  EXPECT_FALSE(parser.keep_alive());

  // After an error (the connection would be replaced) the parser starts clean.
  parser.reset(false);
  EXPECT_EQ(parser.error(), Error::none);
  EXPECT_EQ(parser.feed(get_response.data(), get_response.size()), get_response.size());
  EXPECT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(parser.status_code(), 200);
  EXPECT_TRUE(parser.keep_alive());
}

TEST(Http1ParserTest, ResetKeepsTheLimits) {
  Parser parser(Parser::Limits{.max_header_bytes = 20});
  const std::string input = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  parser.feed(input.data(), input.size());
  EXPECT_EQ(parser.error(), Error::header_too_large);
  parser.reset(false);
  parser.feed(input.data(), input.size());
  EXPECT_EQ(parser.error(), Error::header_too_large);
}

TEST(Http1ParserTest, ParsesWithoutHeapAllocation) {
  std::vector<Case> cases = valid_cases();
  for (Case& c : hostile_cases()) cases.push_back(std::move(c));
  Parser parser;
  std::uint64_t completed = 0;
  {
    kubeload::testing::AllocationCounter allocations;
    for (const Case& c : cases) {
      parser.reset(c.head_request);
      parser.feed(c.input.data(), c.input.size());
      if (c.eof_at_end) parser.finish_eof();
      completed += parser.status() == Status::complete ? 1 : 0;
      parser.reset(c.head_request);
      for (std::size_t i = 0; i < c.input.size() && parser.status() == Status::need_more; ++i) {
        parser.feed(c.input.data() + i, 1);
      }
    }
    EXPECT_EQ(allocations.count(), 0u);
  }
  EXPECT_EQ(completed, valid_cases().size());
}

// ---- Bodies beyond 32 bits, counted without being stored ----

TEST(Http1ParserTest, ContentLengthBodyBeyondFourGiB) {
  const std::uint64_t length = 5 * kGiB + 7;
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
  Parser parser;
  ASSERT_EQ(parser.feed(head.data(), head.size()), head.size());
  ASSERT_TRUE(parser.headers_complete());

  // One reused buffer stands in for every read of the body.
  const std::vector<char> buffer(kMiB, 'x');
  std::uint64_t fed = 0;
  while (length - fed >= buffer.size()) {
    ASSERT_EQ(parser.feed(buffer.data(), buffer.size()), buffer.size());
    ASSERT_EQ(parser.status(), Status::need_more);
    fed += buffer.size();
  }
  EXPECT_GT(parser.body_bytes(), std::uint64_t{1} << 32);
  // The last read carries the 7 remaining bytes and the next response's start.
  EXPECT_EQ(parser.feed(buffer.data(), buffer.size()), length - fed);
  EXPECT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(parser.body_bytes(), length);
  EXPECT_EQ(parser.total_bytes(), head.size() + length);
  EXPECT_TRUE(parser.keep_alive());
}

TEST(Http1ParserTest, ChunkBeyondFourGiB) {
  const std::uint64_t chunk = 5 * kGiB;  // 0x140000000
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n140000000\r\n";
  Parser parser;
  ASSERT_EQ(parser.feed(head.data(), head.size()), head.size());
  const std::vector<char> buffer(kMiB, 'y');
  for (std::uint64_t fed = 0; fed < chunk; fed += buffer.size()) {
    ASSERT_EQ(parser.feed(buffer.data(), buffer.size()), buffer.size());
  }
  EXPECT_EQ(parser.body_bytes(), chunk);
  EXPECT_EQ(parser.status(), Status::need_more);
  const std::string tail = "\r\n2\r\nab\r\n0\r\n\r\n";
  EXPECT_EQ(parser.feed(tail.data(), tail.size()), tail.size());
  EXPECT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(parser.body_bytes(), chunk + 2);
}

TEST(Http1ParserTest, CloseDelimitedBodyBeyondFourGiB) {
  const std::string head = "HTTP/1.1 200 OK\r\n\r\n";
  Parser parser;
  ASSERT_EQ(parser.feed(head.data(), head.size()), head.size());
  const std::vector<char> buffer(kMiB, 'z');
  const std::uint64_t length = 4 * kGiB + kMiB;
  for (std::uint64_t fed = 0; fed < length; fed += buffer.size()) {
    ASSERT_EQ(parser.feed(buffer.data(), buffer.size()), buffer.size());
  }
  EXPECT_EQ(parser.status(), Status::need_more);
  parser.finish_eof();
  EXPECT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(parser.body_bytes(), length);
  EXPECT_FALSE(parser.keep_alive());
}

// ---- Bounded header sections ----

// Feeds `first` once and then `filler` over and over (up to `total` bytes),
// as a server streaming an endless header section would. Returns the bytes
// offered before the parser stopped asking for more.
std::uint64_t feed_endless(Parser& parser, std::string_view first, std::string_view filler,
                           std::uint64_t total) {
  std::uint64_t offered = first.size();
  parser.feed(first.data(), first.size());
  while (parser.status() == Status::need_more && offered < total) {
    parser.feed(filler.data(), filler.size());
    offered += filler.size();
  }
  return offered;
}

std::string repeated_lines(std::string_view line, std::size_t size) {
  std::string out;
  while (out.size() + line.size() <= size) out += line;
  out.append(size - out.size(), 'a');  // the piece boundary falls mid-line
  return out;
}

TEST(Http1ParserTest, GigabyteOfHeaderLinesFailsWithinTheLimit) {
  Parser parser;  // default limit, 64 KiB
  const std::size_t limit = Parser::Limits{}.max_header_bytes;
  const std::size_t piece = 64 * 1024;
  const std::string filler =
      repeated_lines("X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", piece);
  const std::uint64_t offered = feed_endless(parser, "HTTP/1.1 200 OK\r\n", filler, kGiB);
  EXPECT_EQ(parser.status(), Status::error);
  EXPECT_EQ(parser.error(), Error::header_too_large);
  EXPECT_LE(offered, limit + piece + 17);
  EXPECT_LE(parser.total_bytes(), limit);
}

TEST(Http1ParserTest, GigabyteHeaderValueWithoutLineEndFailsWithinTheLimit) {
  Parser parser(Parser::Limits{.max_header_bytes = 8 * 1024});
  const std::string filler(64 * 1024, 'v');
  const std::uint64_t offered =
      feed_endless(parser, "HTTP/1.1 200 OK\r\nX-Endless: ", filler, kGiB);
  EXPECT_EQ(parser.error(), Error::header_too_large);
  EXPECT_LE(offered, 8 * 1024 + filler.size() + 28);
  EXPECT_LE(parser.total_bytes(), 8u * 1024);
}

TEST(Http1ParserTest, EndlessReasonPhraseFailsWithinTheLimit) {
  Parser parser(Parser::Limits{.max_header_bytes = 4096});
  const std::string filler(1000, 'r');
  feed_endless(parser, "HTTP/1.1 200 ", filler, kGiB);
  EXPECT_EQ(parser.error(), Error::header_too_large);
  EXPECT_LE(parser.total_bytes(), 4096u);
}

TEST(Http1ParserTest, EndlessHeaderNameFailsWithinTheLimit) {
  Parser parser(Parser::Limits{.max_header_bytes = 4096});
  const std::string filler(1000, 'n');
  feed_endless(parser, "HTTP/1.1 200 OK\r\nContent-", filler, kGiB);
  EXPECT_EQ(parser.error(), Error::header_too_large);
}

TEST(Http1ParserTest, EndlessInterimResponsesShareTheLimit) {
  Parser parser(Parser::Limits{.max_header_bytes = 4096});
  const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
  feed_endless(parser, "", interim, kGiB);
  EXPECT_EQ(parser.error(), Error::header_too_large);
  EXPECT_LE(parser.total_bytes(), 4096u);
}

TEST(Http1ParserTest, EndlessTrailersFailWithinTheLimit) {
  Parser parser(Parser::Limits{.max_header_bytes = 4096});
  const std::string filler = repeated_lines("X-Trailer: t\r\n", 1000);
  feed_endless(parser, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", filler, kGiB);
  EXPECT_EQ(parser.error(), Error::header_too_large);
  EXPECT_LE(parser.total_bytes(), 2u * 4096);
}

TEST(Http1ParserTest, EndlessChunkExtensionFailsWithinTheLimit) {
  Parser parser(Parser::Limits{.max_header_bytes = 4096});
  const std::string filler(1000, 'e');
  feed_endless(parser, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=", filler, kGiB);
  EXPECT_EQ(parser.error(), Error::bad_chunk);
  EXPECT_LE(parser.total_bytes(), 2u * 4096);
}

TEST(Http1ParserTest, EndlessChunkSizeFailsWithinTheLimit) {
  Parser parser;
  const std::string filler(1000, '0');  // leading zeros do not overflow: the limit stops them
  feed_endless(parser, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", filler, kGiB);
  EXPECT_EQ(parser.error(), Error::bad_chunk);
}

TEST(Http1ParserTest, HeaderSectionOfExactlyTheLimitIsAccepted) {
  const std::string input = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  const std::size_t header_size = input.size() - 2;
  for (bool bytewise : {false, true}) {
    SCOPED_TRACE(bytewise ? "byte by byte" : "whole");
    std::vector<std::size_t> cuts;
    if (bytewise) {
      for (std::size_t i = 1; i < input.size(); ++i) cuts.push_back(i);
    }
    {
      Parser parser(Parser::Limits{.max_header_bytes = header_size});
      std::size_t begin = 0;
      for (std::size_t i = 0; i <= cuts.size() && parser.status() == Status::need_more; ++i) {
        const std::size_t piece_end = i < cuts.size() ? cuts[i] : input.size();
        parser.feed(input.data() + begin, piece_end - begin);
        begin = piece_end;
      }
      EXPECT_EQ(parser.status(), Status::complete);
      EXPECT_EQ(parser.body_bytes(), 2u);
    }
    {
      Parser parser(Parser::Limits{.max_header_bytes = header_size - 1});
      std::size_t begin = 0;
      for (std::size_t i = 0; i <= cuts.size() && parser.status() == Status::need_more; ++i) {
        const std::size_t piece_end = i < cuts.size() ? cuts[i] : input.size();
        parser.feed(input.data() + begin, piece_end - begin);
        begin = piece_end;
      }
      EXPECT_EQ(parser.error(), Error::header_too_large);
      EXPECT_EQ(parser.total_bytes(), header_size - 1);
    }
  }
}

TEST(Http1ParserTest, ContentLengthOfMaxUint64IsAccepted) {
  Parser parser;
  const std::string input =
      "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nsome body";
  EXPECT_EQ(parser.feed(input.data(), input.size()), input.size());
  EXPECT_EQ(parser.status(), Status::need_more);
  EXPECT_EQ(parser.body_bytes(), 9u);
  parser.finish_eof();
  EXPECT_EQ(parser.error(), Error::unexpected_eof);
}

}  // namespace
}  // namespace kubeload::loadgen
