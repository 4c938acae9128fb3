// Report writers: golden files for every format of every scenario, plus
// assertions that pin the numbers that matter independently of the goldens.
//
// Regenerate the goldens after an intended layout change with
//   KUBELOAD_UPDATE_GOLDEN=1 ./unit_tests --gtest_filter='*ReportGolden*'
// and review the diff before committing it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/result.hpp"
#include "reports/report.hpp"
#include "reports/report_writers.hpp"

#ifndef KUBELOAD_SOURCE_DIR
#error "report_test needs KUBELOAD_SOURCE_DIR (the repository root) to find tests/golden"
#endif

namespace kubeload::loadgen {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Building results by hand. Every helper keeps the Result invariants of
// result.hpp: requests = successes + errors, one latency/connect/waiting
// sample per complete response, status codes summing to complete responses.

struct ResponseShape {
  int64_t first_total_us = 1000;  // latencies spread evenly over [first, first + spread)
  int64_t spread_us = 1000;
  int64_t connect_us = 0;             // for a response on a new connection
  uint64_t new_connection_every = 1;  // 1: no keep-alive; N: one connect per N responses
  uint64_t header_bytes = 200;
  uint64_t body_bytes = 100;
  uint64_t request_bytes = 80;
};

// Adds `count` complete responses with status `code`.
void add_responses(Result& r, int code, uint64_t count, const ResponseShape& shape) {
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t spread = shape.spread_us * static_cast<int64_t>(i) / static_cast<int64_t>(count);
    const int64_t connect = i % shape.new_connection_every == 0 ? shape.connect_us : 0;
    const int64_t total = connect + shape.first_total_us + spread;
    r.latency.record(total);
    r.connect.record(connect);
    // Waiting ends at the first byte: most of the time after connecting.
    r.waiting.record((total - connect) * 3 / 4);
  }
  r.status_codes[code] += count;
  r.requests += count;
  r.bytes_received += count * (shape.header_bytes + shape.body_bytes);
  r.body_bytes_received += count * shape.body_bytes;
  r.bytes_sent += count * shape.request_bytes;
}

// Adds requests that failed before a complete response (no latency sample).
// Failures without a response, each taking `took_us`.
void add_failures(Result& r, ErrorKind kind, uint64_t count, uint64_t request_bytes = 80,
                  int64_t took_us = 1200) {
  r.errors[kind] += count;
  r.requests += count;
  if (kind != ErrorKind::connect && kind != ErrorKind::dropped)
    r.bytes_sent += count * request_bytes;
  if (count > 0) r.error_latency.record(took_us, count);
}

// Complete responses that count as failures (status or length).
void add_failed_responses(Result& r, ErrorKind kind, int code, uint64_t count,
                          const ResponseShape& shape) {
  add_responses(r, code, count, shape);
  r.errors[kind] += count;
}

RunInfo local_info(std::string path = "/index.html") {
  RunInfo info;
  info.url = "http://127.0.0.1:8080" + path;
  info.scheme = "http";
  info.host = "127.0.0.1";
  info.port = 8080;
  info.path = std::move(path);
  info.server_software = "nginx/1.22.1";
  info.document_length = 612;
  info.connections = 10;
  info.threads = 2;
  info.keep_alive = true;
  return info;
}

struct Scenario {
  std::string name;
  RunInfo info;
  RunResult run;
};

// 1000 GETs over 10 keep-alive connections, all 200, 2 seconds.
Scenario build_plain_closed() {
  Scenario s{"plain_closed", local_info(), RunResult()};
  ResponseShape shape;
  shape.first_total_us = 800;
  shape.spread_us = 1000;
  shape.connect_us = 150;
  shape.new_connection_every = 100;  // 10 connections for 1000 responses
  shape.header_bytes = 238;
  shape.body_bytes = 612;
  add_responses(s.run.result, 200, 1000, shape);
  s.run.result.duration_seconds = 2.0;
  return s;
}

// A sweep of 10, 20, 30 connections over two named requests, with every
// kind of error but write, non-2xx codes, warm-up, and no keep-alive.
Scenario build_staged_mixed() {
  Scenario s{"staged_mixed", local_info("/api/cart?user=7"), RunResult()};
  s.info.server_software = "kubeload-fixture/1";
  s.info.document_length = 1500;
  s.info.keep_alive = false;
  s.run.warmup_requests = 250;
  const uint64_t connections[] = {10, 20, 30};
  for (int stage = 0; stage < 3; ++stage) {
    // Each stage's requests split between "home" and "cart"; more load, slower.
    Result home;
    Result cart;
    ResponseShape shape;
    shape.connect_us = 300 + 100 * stage;
    shape.first_total_us = 2000 + 1500 * stage;
    shape.spread_us = 4000 * (stage + 1);
    shape.body_bytes = 1500;
    add_responses(home, 200, 600 + 200 * static_cast<uint64_t>(stage), shape);
    add_responses(home, 301, 1, shape);
    shape.body_bytes = 900;
    shape.first_total_us += 700;
    add_responses(cart, 200, 300 + 100 * static_cast<uint64_t>(stage), shape);
    add_failed_responses(cart, ErrorKind::status, 503, static_cast<uint64_t>(stage) + 1, shape);
    add_failed_responses(cart, ErrorKind::length, 200, 2, shape);
    add_failures(cart, ErrorKind::connect, stage == 2 ? 2 : 0);
    add_failures(home, ErrorKind::timeout, 1);
    add_failures(home, ErrorKind::read, stage == 0 ? 4 : 0);
    home.duration_seconds = 10.0 + 0.001 * stage;
    cart.duration_seconds = home.duration_seconds;

    StageResult row;
    row.index = stage;
    row.duration_seconds_planned = 10.0;
    row.connections = connections[stage];
    row.result = home;
    row.result.merge(cart);
    s.run.stages.push_back(row);

    if (stage == 0) {
      s.run.request_results = {{"home", home}, {"cart", cart}};
    } else {
      s.run.request_results[0].result.merge(home);
      s.run.request_results[1].result.merge(cart);
    }
  }
  // Stages run one after the other: the run lasts their sum (merge takes the max).
  double total_seconds = 0;
  for (const StageResult& stage : s.run.stages) {
    s.run.result.merge(stage.result);
    total_seconds += stage.result.duration_seconds;
  }
  s.run.result.duration_seconds = total_seconds;
  for (NamedResult& named : s.run.request_results) named.result.duration_seconds = total_seconds;
  return s;
}

// 250/s then 750/s for 2 s each, capped at 64 connections: some late, some dropped.
Scenario build_open_model() {
  Scenario s{"open_model", local_info("/"), RunResult()};
  s.info.url = "https://127.0.0.1:8443/";
  s.info.scheme = "https";
  s.info.port = 8443;
  s.info.connections = 64;
  s.info.rate = 500.0;
  s.info.threads = 1;
  s.info.tls_protocol = "TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256";
  const double rates[] = {250.0, 750.0};
  for (int stage = 0; stage < 2; ++stage) {
    StageResult row;
    row.index = stage;
    row.duration_seconds_planned = 2.0;
    row.rate = rates[stage];
    ResponseShape shape;
    shape.connect_us = 900;  // TLS handshakes
    shape.new_connection_every = 50;
    shape.first_total_us = 400;
    // Past the knee latency is measured from the intended send time, so it grows.
    shape.spread_us = stage == 0 ? 600 : 250000;
    Result& r = row.result;
    add_responses(r, 200, stage == 0 ? 500 : 1479, shape);
    add_failures(r, ErrorKind::write, stage == 0 ? 0 : 1);
    r.duration_seconds = 2.0;
    add_failures(r, ErrorKind::dropped, stage == 0 ? 0 : 19, 0, 2'000'000);
    r.rate = RateCounts{rates[stage], stage == 0 ? 0u : 12u};
    s.run.stages.push_back(row);
  }
  s.run.result = s.run.stages[0].result;
  s.run.result.merge(s.run.stages[1].result);
  // Rates of consecutive stages do not add up; the run asked for their time-weighted mean.
  s.run.result.rate->target = 500.0;
  s.run.result.duration_seconds = 4.0;
  s.run.result.drain_seconds = 1.25;
  s.run.stages[1].result.drain_seconds = 1.25;
  return s;
}

// Seed 000: ab -n 1000 -c 100 of a 6,224,340-byte JPEG, 565 s; the byte
// totals pass 2^32, where ab's counters went negative.
Scenario build_seed000_large() {
  Scenario s{"seed000_large", local_info("/image1/madonna.jpg"), RunResult()};
  s.info.url = "http://127.0.0.1/image1/madonna.jpg";
  s.info.port = 80;
  s.info.server_software = "Apache/2.2.3";
  s.info.document_length = 6224340;
  s.info.connections = 100;
  s.info.threads = 1;
  s.info.keep_alive = false;
  ResponseShape shape;
  shape.connect_us = 616000;
  shape.first_total_us = 47000000;
  shape.spread_us = 11800000;
  shape.header_bytes = 373;
  shape.body_bytes = 6224340;
  shape.request_bytes = 103;
  add_responses(s.run.result, 200, 1000, shape);
  s.run.result.duration_seconds = 565.240794;
  return s;
}

// Nothing happened: no requests, no time.
Scenario build_empty_run() {
  Scenario s{"empty", local_info(), RunResult()};
  s.info.server_software.clear();
  s.info.document_length = 0;
  return s;
}

// The target refused every connection: requests, but no complete response.
Scenario build_all_connect_errors() {
  Scenario s{"all_connect_errors", local_info(), RunResult()};
  s.info.server_software.clear();
  s.info.document_length = 0;
  add_failures(s.run.result, ErrorKind::connect, 37);
  s.run.result.duration_seconds = 1.5;
  s.run.finished = false;
  return s;
}

// A scenario run (docs/scenarios.md): "buy" logs in, adds to the cart and
// checks out, "browse" logs in and lists items; the two share the login
// step's row. Some logins find no token (extract), some checkouts answer
// without an order id (check), one cart call times out; "audit" ended no
// iteration.
Scenario build_scenario_journey() {
  Scenario s{"scenario_journey", local_info("/shop/login"), RunResult()};
  s.info.server_software = "kubeload-shop/1";
  s.info.document_length = 0;
  s.info.connections = 20;
  ResponseShape shape;
  shape.connect_us = 200;
  shape.new_connection_every = 50;
  shape.body_bytes = 180;
  Result login, cart, checkout, items;
  shape.first_total_us = 3000;
  shape.spread_us = 2000;
  add_responses(login, 200, 590, shape);
  add_failed_responses(login, ErrorKind::extract, 200, 10, shape);
  shape.first_total_us = 1500;
  add_responses(cart, 200, 299, shape);
  add_failures(cart, ErrorKind::timeout, 1, 80, 30'000'000);
  shape.first_total_us = 8000;
  shape.spread_us = 6000;
  add_responses(checkout, 200, 293, shape);
  add_failed_responses(checkout, ErrorKind::check, 200, 4, shape);
  shape.first_total_us = 2500;
  shape.body_bytes = 4200;
  add_responses(items, 200, 600, shape);
  for (Result* r : {&login, &cart, &checkout, &items}) r->duration_seconds = 30.0;
  s.run.request_results = {
      {"login", login}, {"cart", cart}, {"checkout", checkout}, {"items", items}};
  for (const NamedResult& step : s.run.request_results) s.run.result.merge(step.result);
  // 300 buy iterations: 10 ended at login (no token), 1 at the cart, 4 checkouts failed.
  ScenarioResult buy{"buy", 300, 15, Histogram{}};
  for (uint64_t i = 0; i < 300; ++i) buy.duration.record(2'000'000 + 5'000 * (i % 200));
  ScenarioResult browse{"browse", 300, 0, Histogram{}};
  for (uint64_t i = 0; i < 300; ++i) browse.duration.record(1'000'000 + 2'000 * (i % 100));
  s.run.scenarios = {buy, browse, ScenarioResult{"audit", 0, 0, Histogram{}}};
  return s;
}

// Building a scenario records thousands of samples: build each one once.
const Scenario& plain_closed() {
  static const Scenario scenario = build_plain_closed();
  return scenario;
}
const Scenario& staged_mixed() {
  static const Scenario scenario = build_staged_mixed();
  return scenario;
}
const Scenario& open_model() {
  static const Scenario scenario = build_open_model();
  return scenario;
}
const Scenario& seed000_large() {
  static const Scenario scenario = build_seed000_large();
  return scenario;
}
const Scenario& empty_run() {
  static const Scenario scenario = build_empty_run();
  return scenario;
}
const Scenario& all_connect_errors() {
  static const Scenario scenario = build_all_connect_errors();
  return scenario;
}
const Scenario& scenario_journey() {
  static const Scenario scenario = build_scenario_journey();
  return scenario;
}

std::vector<const Scenario*> all_scenarios() {
  return {&plain_closed(), &staged_mixed(),       &open_model(),      &seed000_large(),
          &empty_run(),    &all_connect_errors(), &scenario_journey()};
}

std::string render(ReportFormat format, const Scenario& s) {
  std::ostringstream out;
  write_report(out, format, s.info, s.run);
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The line that starts with `prefix`, or "" when there is none.
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (const std::string& line : lines_of(text)) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

// ---------------------------------------------------------------------------
// Goldens

struct FormatCase {
  ReportFormat format;
  const char* name;
  const char* file_suffix;  // golden file: <scenario>.<file_suffix>
};

void PrintTo(const FormatCase& format, std::ostream* out) {
  *out << format.name;
}

constexpr FormatCase kFormats[] = {{ReportFormat::text, "text", "text.txt"},
                                   {ReportFormat::ab, "ab", "ab.txt"},
                                   {ReportFormat::jmeter, "jmeter", "jmeter.txt"},
                                   {ReportFormat::json, "json", "json"}};

std::string golden_path(const std::string& scenario, const FormatCase& format) {
  return std::string(KUBELOAD_SOURCE_DIR) + "/tests/golden/report/" + scenario + "." +
         format.file_suffix;
}

bool updating_goldens() {
  const char* update = std::getenv("KUBELOAD_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// Histogram strings are compared by what they decode to: the compressed
// bytes depend on zlib's version, the counts do not.
void expect_same_json(const json& expected, const json& actual, const std::string& where) {
  static const std::set<std::string> kHistogramKeys = {"histogram", "connectHistogram",
                                                       "waitingHistogram"};
  ASSERT_EQ(expected.type(), actual.type()) << where;
  if (expected.is_object()) {
    ASSERT_EQ(expected.size(), actual.size()) << where << ": " << actual.dump();
    for (const auto& [key, value] : expected.items()) {
      ASSERT_TRUE(actual.contains(key)) << where << "." << key;
      if (kHistogramKeys.contains(key)) {
        EXPECT_TRUE(Histogram::decode_base64(value.get<std::string>()) ==
                    Histogram::decode_base64(actual.at(key).get<std::string>()))
            << where << "." << key;
      } else {
        expect_same_json(value, actual.at(key), where + "." + key);
      }
    }
  } else if (expected.is_array()) {
    ASSERT_EQ(expected.size(), actual.size()) << where;
    for (size_t i = 0; i < expected.size(); ++i) {
      expect_same_json(expected[i], actual[i], where + "[" + std::to_string(i) + "]");
    }
  } else {
    EXPECT_EQ(expected, actual) << where;
  }
}

class ReportGolden : public ::testing::TestWithParam<FormatCase> {};

TEST_P(ReportGolden, MatchesGoldenFileForEveryScenario) {
  const FormatCase& format = GetParam();
  for (const Scenario* scenario_ptr : all_scenarios()) {
    const Scenario& scenario = *scenario_ptr;
    SCOPED_TRACE(scenario.name + " as " + format.name);
    const std::string actual = render(format.format, scenario);
    const std::string path = golden_path(scenario.name, format);
    if (updating_goldens()) {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      ASSERT_TRUE(out) << "cannot write " << path << " (does tests/golden/report/ exist?)";
      out << actual;
      continue;
    }
    const std::optional<std::string> expected = read_file(path);
    ASSERT_TRUE(expected.has_value())
        << path << " is missing; run with KUBELOAD_UPDATE_GOLDEN=1 to create it";
    if (format.format == ReportFormat::json) {
      expect_same_json(json::parse(*expected), json::parse(actual), "$");
    } else {
      EXPECT_EQ(*expected, actual)
          << "differs from " << path << " (KUBELOAD_UPDATE_GOLDEN=1 regenerates it)";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, ReportGolden, ::testing::ValuesIn(kFormats),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------
// Properties of every report

TEST(Report, NoFormatPrintsNanOrInfAndAllEndWithNewline) {
  const std::regex not_a_number(R"(\b(nan|inf|infinity)\b)", std::regex::icase);
  for (const Scenario* scenario_ptr : all_scenarios()) {
    const Scenario& scenario = *scenario_ptr;
    for (const FormatCase& format : kFormats) {
      SCOPED_TRACE(scenario.name + " as " + format.name);
      const std::string text = render(format.format, scenario);
      EXPECT_FALSE(std::regex_search(text, not_a_number)) << text;
      ASSERT_FALSE(text.empty());
      EXPECT_EQ(text.back(), '\n');
      EXPECT_EQ(text.find(" \n"), std::string::npos) << "trailing blank in\n" << text;
    }
  }
}

TEST(Report, ParsesEveryFormatNameAndNothingElse) {
  EXPECT_EQ(parse_report_format("text"), ReportFormat::text);
  EXPECT_EQ(parse_report_format("ab"), ReportFormat::ab);
  EXPECT_EQ(parse_report_format("jmeter"), ReportFormat::jmeter);
  EXPECT_EQ(parse_report_format("json"), ReportFormat::json);
  for (const char* bad : {"", "TEXT", "Json", "csv", "ab ", "jmeter,json"}) {
    EXPECT_EQ(parse_report_format(bad), std::nullopt) << '"' << bad << '"';
  }
}

// ---------------------------------------------------------------------------
// json

void expect_same_run(const RunResult& expected, const RunResult& actual) {
  EXPECT_TRUE(expected.result == actual.result);
  EXPECT_EQ(expected.warmup_requests, actual.warmup_requests);
  EXPECT_EQ(expected.finished, actual.finished);
  ASSERT_EQ(expected.stages.size(), actual.stages.size());
  for (size_t i = 0; i < expected.stages.size(); ++i) {
    EXPECT_EQ(expected.stages[i].index, actual.stages[i].index);
    EXPECT_EQ(expected.stages[i].duration_seconds_planned,
              actual.stages[i].duration_seconds_planned);
    EXPECT_EQ(expected.stages[i].connections, actual.stages[i].connections);
    EXPECT_EQ(expected.stages[i].rate, actual.stages[i].rate);
    EXPECT_TRUE(expected.stages[i].result == actual.stages[i].result) << "stage " << i;
  }
  ASSERT_EQ(expected.request_results.size(), actual.request_results.size());
  for (size_t i = 0; i < expected.request_results.size(); ++i) {
    EXPECT_EQ(expected.request_results[i].name, actual.request_results[i].name);
    EXPECT_TRUE(expected.request_results[i].result == actual.request_results[i].result);
  }
}

TEST(ReportJson, IsThePrettyPrintedResultDocumentAndParsesBackToTheInput) {
  for (const Scenario* scenario_ptr : all_scenarios()) {
    const Scenario& scenario = *scenario_ptr;
    SCOPED_TRACE(scenario.name);
    const std::string text = render(ReportFormat::json, scenario);
    json parsed = json::parse(text);
    EXPECT_EQ(text, parsed.dump(2) + "\n");
    EXPECT_EQ(parsed.at("version"), "v1");
    // The result document, and the protocol its requests were sent as.
    EXPECT_EQ(parsed.at("protocol"), scenario.info.protocol);
    parsed.erase("protocol");
    EXPECT_EQ(parsed, to_json(scenario.run));
    expect_same_run(scenario.run, run_result_from_json(parsed));
  }
}

TEST(ReportJson, KeepsCountersAbove32BitsExact) {
  const std::string text = render(ReportFormat::json, seed000_large());
  EXPECT_NE(text.find("\"bytesReceived\": 6224713000"), std::string::npos) << text;
  EXPECT_NE(text.find("\"bodyBytesReceived\": 6224340000"), std::string::npos);
}

// ---------------------------------------------------------------------------
// ab

TEST(ReportAb, PrintsTransferTotalsOfSeed000As64BitNumbers) {
  const std::string ab = render(ReportFormat::ab, seed000_large());
  // 1000 x (6,224,340 body + 373 header) bytes: past 2^32, where ab printed -2115411649.
  EXPECT_EQ(line_starting(ab, "Total transferred:"), "Total transferred:      6224713000 bytes");
  EXPECT_EQ(line_starting(ab, "HTML transferred:"), "HTML transferred:       6224340000 bytes");
  // 6224713000 / 1024 / 565.240794
  EXPECT_EQ(line_starting(ab, "Transfer rate:"),
            "Transfer rate:          10754.39 [Kbytes/sec] received");
  EXPECT_EQ(line_starting(ab, "Requests per second:"),
            "Requests per second:    1.77 [#/sec] (mean)");
  // concurrency 100 x 565.240794 s x 1000 / 1000 requests; then / 100.
  EXPECT_EQ(line_starting(ab, "Time per request:"),
            "Time per request:       56524.079 [ms] (mean)");
  EXPECT_NE(ab.find("Time per request:       565.241 [ms] (mean, across all concurrent requests)"),
            std::string::npos);
  EXPECT_EQ(line_starting(ab, "Time taken for tests:"), "Time taken for tests:   565.241 seconds");
  for (const char* label : {"Total transferred:", "HTML transferred:", "Transfer rate:"}) {
    EXPECT_EQ(line_starting(ab, label).find('-'), std::string::npos) << label;
  }
  // ab without -k: no Keep-Alive line; nothing failed: no breakdown.
  EXPECT_EQ(ab.find("Keep-Alive requests"), std::string::npos);
  EXPECT_EQ(ab.find("(Connect:"), std::string::npos);
  EXPECT_EQ(line_starting(ab, "Failed requests:"), "Failed requests:        0");
}

TEST(ReportAb, HeaderFieldsStartAtColumn24AsInAb) {
  const std::string ab = render(ReportFormat::ab, seed000_large());
  EXPECT_EQ(line_starting(ab, "Server Software:"), "Server Software:        Apache/2.2.3");
  EXPECT_EQ(line_starting(ab, "Server Hostname:"), "Server Hostname:        127.0.0.1");
  EXPECT_EQ(line_starting(ab, "Server Port:"), "Server Port:            80");
  EXPECT_EQ(line_starting(ab, "Document Path:"), "Document Path:          /image1/madonna.jpg");
  EXPECT_EQ(line_starting(ab, "Document Length:"), "Document Length:        6224340 bytes");
  EXPECT_EQ(line_starting(ab, "Concurrency Level:"), "Concurrency Level:      100");
  EXPECT_EQ(line_starting(ab, "Complete requests:"), "Complete requests:      1000");
}

TEST(ReportAb, BreaksDownFailuresTheWayAbDoes) {
  const std::string ab = render(ReportFormat::ab, staged_mixed());
  // connect 2 + read 4 + length 6 + timeout 3 (one per stage); status failures are
  // "Non-2xx responses" (3 x 301 + 6 x 503), not failures, as in ab.
  EXPECT_NE(ab.find("Failed requests:        15\n"
                    "   (Connect: 2, Receive: 4, Length: 6, Exceptions: 3)\n"),
            std::string::npos)
      << ab;
  EXPECT_EQ(line_starting(ab, "Non-2xx responses:"), "Non-2xx responses:      9");
  EXPECT_EQ(line_starting(ab, "Write errors:"), "");             // none in this run
  EXPECT_EQ(ab.find("Keep-Alive requests"), std::string::npos);  // keep-alive off

  const std::string open = render(ReportFormat::ab, open_model());
  EXPECT_EQ(line_starting(open, "Write errors:"), "Write errors:           1");
  EXPECT_EQ(line_starting(open, "Failed requests:"), "Failed requests:        0");
  EXPECT_EQ(line_starting(open, "SSL/TLS Protocol:"),
            "SSL/TLS Protocol:       TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256");
}

TEST(ReportAb, CountsKeepAliveRequestsAsResponsesOnReusedConnections) {
  const std::string ab = render(ReportFormat::ab, plain_closed());
  // 1000 responses over 10 connections: 990 came on a reused connection.
  EXPECT_EQ(line_starting(ab, "Keep-Alive requests:"), "Keep-Alive requests:    990");
  EXPECT_EQ(line_starting(ab, "Time per request:"), "Time per request:       20.000 [ms] (mean)");
  EXPECT_EQ(line_starting(ab, "Requests per second:"),
            "Requests per second:    500.00 [#/sec] (mean)");
}

TEST(ReportAb, PercentageTableHasNineRowsEndingWithTheLongestRequest) {
  const std::string ab = render(ReportFormat::ab, seed000_large());
  const std::vector<std::string> lines = lines_of(ab);
  const auto title = std::find(lines.begin(), lines.end(),
                               "Percentage of the requests served within a certain time (ms)");
  ASSERT_NE(title, lines.end()) << ab;
  ASSERT_EQ(lines.end() - title, 10) << "title + 9 rows, at the end of the report";
  const std::regex row(R"( {1,2}(\d+)%  +(\d+)( \(longest request\))?)");
  const int percents[] = {50, 66, 75, 80, 90, 95, 98, 99, 100};
  long previous = 0;
  for (int i = 0; i < 9; ++i) {
    std::smatch match;
    const std::string& text = *(title + 1 + i);
    ASSERT_TRUE(std::regex_match(text, match, row)) << text;
    EXPECT_EQ(std::stoi(match[1]), percents[i]);
    EXPECT_GE(std::stol(match[2]), previous) << "percentiles must not decrease";
    previous = std::stol(match[2]);
    EXPECT_EQ(match[3].matched, i == 8);
  }
  // The longest request: connect 616 ms + 47 s + 11.8 s x 999/1000, to histogram precision.
  EXPECT_NEAR(previous, 616 + 47000 + 11788, 60);
}

TEST(ReportAb, ConnectionTimesUseAbsColumnWidths) {
  const std::string ab = render(ReportFormat::ab, plain_closed());
  EXPECT_NE(ab.find("Connection Times (ms)\n"
                    "              min  mean[+/-sd] median   max\n"
                    "Connect:        0    0   0.0      0       0\n"),
            std::string::npos)
      << ab;
  const std::regex row(R"((Connect|Processing|Waiting|Total):( +)\d+ +\d+ +\d+\.\d +\d+ +\d+)");
  int rows = 0;
  for (const std::string& line : lines_of(ab)) {
    if (std::regex_match(line, row)) {
      ++rows;
      EXPECT_EQ(line.size(), std::string("Connect:    ").size() + 5 + 1 + 4 + 1 + 5 + 1 + 6 + 1 + 7)
          << line;
    }
  }
  EXPECT_EQ(rows, 4);
}

TEST(ReportAb, OmitsRatesAndTablesWhenNothingWasMeasured) {
  const std::string ab = render(ReportFormat::ab, empty_run());
  EXPECT_EQ(ab.find("Requests per second"), std::string::npos);
  EXPECT_EQ(ab.find("Connection Times"), std::string::npos);
  EXPECT_EQ(ab.find("Percentage of the requests"), std::string::npos);
  EXPECT_EQ(line_starting(ab, "Complete requests:"), "Complete requests:      0");

  const std::string refused = render(ReportFormat::ab, all_connect_errors());
  EXPECT_NE(refused.find("Failed requests:        37\n"
                         "   (Connect: 37, Receive: 0, Length: 0, Exceptions: 0)\n"),
            std::string::npos);
  EXPECT_NE(refused.find("Requests per second:    24.67 [#/sec] (mean)"), std::string::npos);
  EXPECT_EQ(refused.find("Connection Times"), std::string::npos);
}

// ---------------------------------------------------------------------------
// The Processing estimate (ab's total - connect per request)

TEST(ReportModel, ProcessingIsExactWhenConnectTimeIsConstant) {
  Result r;
  ResponseShape shape;
  shape.connect_us = 500;  // every request connects, always in 0.5 ms
  shape.first_total_us = 1000;
  shape.spread_us = 1000;
  add_responses(r, 200, 1000, shape);
  // Per request: processing = total - connect = 1000 + i (us), i in [0, 1000).
  const report::ResultView view = report::view_of(r);
  EXPECT_DOUBLE_EQ(view.processing.min, 1.0);
  EXPECT_DOUBLE_EQ(view.processing.max, 1.999);
  EXPECT_NEAR(view.processing.mean, 1.4995, 0.001);
  EXPECT_NEAR(view.processing.median, 1.499, 0.0015);
  EXPECT_NEAR(view.processing.stddev, 0.2887, 0.0005);  // uniform over 1 ms: 1/sqrt(12)
}

TEST(ReportModel, ProcessingMeanIsExactAndNothingGoesNegative) {
  Result r;
  ResponseShape shape;
  shape.connect_us = 1500;  // one connect per 4 responses, longer than many a response
  shape.new_connection_every = 4;
  shape.first_total_us = 100;
  shape.spread_us = 1000;
  add_responses(r, 200, 400, shape);
  // The true mean of total - connect, from the same formula add_responses uses.
  double processing_sum_us = 0;
  for (int64_t i = 0; i < 400; ++i) processing_sum_us += 100 + 1000 * i / 400;
  const report::ResultView view = report::view_of(r);
  EXPECT_NEAR(view.processing.mean, processing_sum_us / 400 / 1000, 0.002);
  EXPECT_GT(view.connect.mean, 0.3);  // so the subtraction mattered
  for (double value : {view.processing.min, view.processing.mean, view.processing.stddev,
                       view.processing.median, view.processing.max}) {
    EXPECT_GE(value, 0.0);
  }
  EXPECT_EQ(view.reused_connection_responses, 300u);
}

TEST(ReportModel, EmptyResultHasOnlyZeros) {
  const report::ReportModel model = report::build_report_model(local_info(), RunResult());
  EXPECT_EQ(model.run.requests_per_second, 0.0);
  EXPECT_EQ(model.run.failure_percent, 0.0);
  EXPECT_EQ(model.run.bytes_received_per_second, 0.0);
  EXPECT_EQ(model.time_per_request_ms, 0.0);
  EXPECT_EQ(model.time_per_request_across_ms, 0.0);
  EXPECT_EQ(model.run.processing.mean, 0.0);
}

TEST(ReportModel, StagedClosedModelWeighsConcurrencyByStageTime) {
  const Scenario& s = staged_mixed();
  const report::ReportModel model = report::build_report_model(s.info, s.run);
  double connection_ms = 0;
  for (const StageResult& stage : s.run.stages) {
    connection_ms += static_cast<double>(*stage.connections) * stage.result.duration_seconds * 1000;
  }
  EXPECT_DOUBLE_EQ(model.time_per_request_ms,
                   connection_ms / static_cast<double>(s.run.result.requests));
}

// ---------------------------------------------------------------------------
// jmeter

TEST(ReportJmeter, HasOneRowPerStageAndPerNamedRequestPlusTotalAllAligned) {
  const std::string table = render(ReportFormat::jmeter, staged_mixed());
  const std::vector<std::string> lines = lines_of(table);
  ASSERT_EQ(lines.size(), 1u + 3u + 2u + 1u) << table;
  EXPECT_EQ(lines[0].rfind("Label", 0), 0u);
  for (const char* header : {"Samples", "Average", "Median", "90% Line", "95% Line", "99% Line",
                             "Min", "Max", "Error %", "Throughput", "KB/sec"}) {
    EXPECT_NE(lines[0].find(header), std::string::npos) << header;
  }
  EXPECT_EQ(lines[1].rfind("stage 0 (10 conns)", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("stage 1 (20 conns)", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3].rfind("stage 2 (30 conns)", 0), 0u) << lines[3];
  // As JMeter's row per sampler label.
  const Scenario& s = staged_mixed();
  EXPECT_EQ(lines[4].rfind("home ", 0), 0u) << lines[4];
  EXPECT_NE(lines[4].find(" " + std::to_string(s.run.request_results[0].result.requests) + " "),
            std::string::npos);
  EXPECT_EQ(lines[5].rfind("cart ", 0), 0u) << lines[5];
  EXPECT_EQ(lines[6].rfind("TOTAL ", 0), 0u) << lines[6];
  for (const std::string& line : lines) EXPECT_EQ(line.size(), lines[0].size()) << line;
  // The stage rows add up to the TOTAL's samples.
  EXPECT_NE(lines[6].find(" " + std::to_string(s.run.result.requests) + " "), std::string::npos);
  EXPECT_NE(lines[6].find("/sec"), std::string::npos);
}

// A scenario run: a row per step (login shared by both scenarios), a row per
// scenario as a Transaction Controller's, then the requests' TOTAL.
TEST(ReportJmeter, AScenarioRunHasARowPerStepAndPerScenario) {
  const std::vector<std::string> lines = lines_of(render(ReportFormat::jmeter, scenario_journey()));
  ASSERT_EQ(lines.size(), 1u + 4u + 3u + 1u);
  EXPECT_EQ(lines[1].rfind("login ", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find(" 600 "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" 1.67% "), std::string::npos) << lines[1];  // 10 extract of 600
  // 300 iterations, 15 failed, over 30 s.
  const std::regex buy(
      R"(scenario buy +300 +\d+ +2\d{3} +\d+ +\d+ +\d+ +2000 +\d+ +5\.00% +10\.0/sec +-)");
  EXPECT_TRUE(std::regex_match(lines[5], buy)) << lines[5];
  EXPECT_EQ(lines[7].rfind("scenario audit ", 0), 0u) << lines[7];
  EXPECT_NE(lines[7].find(" - "), std::string::npos) << lines[7];  // no duration, not 0
  EXPECT_EQ(lines[8].rfind("TOTAL ", 0), 0u) << lines[8];
  EXPECT_NE(lines[8].find(" 1797 "), std::string::npos) << lines[8];
  for (const std::string& line : lines) EXPECT_EQ(line.size(), lines[0].size()) << line;
}

TEST(ReportText, AScenarioRunShowsItsStepsScenariosAndErrorKinds) {
  const std::string text = render(ReportFormat::text, scenario_journey());
  EXPECT_EQ(line_starting(text, "Outcome"),
            "Outcome     1,782 ok, 15 errors (0.83%): 1 timeout, 10 extract, 4 check");
  EXPECT_NE(text.find("\nSteps (latency in ms)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nScenarios (iteration duration in ms)\n"), std::string::npos) << text;
  const std::regex buy(R"(  buy +300 +10\.0 +15 +5\.00% +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+)");
  EXPECT_TRUE(std::regex_match(line_starting(text, "  buy "), buy)) << text;
  const std::regex audit(R"(  audit +0 +0\.0 +0 +0\.00% +- +- +- +-)");
  EXPECT_TRUE(std::regex_match(line_starting(text, "  audit "), audit)) << text;
}

TEST(ReportAb, AScenarioRunAddsItsErrorKindsAndALinePerScenario) {
  const std::string ab = render(ReportFormat::ab, scenario_journey());
  EXPECT_EQ(line_starting(ab, "Extraction failures"), "Extraction failures:    10");
  EXPECT_EQ(line_starting(ab, "Check failures"), "Check failures:         4");
  const std::regex browse(
      R"(Scenario browse:        300 iterations, 0 failed; duration \(ms\) 50% 1\d{3}, 95% )"
      R"(1\d{3}, 99% 1\d{3}, 100% 1\d{3})");
  EXPECT_TRUE(std::regex_match(line_starting(ab, "Scenario browse"), browse)) << ab;
  EXPECT_EQ(line_starting(ab, "Scenario audit"), "Scenario audit:         0 iterations, 0 failed");
  // ab's own layout is unchanged by them: the percentage table still ends the requests' part.
  EXPECT_NE(ab.find(" (longest request)\n\nScenario buy:"), std::string::npos) << ab;
}

TEST(ReportJmeter, LabelsOpenModelStagesByRateAndPlainRunsWithTotalOnly) {
  const std::vector<std::string> open = lines_of(render(ReportFormat::jmeter, open_model()));
  ASSERT_EQ(open.size(), 4u);
  EXPECT_EQ(open[1].rfind("stage 0 (250/s)", 0), 0u) << open[1];
  EXPECT_EQ(open[2].rfind("stage 1 (750/s)", 0), 0u) << open[2];

  const std::vector<std::string> plain = lines_of(render(ReportFormat::jmeter, plain_closed()));
  ASSERT_EQ(plain.size(), 2u);
  // 1000 samples, 2 s: 500.0/sec; 850,000 bytes / 1024 / 2 s = 415.04 KB/sec; no errors.
  const std::regex total(
      R"(TOTAL +1000 +\d+ +\d+ +\d+ +\d+ +\d+ +\d+ +\d+ +0\.00% +500\.0/sec +415\.04)");
  EXPECT_TRUE(std::regex_match(plain[1], total)) << plain[1];
}

// ---------------------------------------------------------------------------
// text

TEST(ReportText, SaysZeroErrorsAndShowsNoTablesForAPlainRun) {
  const std::string text = render(ReportFormat::text, plain_closed());
  EXPECT_EQ(line_starting(text, "Outcome"), "Outcome     1,000 ok, 0 errors");
  EXPECT_EQ(line_starting(text, "Load"),
            "Load        closed model, 10 connections, 2 threads, keep-alive");
  EXPECT_EQ(line_starting(text, "Requests"), "Requests    1,000 (500.0/s)");
  EXPECT_EQ(line_starting(text, "Status"), "Status      200: 1,000");
  EXPECT_EQ(line_starting(text, "Received"),
            "Received    830.08 KiB (850,000 bytes) at 415.04 KiB/s, bodies 597.66 KiB");
  EXPECT_EQ(text.find("Warm-up"), std::string::npos);
  EXPECT_EQ(text.find("Stages"), std::string::npos);
  EXPECT_EQ(text.find("Requests by name"), std::string::npos);
  EXPECT_EQ(text.find("Rate "), std::string::npos);
  for (const char* row : {"total", "waiting", "connect"}) {
    EXPECT_NE(line_starting(text, row), "") << row;
  }
  const std::string header = line_starting(text, "Latency (ms)");
  for (const char* column : {"min", "mean", "stddev", "p50", "p90", "p95", "p99", "p99.9", "max"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column;
  }
}

TEST(ReportText, ListsOnlyTheErrorKindsThatHappenedAndTheBreakdownTables) {
  const std::string text = render(ReportFormat::text, staged_mixed());
  const std::string outcome = line_starting(text, "Outcome");
  EXPECT_NE(outcome.find(": 2 connect, 3 timeout, 4 read, 6 status, 6 length"), std::string::npos)
      << outcome;
  EXPECT_EQ(outcome.find("write"), std::string::npos);
  EXPECT_EQ(line_starting(text, "Warm-up"), "Warm-up     250 requests, not counted");
  EXPECT_NE(line_starting(text, "Status"), "");
  EXPECT_NE(line_starting(text, "Status").find("503: 6"), std::string::npos);
  EXPECT_NE(text.find("\nStages (latency in ms)\n"), std::string::npos);
  EXPECT_NE(text.find("\nRequests by name (latency in ms)\n"), std::string::npos);
  EXPECT_NE(line_starting(text, "  name"), "");
  EXPECT_NE(line_starting(text, "  home"), "");
  EXPECT_NE(line_starting(text, "  cart"), "");
  EXPECT_EQ(line_starting(text, "Load"),
            "Load        closed model, 3 stages of 10/20/30 connections, 2 threads, no keep-alive");
}

TEST(ReportText, ShowsTargetRateLateAndDroppedForTheOpenModel) {
  const std::string text = render(ReportFormat::text, open_model());
  EXPECT_EQ(line_starting(text, "Rate"),
            "Rate        target 500.0/s, achieved 499.8/s, 12 late, 19 dropped");
  // The drain after the planned end is not in the duration, and is shown.
  EXPECT_EQ(line_starting(text, "Duration"),
            "Duration    4.000 s, then 1.250 s draining the requests in flight (counted, not in "
            "the duration)");
  // Failures without a response took their own time, shown apart from the latency of responses.
  EXPECT_NE(line_starting(text, "failed").find(" 2000."), std::string::npos)
      << line_starting(text, "failed");
  EXPECT_NE(line_starting(text, "Outcome").find("19 dropped"), std::string::npos);
  EXPECT_EQ(line_starting(text, "TLS"), "TLS         TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256");
  EXPECT_NE(line_starting(text, "Load").find("open model, 2 stages of 250/750 requests/s"),
            std::string::npos);
}

TEST(ReportText, PrintsLargeByteCountsExactlyAndInBinaryUnits) {
  const std::string text = render(ReportFormat::text, seed000_large());
  EXPECT_EQ(line_starting(text, "Received"),
            "Received    5.80 GiB (6,224,713,000 bytes) at 10.50 MiB/s, bodies 5.80 GiB");
}

TEST(ReportText, HandlesRunsWithoutResponses) {
  const std::string empty = render(ReportFormat::text, empty_run());
  EXPECT_EQ(line_starting(empty, "Outcome"), "Outcome     0 ok, 0 errors");
  EXPECT_EQ(line_starting(empty, "Latency"), "Latency     no complete responses");
  EXPECT_EQ(line_starting(empty, "Requests"), "Requests    0 (0.0/s)");

  const std::string refused = render(ReportFormat::text, all_connect_errors());
  EXPECT_EQ(line_starting(refused, "Outcome"), "Outcome     0 ok, 37 errors (100.00%): 37 connect");
  EXPECT_EQ(line_starting(refused, "Status"), "Status      no complete responses");
  EXPECT_NE(line_starting(refused, "Partial"), "");
}

// ---------------------------------------------------------------------------
// Formatting helpers

TEST(ReportFormatting, GroupsDigitsOfAny64BitValue) {
  EXPECT_EQ(report::grouped(0), "0");
  EXPECT_EQ(report::grouped(999), "999");
  EXPECT_EQ(report::grouped(1000), "1,000");
  EXPECT_EQ(report::grouped(1234567), "1,234,567");
  EXPECT_EQ(report::grouped(std::numeric_limits<uint64_t>::max()), "18,446,744,073,709,551,615");
}

TEST(ReportFormatting, HumanBytesPicksTheUnitExactly) {
  EXPECT_EQ(report::human_bytes(0), "0 B");
  EXPECT_EQ(report::human_bytes(1023), "1023 B");
  EXPECT_EQ(report::human_bytes(1024), "1.00 KiB");
  EXPECT_EQ(report::human_bytes(1536), "1.50 KiB");
  EXPECT_EQ(report::human_bytes(1024 * 1024 - 1), "1024.00 KiB");  // rounds, unit stays
  EXPECT_EQ(report::human_bytes(1024 * 1024), "1.00 MiB");
  EXPECT_EQ(report::human_bytes(uint64_t{5} << 30), "5.00 GiB");
  EXPECT_EQ(report::human_bytes(uint64_t{3} << 40), "3.00 TiB");
  EXPECT_EQ(report::human_bytes(std::numeric_limits<uint64_t>::max()), "16.00 EiB");
}

TEST(ReportFormatting, NumbersNeverReadAsNanInfOrNegativeZero) {
  EXPECT_EQ(report::fixed(std::nan(""), 2), "-");
  EXPECT_EQ(report::fixed(std::numeric_limits<double>::infinity(), 2), "-");
  EXPECT_EQ(report::fixed(-0.0001, 3), "0.000");
  EXPECT_EQ(report::fixed(-1.5, 1), "-1.5");
  EXPECT_EQ(report::fixed(2.0 / 3.0, 3), "0.667");
  EXPECT_EQ(report::rounded_ms(2.5), "3");
  EXPECT_EQ(report::rounded_ms(2.499), "2");
  EXPECT_EQ(report::rounded_ms(std::nan("")), "-");
  EXPECT_EQ(report::compact_number(250.0), "250");
  EXPECT_EQ(report::compact_number(12.5), "12.5");
  EXPECT_EQ(report::compact_number(0.127), "0.13");
  EXPECT_EQ(report::compact_number(1.10), "1.1");
}

TEST(ReportFormatting, TableAlignsColumnsAndRejectsRaggedRows) {
  report::TextTable table({{"name", report::TextTable::Align::left}, {"count"}});
  table.add_row({"a", "1"});
  table.add_row({"longer", "12345"});
  EXPECT_THROW(table.add_row({"only one"}), std::invalid_argument);
  std::ostringstream out;
  table.write(out, "> ");
  EXPECT_EQ(out.str(),
            "> name    count\n"
            "> a           1\n"
            "> longer  12345\n");
}

// kTLS: the text and ab reports say how many connections' records the kernel
// carried, and say nothing of it where it carried none.
TEST(ReportTls, TextAndAbNameTheConnectionsWhoseRecordsTheKernelCarried) {
  Scenario s = plain_closed();
  s.run.result.tls = TlsCounts{4, 1, 4, 3};
  EXPECT_THAT(render(ReportFormat::text, s),
              ::testing::HasSubstr("4 handshakes, 1 resumed; records in the kernel (kTLS): "
                                   "4 sending, 3 receiving\n"));
  EXPECT_THAT(render(ReportFormat::ab, s),
              ::testing::ContainsRegex("\nKernel TLS \\(kTLS\\): +4 sending, 3 receiving\n"));
  s.run.result.tls = TlsCounts{4, 1, 0, 0};
  const std::string text = render(ReportFormat::text, s);
  EXPECT_THAT(text, ::testing::HasSubstr("4 handshakes, 1 resumed\n"));
  const std::string ab = render(ReportFormat::ab, s);
  EXPECT_THAT(ab, ::testing::ContainsRegex("\nTLS handshakes: +4 \\(1 resumed\\)\n"));
  for (const std::string& report : {text, ab}) {
    EXPECT_THAT(report, ::testing::Not(::testing::HasSubstr("kTLS"))) << report;
  }
}

}  // namespace
}  // namespace kubeload::loadgen
