// The operator's parse of a worker's /result (simdjson) against the bounded
// parse it stands in for (api::parse_bounded_result): the same document, down
// to the type of each number, or the same problem, for real documents, the
// corners of JSON, the limits at and one past their edge, and bodies too large
// for its buffers.

#include "operator/worker_result_parser.hpp"

#include <gtest/gtest.h>

#include <malloc.h>

#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/result_limits.hpp"
#include "kubeload/api/worker_protocol.hpp"
#include "kubeload/result.hpp"

namespace kubeload::controller {
namespace {

using api::BoundedParse;
using api::ResultLimits;
using nlohmann::json;

constexpr ResultLimits kRoomy{1024 * 1024, 100000, 8};

// Equal, and every value of the same JSON type: nlohmann's == takes 1 and 1u
// (and 0.0 and -0.0) as equal, the document's readers do not.
::testing::AssertionResult same_json(const json& a, const json& b) {
  if (a.type() != b.type()) {
    return ::testing::AssertionFailure() << a.dump() << " (" << a.type_name() << ") vs " << b.dump()
                                         << " (" << b.type_name() << ")";
  }
  if (a.is_object()) {
    if (a.size() != b.size())
      return ::testing::AssertionFailure() << a.dump() << " vs " << b.dump();
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key())) return ::testing::AssertionFailure() << "no " << it.key();
      if (auto same = same_json(*it, b.at(it.key())); !same) {
        return same;
      }
    }
    return ::testing::AssertionSuccess();
  }
  if (a.is_array()) {
    if (a.size() != b.size())
      return ::testing::AssertionFailure() << a.dump() << " vs " << b.dump();
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (auto same = same_json(a[i], b[i]); !same) {
        return same;
      }
    }
    return ::testing::AssertionSuccess();
  }
  if (a.dump() != b.dump()) return ::testing::AssertionFailure() << a.dump() << " vs " << b.dump();
  return ::testing::AssertionSuccess();
}

void expect_as_bounded(const WorkerResultParser& parser, std::string_view body,
                       const ResultLimits& limits) {
  SCOPED_TRACE(std::string(body.substr(0, 120)));
  const BoundedParse expected = api::parse_bounded_result(body, limits);
  const BoundedParse got = parser.parse(body, limits);
  EXPECT_EQ(got.problem, expected.problem);
  ASSERT_EQ(got.document.has_value(), expected.document.has_value());
  if (expected.document) {
    EXPECT_TRUE(same_json(*got.document, *expected.document));
  }
}

// A worker's final document as loadgen's worker writes it: a run of
// `stages` stages and `requests` requests, every row's histograms holding
// `values` latencies.
std::string worker_document(int stages, int requests, int values) {
  auto run = std::make_shared<RunResult>();
  run->finished = true;
  const auto fill = [values](Result& r, int seed) {
    for (int i = 0; i < values; ++i) {
      r.latency.record(100 + (i * 7919 + seed * 104729) % 2000000);
      r.waiting.record(90 + (i * 6007 + seed) % 1000000);
    }
    r.connect.record(250 + seed);
    r.requests = static_cast<uint64_t>(values);
    r.status_codes[200] = static_cast<uint64_t>(values - 1);
    r.status_codes[503] = 1;
    r.errors[ErrorKind::status] = 1;
    r.bytes_received = 18446744073709551000u;  // near the top of 64 bits
    r.duration_seconds = 3.9999999999999996;
  };
  fill(run->result, 0);
  for (int i = 0; i < stages; ++i) {
    StageResult stage;
    stage.index = i;
    stage.duration_seconds_planned = 0.4;
    stage.connections = static_cast<uint64_t>(2 + i % 3);
    fill(stage.result, i + 1);
    run->stages.push_back(std::move(stage));
  }
  for (int i = 0; i < requests; ++i) {
    NamedResult row;
    row.name = "r" + std::to_string(i);
    fill(row.result, 100 + i);
    run->request_results.push_back(std::move(row));
  }
  api::ResultHead head;
  head.loadtest_uid = "4a1c2d3e-0000-4000-8000-000000000001";
  head.started_at_ms = 1796134986468;
  ResultDocumentWriter writer(run, api::to_json(head));
  std::string document, piece;
  while (writer.next(piece)) document += piece;
  return document;
}

TEST(WorkerResultParser, ReadsAWorkersResultAsTheBoundedParseDoes) {
  const WorkerResultParser parser;
  for (const auto& [stages, requests] :
       std::vector<std::pair<int, int>>{{0, 1}, {10, 5}, {3, 20}}) {
    const std::string document = worker_document(stages, requests, 300);
    SCOPED_TRACE(std::to_string(document.size()) + " bytes");
    LoadTestSpec spec;
    spec.load.stages.resize(static_cast<std::size_t>(stages));
    spec.requests.resize(static_cast<std::size_t>(requests));
    expect_as_bounded(parser, document, api::result_limits(spec));
    // What the operator then reads from it.
    const BoundedParse parsed = parser.parse(document, api::result_limits(spec));
    ASSERT_TRUE(parsed.document);
    EXPECT_EQ(api::result_document_from_json(*parsed.document).run.result.latency.total_count(),
              300u);
  }
}

TEST(WorkerResultParser, ReadsTheCornersOfJsonAsNlohmannDoes) {
  const WorkerResultParser parser;
  for (const char* body : {
           R"({"n": 0, "m": -0, "i": -9223372036854775808, "u": 18446744073709551615})",
           R"({"m": [-0]})",
           "-0",
           R"({"m": -0.0, "e": -0e1, "id": "a-0-b", "s": "-0,"})",
           R"({"big": 9223372036854775808, "f": 1.5, "e": 1e308, "tiny": 5e-324, "neg": -2.5e-3})",
           R"({"z": 0.0, "nz": -0.0, "x": 1E2, "y": 100})",
           R"({"a": "\u00e9\ud83d\ude00\n\t\"\\\/", "b": "", "c": "plain"})",
           R"({"dup": 1, "dup": "last wins"})",
           R"({"t": true, "f": false, "n": null, "o": {}, "l": []})",
           R"([1, [2, [3]], {"k": [{}]}])",
           R"("a lone string")",
           "  \n\t{\"spaces\" : [ 1 , 2 ] }  \n",
           "42",
       }) {
    expect_as_bounded(parser, body, kRoomy);
  }
}

TEST(WorkerResultParser, RefusesWhatTheBoundedParseRefusesInItsWords) {
  const WorkerResultParser parser;
  for (const char* body : {
           "",
           "{",
           "{\"a\": }",
           "{\"a\": 1} trailing",
           "{\"a\": 1}{}",
           "[1, 2,]",
           "{'a': 1}",
           "{\"a\": 01}",
           "{\"a\": 1e999}",
           "{\"a\": 99999999999999999999999}",
           "{\"a\": NaN}",
           "{\"s\": \"\\ud800\"}",
           "{\"s\": \"tab\there\"}",
           "{\"s\": \"\xff\xfe\"}",
           "{\"s\": \"\\x41\"}",
           "nul",
           "{\"a\": 1}\x00",
       }) {
    expect_as_bounded(parser, body, kRoomy);
  }
  EXPECT_NE(parser.parse("{\"a\": 1} trailing", kRoomy).problem, "");
}

TEST(WorkerResultParser, CountsValuesAndDepthAsTheBoundedParseDoes) {
  const WorkerResultParser parser;
  // The object, then its array and its three numbers: 5 values, 2 levels.
  const std::string body = R"({"a": [1, 2, 3]})";
  for (std::size_t values : {4, 5, 6}) {
    for (std::size_t depth : {1, 2, 3}) {
      SCOPED_TRACE(std::to_string(values) + " values, depth " + std::to_string(depth));
      const ResultLimits limits{1024, values, depth};
      expect_as_bounded(parser, body, limits);
      EXPECT_EQ(parser.parse(body, limits).document.has_value(), values >= 5 && depth >= 2);
    }
  }
  // Over the limits deep inside a large document: refused, in the bounded
  // parse's words.
  std::string deep = "{\"rows\": [";
  for (int i = 0; i < 2000; ++i) deep += std::string(i ? "," : "") + "{\"x\": [[[[[[[1]]]]]]]}";
  deep += "]}";
  expect_as_bounded(parser, deep, kRoomy);
  EXPECT_NE(parser.parse(deep, kRoomy).problem, "");
  const ResultLimits small_body{15, 100, 8};
  expect_as_bounded(parser, body, small_body);
  EXPECT_NE(parser.parse(body, small_body).problem, "");
}

TEST(WorkerResultParser, ABodyTooLargeForItsBuffersIsReadAsWell) {
  const WorkerResultParser parser;
  // Past the size simdjson is given (256 KiB), valid and not.
  const std::string large = "{\"s\": \"" + std::string(400 * 1024, 'A') + "\", \"n\": 7}";
  expect_as_bounded(parser, large, kRoomy);
  EXPECT_TRUE(parser.parse(large, kRoomy).document.has_value());
  expect_as_bounded(parser, large.substr(0, large.size() - 1), kRoomy);
  // And a small one after it, with the same parsers.
  expect_as_bounded(parser, R"({"after": [1, 2]})", kRoomy);
}

// What the /result budget leases for an answer (peak_bytes) covers what
// reading it leaves held: the document and the parser kept for the next
// call. Measured with glibc's count of the bytes in use (ASan's allocator
// reports none: there this checks nothing).
TEST(WorkerResultParser, WhatAParseHoldsIsWithinItsPeakBytes) {
  std::string zeros = "[0";
  for (std::size_t i = 1; i < kRoomy.values - 1; ++i) zeros += ",0";
  zeros += "]";
  std::string members = "{";
  for (int i = 0; i < 8000; ++i) members += (i == 0 ? "\"" : ",\"") + std::to_string(i) + "\":0";
  members += "}";
  const std::vector<std::string> bodies = {worker_document(10, 5, 200), worker_document(0, 1, 50),
                                           zeros, members,
                                           "[\"" + std::string(400 * 1024, 'A') + "\"]"};
  for (const std::string& body : bodies) {
    SCOPED_TRACE(body.substr(0, 60));
    const WorkerResultParser parser;
    const std::size_t before = mallinfo2().uordblks;
    const BoundedParse parsed = parser.parse(body, kRoomy);
    const std::size_t held = mallinfo2().uordblks - before;
    ASSERT_TRUE(parsed.document.has_value()) << parsed.problem;
    EXPECT_LE(held + body.size(), WorkerResultParser::peak_bytes(body.size(), kRoomy))
        << held << " bytes held for " << body.size() << " of body";
  }
}

TEST(WorkerResultParser, ParsesOnSeveralThreadsAtOnce) {
  const WorkerResultParser parser;
  const std::vector<std::string> bodies = {worker_document(10, 5, 200), worker_document(0, 1, 50),
                                           R"({"not": "a result"})"};
  std::vector<json> expected;
  for (const std::string& body : bodies) {
    expected.push_back(*api::parse_bounded_result(body, kRoomy).document);
  }
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (std::size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < 60; ++i) {
        const std::size_t which = (i + t) % bodies.size();
        const BoundedParse parsed = parser.parse(bodies[which], kRoomy);
        if (!parsed.document || *parsed.document != expected[which]) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace kubeload::controller
