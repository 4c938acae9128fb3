// What Http1ResponseParser::Capture keeps of a response: the final header
// section as received and the decoded body up to max_body, the same wherever
// the bytes are cut, and without allocating once the buffers have grown.
// (That capturing changes nothing else the parser reports is checked over the
// whole table of http1_parser_test.cpp: CapturingChangesNothingElse.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "allocation_counter.hpp"
#include "loadgen/engine/http1_parser.hpp"

namespace kubeload::loadgen {
namespace {

using Parser = Http1ResponseParser;
using Status = Parser::Status;

struct Captured {
  Status status = Status::need_more;
  std::uint64_t body_bytes = 0;
  std::string head;
  std::string body;
  bool body_truncated = false;
};

// Feeds `input` cut at `cuts` (ascending offsets) with a capture of
// `max_body`, then signals EOF if asked to.
Captured capture_in_pieces(std::string_view input, const std::vector<std::size_t>& cuts,
                           std::size_t max_body = Parser::Capture::default_max_body,
                           bool head_request = false, bool eof_at_end = false) {
  Parser::Capture capture;
  capture.max_body = max_body;
  Parser parser;
  parser.set_capture(&capture);
  parser.reset(head_request);
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= cuts.size() && parser.status() == Status::need_more; ++i) {
    const std::size_t piece_end = i < cuts.size() ? cuts[i] : input.size();
    parser.feed(input.data() + begin, piece_end - begin);
    begin = piece_end;
  }
  if (eof_at_end) parser.finish_eof();
  return Captured{parser.status(), parser.body_bytes(), capture.head, capture.body,
                  capture.body_truncated};
}

Captured capture_whole(std::string_view input,
                       std::size_t max_body = Parser::Capture::default_max_body,
                       bool head_request = false, bool eof_at_end = false) {
  return capture_in_pieces(input, {}, max_body, head_request, eof_at_end);
}

// Every cut into two pieces, and byte by byte, captures what the whole does.
void expect_same_capture_at_every_cut(std::string_view input, std::size_t max_body,
                                      bool eof_at_end = false) {
  const Captured whole = capture_whole(input, max_body, false, eof_at_end);
  for (std::size_t cut = 0; cut <= input.size(); ++cut) {
    const Captured split = capture_in_pieces(input, {cut}, max_body, false, eof_at_end);
    ASSERT_EQ(split.status, whole.status) << "cut at " << cut;
    ASSERT_EQ(split.head, whole.head) << "cut at " << cut;
    ASSERT_EQ(split.body, whole.body) << "cut at " << cut;
    ASSERT_EQ(split.body_truncated, whole.body_truncated) << "cut at " << cut;
  }
  std::vector<std::size_t> every_byte;
  for (std::size_t i = 1; i < input.size(); ++i) every_byte.push_back(i);
  const Captured bytewise = capture_in_pieces(input, every_byte, max_body, false, eof_at_end);
  EXPECT_EQ(bytewise.head, whole.head);
  EXPECT_EQ(bytewise.body, whole.body);
  EXPECT_EQ(bytewise.body_truncated, whole.body_truncated);
}

const std::string kLoginHead =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: application/json\r\n"
    "Set-Cookie: theme=dark; Path=/\r\n"
    "Set-Cookie: session=alice.1; Path=/shop; HttpOnly\r\n"
    "Content-Length: 27\r\n"
    "\r\n";
const std::string kLoginBody = R"({"token":"alice.1","n":7}  )";

const std::string kChunkedHead = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
const std::string kChunkedBody =
    "4;name=value\r\nWiki\r\n"
    "6 ; quoted=\"a;b\"\r\npedia \r\n"
    "E\r\nin \r\n\r\nchunks.\r\n"
    "0;last\r\n"
    "Expires: Wed, 21 Oct 2015 07:28:00 GMT\r\nX-Checksum: abc\r\n\r\n";
const std::string kChunkedDecoded = "Wikipedia in \r\n\r\nchunks.";

TEST(Http1CaptureTest, ContentLengthResponseIsKeptAsReceived) {
  const Captured c = capture_whole(kLoginHead + kLoginBody);
  EXPECT_EQ(c.status, Status::complete);
  EXPECT_EQ(c.head, kLoginHead);
  EXPECT_EQ(c.body, kLoginBody);
  EXPECT_FALSE(c.body_truncated);
  expect_same_capture_at_every_cut(kLoginHead + kLoginBody, 1 << 20);
}

TEST(Http1CaptureTest, ChunkedBodyIsDecodedWithoutSizesExtensionsOrTrailers) {
  const Captured c = capture_whole(kChunkedHead + kChunkedBody);
  EXPECT_EQ(c.status, Status::complete);
  EXPECT_EQ(c.head, kChunkedHead);
  EXPECT_EQ(c.body, kChunkedDecoded);
  EXPECT_EQ(c.body_bytes, kChunkedDecoded.size());
  expect_same_capture_at_every_cut(kChunkedHead + kChunkedBody, 1 << 20);
}

TEST(Http1CaptureTest, ChunkedBodyWithBareLineFeeds) {
  const std::string input =
      "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n001A\nabcdefghijklmnopqrstuvwxyz\n0\n\n";
  const Captured c = capture_whole(input);
  EXPECT_EQ(c.head, "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n");
  EXPECT_EQ(c.body, "abcdefghijklmnopqrstuvwxyz");
  expect_same_capture_at_every_cut(input, 1 << 20);
}

TEST(Http1CaptureTest, CloseDelimitedBodyIsKeptUpToTheEnd) {
  const std::string head = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
  const std::string input = head + "body until close";
  const Captured c = capture_whole(input, 1 << 20, false, true);
  EXPECT_EQ(c.status, Status::complete);
  EXPECT_EQ(c.head, head);
  EXPECT_EQ(c.body, "body until close");
  expect_same_capture_at_every_cut(input, 1 << 20, true);
}

TEST(Http1CaptureTest, InterimResponsesAreLeftOutOfTheHead) {
  const std::string interim =
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";
  const std::string input = interim + kLoginHead + kLoginBody;
  const Captured c = capture_whole(input);
  EXPECT_EQ(c.status, Status::complete);
  EXPECT_EQ(c.head, kLoginHead);
  EXPECT_EQ(c.body, kLoginBody);
  expect_same_capture_at_every_cut(input, 1 << 20);
}

TEST(Http1CaptureTest, StrayEmptyLinesBeforeTheStatusLineStayInTheHead) {
  const std::string input = "\r\n\n" + kLoginHead + kLoginBody;
  const Captured c = capture_whole(input);
  EXPECT_EQ(c.head, "\r\n\n" + kLoginHead);
  std::vector<CapturedHeader> fields;
  split_header_fields(c.head, fields);
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[0].name, "Content-Type");
}

TEST(Http1CaptureTest, HeadRequestKeepsTheHeadAndNoBody) {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n";
  const Captured c = capture_whole(head + "HTTP/1.1 200 OK\r\n", 1 << 20, true);
  EXPECT_EQ(c.status, Status::complete);
  EXPECT_EQ(c.head, head);
  EXPECT_EQ(c.body, "");
  EXPECT_FALSE(c.body_truncated);
}

TEST(Http1CaptureTest, BodyBeyondMaxBodyIsCountedButNotKept) {
  const Captured c = capture_whole(kLoginHead + kLoginBody, 9);
  EXPECT_EQ(c.status, Status::complete);
  EXPECT_EQ(c.body, kLoginBody.substr(0, 9));
  EXPECT_TRUE(c.body_truncated);
  EXPECT_EQ(c.body_bytes, kLoginBody.size());
  expect_same_capture_at_every_cut(kLoginHead + kLoginBody, 9);

  // The bound falls inside the second chunk.
  const Captured chunked = capture_whole(kChunkedHead + kChunkedBody, 7);
  EXPECT_EQ(chunked.body, "Wikiped");
  EXPECT_TRUE(chunked.body_truncated);
  expect_same_capture_at_every_cut(kChunkedHead + kChunkedBody, 7);

  const Captured nothing = capture_whole(kLoginHead + kLoginBody, 0);
  EXPECT_EQ(nothing.body, "");
  EXPECT_TRUE(nothing.body_truncated);
}

TEST(Http1CaptureTest, BodyOfExactlyMaxBodyIsNotTruncated) {
  const Captured c = capture_whole(kLoginHead + kLoginBody, kLoginBody.size());
  EXPECT_EQ(c.body, kLoginBody);
  EXPECT_FALSE(c.body_truncated);
}

TEST(Http1CaptureTest, ResetClearsTheCaptureAndSetCaptureNullptrStopsIt) {
  Parser::Capture capture;
  capture.max_body = 4;
  Parser parser;
  parser.set_capture(&capture);
  parser.reset(false);
  const std::string first = kLoginHead + kLoginBody;
  parser.feed(first.data(), first.size());
  ASSERT_TRUE(capture.body_truncated);

  parser.reset(false);
  EXPECT_EQ(capture.head, "");
  EXPECT_EQ(capture.body, "");
  EXPECT_FALSE(capture.body_truncated);
  EXPECT_EQ(capture.max_body, 4u);  // the caller's setting stays
  const std::string second = "HTTP/1.1 204 No Content\r\n\r\n";
  parser.feed(second.data(), second.size());
  EXPECT_EQ(capture.head, second);

  parser.set_capture(nullptr);
  parser.reset(false);
  parser.feed(first.data(), first.size());
  EXPECT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(capture.head, second);  // untouched
  EXPECT_EQ(parser.capture(), nullptr);
}

TEST(Http1CaptureTest, PipelinedResponsesAreCapturedOneAtATime) {
  const std::string second = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond";
  const std::string stream = kChunkedHead + kChunkedBody + second;
  Parser::Capture capture;
  Parser parser;
  parser.set_capture(&capture);
  parser.reset(false);
  const std::size_t used = parser.feed(stream.data(), stream.size());
  EXPECT_EQ(capture.body, kChunkedDecoded);
  parser.reset(false);
  parser.feed(stream.data() + used, stream.size() - used);
  EXPECT_EQ(parser.status(), Status::complete);
  EXPECT_EQ(capture.head, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n");
  EXPECT_EQ(capture.body, "second");
}

TEST(Http1CaptureTest, SplitHeaderFieldsKeepsOrderRepeatsAndTrimsValues) {
  const std::string head =
      "HTTP/1.1 200 OK\r\n"
      "Set-Cookie: a=1\r\n"
      "X-Spaces: \t padded value \t\r\n"
      "X-Empty:\r\n"
      "set-cookie:b=2; Path=/x\n"
      "X-Colon: a:b\r\n"
      "\r\n";
  std::vector<CapturedHeader> fields{{"stale", "entry"}};
  split_header_fields(head, fields);
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(fields[0].name, "Set-Cookie");
  EXPECT_EQ(fields[0].value, "a=1");
  EXPECT_EQ(fields[1].name, "X-Spaces");
  EXPECT_EQ(fields[1].value, "padded value");
  EXPECT_EQ(fields[2].name, "X-Empty");
  EXPECT_EQ(fields[2].value, "");
  EXPECT_EQ(fields[3].name, "set-cookie");
  EXPECT_EQ(fields[3].value, "b=2; Path=/x");
  EXPECT_EQ(fields[4].name, "X-Colon");
  EXPECT_EQ(fields[4].value, "a:b");
}

TEST(Http1CaptureTest, SplitHeaderFieldsOfNothingOrAStatusLineOnly) {
  std::vector<CapturedHeader> fields;
  split_header_fields("", fields);
  EXPECT_TRUE(fields.empty());
  split_header_fields("HTTP/1.1 204 No Content\r\n\r\n", fields);
  EXPECT_TRUE(fields.empty());
  // A head cut short by an error: what is a whole field is still one.
  split_header_fields("HTTP/1.1 200 OK\r\nA: 1\r\nB-with-no-col", fields);
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0].value, "1");
}

TEST(Http1CaptureTest, CapturingAgainIntoGrownBuffersDoesNotAllocate) {
  const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
  const std::vector<std::string> responses = {
      kLoginHead + kLoginBody,
      interim + kChunkedHead + kChunkedBody,
      "HTTP/1.1 204 No Content\r\nSet-Cookie: x=y\r\n\r\n",
  };
  Parser::Capture capture;
  Parser parser;
  parser.set_capture(&capture);
  std::vector<CapturedHeader> fields;
  const auto parse_all = [&] {
    std::size_t fields_seen = 0;
    for (const std::string& response : responses) {
      parser.reset(false);
      for (char byte : response) parser.feed(&byte, 1);  // the most appends
      EXPECT_EQ(parser.status(), Status::complete);
      split_header_fields(capture.head, fields);
      fields_seen += fields.size();
    }
    return fields_seen;
  };
  const std::size_t warm_up = parse_all();  // the buffers grow here
  kubeload::testing::AllocationCounter allocations;
  EXPECT_EQ(parse_all(), warm_up);
  EXPECT_EQ(allocations.count(), 0u);
}

}  // namespace
}  // namespace kubeload::loadgen
