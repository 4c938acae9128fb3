#include "operator/kube/watch_event_parser.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "operator/kube/response.hpp"

namespace kubeload::kube {
namespace {

// Lines as kube-apiserver 1.32 writes them for a ConfigMap watch.
const std::string kAdded =
    R"({"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm1",)"
    R"("namespace":"default","uid":"5b0c","resourceVersion":"1001"},"data":{"k":"v"}}})"
    "\n";
const std::string kModified =
    R"({"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm1",)"
    R"("namespace":"default","resourceVersion":"1002"},"data":{"k":"v2","unicode":"\u00e9\n"}}})"
    "\n";
const std::string kBookmark =
    R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{)"
    R"("resourceVersion":"1050","annotations":{"k8s.io/initial-events-end":"true"}}}})"
    "\n";
const std::string kDeleted =
    R"({"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm1",)"
    R"("namespace":"default","resourceVersion":"1060"}}})"
    "\n";
const std::string kGone =
    R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
    R"j("status":"Failure","message":"too old resource version: 1 (1001)","reason":"Expired",)j"
    R"("code":410}})"
    "\n";

const std::string kStream = kAdded + kModified + kBookmark + kDeleted + kGone;

std::vector<WatchParseItem> parse_in_pieces(
    const std::string& s, const std::vector<std::size_t>& cuts,
    std::size_t max_line = WatchEventParser::kDefaultMaxLineBytes) {
  WatchEventParser p(max_line);
  std::vector<WatchParseItem> out;
  std::size_t at = 0;
  for (std::size_t c : cuts) {
    p.feed(std::string_view(s).substr(at, c - at), out);
    at = c;
  }
  p.feed(std::string_view(s).substr(at), out);
  p.finish(out);
  return out;
}

std::vector<WatchParseItem> parse_whole(const std::string& s) {
  return parse_in_pieces(s, {});
}

std::vector<WatchParseItem> parse_byte_by_byte(
    const std::string& s, std::size_t max_line = WatchEventParser::kDefaultMaxLineBytes) {
  WatchEventParser p(max_line);
  std::vector<WatchParseItem> out;
  for (char c : s) p.feed(std::string_view(&c, 1), out);
  p.finish(out);
  return out;
}

const WatchEvent& event(const WatchParseItem& item) {
  EXPECT_TRUE(std::holds_alternative<WatchEvent>(item));
  return std::get<WatchEvent>(item);
}

void expect_standard_stream(const std::vector<WatchParseItem>& items) {
  ASSERT_EQ(items.size(), 5u);
  EXPECT_EQ(event(items[0]).type, WatchEventType::Added);
  EXPECT_EQ(event(items[0]).object["metadata"]["resourceVersion"], "1001");
  EXPECT_EQ(event(items[1]).type, WatchEventType::Modified);
  EXPECT_EQ(event(items[1]).object["data"]["unicode"], "\xC3\xA9\n");
  EXPECT_EQ(event(items[2]).type, WatchEventType::Bookmark);
  EXPECT_EQ(event(items[2]).object["metadata"]["resourceVersion"], "1050");
  EXPECT_EQ(event(items[3]).type, WatchEventType::Deleted);
  EXPECT_EQ(event(items[4]).type, WatchEventType::Error);
}

TEST(KubeWatchParser, WholeStreamInOneChunk) {
  expect_standard_stream(parse_whole(kStream));
}

TEST(KubeWatchParser, ByteByByte) {
  expect_standard_stream(parse_byte_by_byte(kStream));
}

TEST(KubeWatchParser, RandomSplits) {
  std::mt19937 rng(20261129);
  for (int round = 0; round < 500; ++round) {
    std::uniform_int_distribution<std::size_t> pos(0, kStream.size());
    std::vector<std::size_t> cuts(std::uniform_int_distribution<int>(1, 12)(rng));
    for (auto& c : cuts) c = pos(rng);
    std::sort(cuts.begin(), cuts.end());
    SCOPED_TRACE("round " + std::to_string(round));
    expect_standard_stream(parse_in_pieces(kStream, cuts));
  }
}

TEST(KubeWatchParser, SplitExactlyAtNewlines) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < kStream.size(); ++i) {
    if (kStream[i] == '\n') cuts.push_back(i + 1);
  }
  expect_standard_stream(parse_in_pieces(kStream, cuts));
  // ...and just before each newline.
  for (auto& c : cuts) --c;
  expect_standard_stream(parse_in_pieces(kStream, cuts));
}

TEST(KubeWatchParser, ErrorEventCarries410Status) {
  const auto items = parse_byte_by_byte(kGone);
  ASSERT_EQ(items.size(), 1u);
  const auto status = parse_status(event(items[0]).object);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 410);
  EXPECT_EQ(status->reason, "Expired");
  EXPECT_EQ(status->message, "too old resource version: 1 (1001)");
}

TEST(KubeWatchParser, PartialLineIsHeldUntilItsNewline) {
  WatchEventParser p;
  std::vector<WatchParseItem> out;
  p.feed(std::string_view(kAdded).substr(0, 40), out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(p.buffered(), 40u);
  p.feed(std::string_view(kAdded).substr(40), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(p.buffered(), 0u);
}

TEST(KubeWatchParser, MalformedLinesBecomeErrorsAndParsingContinues) {
  const std::string stream = kAdded + "this is not json\n" + "[1,2,3]\n" +
                             R"({"type":"ADDED"})"
                             "\n" +
                             R"({"type":"SOMETHING","object":{}})"
                             "\n" +
                             R"({"object":{"kind":"Pod"}})"
                             "\n" +
                             R"({"type":"ADDED","object":"a string"})"
                             "\n" +
                             R"({"type":"MODIFIED","object":{"metadata":{"na)"
                             "\n" +
                             kDeleted;
  for (const auto& items : {parse_whole(stream), parse_byte_by_byte(stream)}) {
    ASSERT_EQ(items.size(), 9u);
    EXPECT_EQ(event(items[0]).type, WatchEventType::Added);
    for (std::size_t i = 1; i <= 7; ++i) {
      ASSERT_TRUE(std::holds_alternative<WatchParseError>(items[i])) << i;
      EXPECT_EQ(std::get<WatchParseError>(items[i]).line, i + 1);
    }
    EXPECT_NE(std::get<WatchParseError>(items[1]).message.find("not valid JSON"),
              std::string::npos);
    EXPECT_NE(std::get<WatchParseError>(items[4]).message.find("SOMETHING"), std::string::npos);
    EXPECT_EQ(event(items[8]).type, WatchEventType::Deleted);
  }
}

TEST(KubeWatchParser, BlankLinesAndCrlfAreTolerated) {
  std::string crlf = kAdded;
  crlf.insert(crlf.size() - 1, "\r");
  const auto items = parse_byte_by_byte("\n\r\n  \n" + crlf + "\n" + kDeleted);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(event(items[0]).type, WatchEventType::Added);
  EXPECT_EQ(event(items[1]).type, WatchEventType::Deleted);
}

TEST(KubeWatchParser, VeryLongLineWithinLimitParses) {
  const std::string big(4 * 1024 * 1024, 'x');
  const std::string line =
      R"({"type":"MODIFIED","object":{"kind":"ConfigMap","data":{"big":")" + big + "\"}}}\n";
  const auto items = parse_in_pieces(line + kDeleted, {1, 65536, 65537, 3000000, line.size() - 1});
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(event(items[0]).object["data"]["big"].get_ref<const std::string&>().size(), big.size());
  EXPECT_EQ(event(items[1]).type, WatchEventType::Deleted);
}

TEST(KubeWatchParser, LineOverTheLimitIsReportedOnceAndSkipped) {
  const std::string line =
      R"({"type":"ADDED","object":{"data":")" + std::string(5000, 'y') + "\"}}\n";
  const std::string stream = kAdded + line + kDeleted;
  for (const auto& items :
       {parse_byte_by_byte(stream, 1024), parse_in_pieces(stream, {100, 2000, 4000}, 1024)}) {
    ASSERT_EQ(items.size(), 3u);
    EXPECT_EQ(event(items[0]).type, WatchEventType::Added);
    ASSERT_TRUE(std::holds_alternative<WatchParseError>(items[1]));
    EXPECT_EQ(std::get<WatchParseError>(items[1]).line, 2u);
    EXPECT_NE(std::get<WatchParseError>(items[1]).message.find("longer than 1024"),
              std::string::npos);
    EXPECT_EQ(event(items[2]).type, WatchEventType::Deleted);
  }
}

TEST(KubeWatchParser, StreamEndingMidLineIsAnError) {
  const auto items = parse_whole(kAdded + kModified.substr(0, 30));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(event(items[0]).type, WatchEventType::Added);
  ASSERT_TRUE(std::holds_alternative<WatchParseError>(items[1]));
  EXPECT_NE(std::get<WatchParseError>(items[1]).message.find("ended inside"), std::string::npos);
}

TEST(KubeWatchParser, EventTypeNamesRoundTrip) {
  for (auto t : {WatchEventType::Added, WatchEventType::Modified, WatchEventType::Deleted,
                 WatchEventType::Bookmark, WatchEventType::Error}) {
    EXPECT_EQ(parse_watch_event_type(to_string(t)), t);
  }
  EXPECT_FALSE(parse_watch_event_type("added"));
}

}  // namespace
}  // namespace kubeload::kube
