// HTTP/2 from the user's side: the protocol field and flags, the plan's
// lanes and header fields, the new error kinds and how reports name the
// protocol. The engine itself is checked against nginx and the fault server
// (tests/integration/run.py).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "kubeload/result.hpp"
#include "kubeload/spec.hpp"
#include "kubeload/spec_yaml.hpp"
#include "loadgen/cli/cli.hpp"
#include "loadgen/engine/plan.hpp"
#include "reports/report.hpp"

namespace kubeload::loadgen {
namespace {

ParsedLoadTest parse_with_target(const std::string& target,
                                 const std::string& load = "{duration: 1s}") {
  return parse_loadtest(
      "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: t, labels: "
      "{kubeload.dev/test: t}}\nspec:\n  target: " +
      target + "\n  load: " + load + "\n");
}

std::vector<std::string> messages(const ParsedLoadTest& parsed) {
  std::vector<std::string> out;
  for (const FieldError& error : parsed.errors) out.push_back(error.to_string());
  return out;
}

TEST(Http2Spec, ReadsTheProtocolAndStreams) {
  const auto h2 = parse_with_target("{url: 'https://web.test/', protocol: http2}",
                                    "{duration: 1s, maxStreams: 50}");
  ASSERT_TRUE(h2.ok()) << messages(h2).front();
  EXPECT_EQ(h2.spec.protocol, Protocol::http2);
  EXPECT_EQ(h2.spec.load.max_streams, 50u);
  const auto h2c = parse_with_target("{url: 'http://web.test/', protocol: h2c}");
  ASSERT_TRUE(h2c.ok());
  EXPECT_EQ(h2c.spec.protocol, Protocol::h2c);
  EXPECT_EQ(h2c.spec.load.max_streams, 1u);
  const auto plain = parse_with_target("{url: 'http://web.test/'}");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain.spec.protocol, Protocol::http1);
  const auto service =
      parse_with_target("{service: {name: web, port: 443, scheme: https}, protocol: http2}");
  EXPECT_TRUE(service.ok()) << messages(service).front();
}

TEST(Http2Spec, NamesEachBadValue) {
  struct Row {
    std::string target, load, error;
  };
  const std::vector<Row> rows = {
      {"{url: 'https://web.test/', protocol: http3}", "{duration: 1s}",
       "spec.target.protocol: must be one of http1, http2, h2c, got \"http3\""},
      {"{url: 'https://web.test/', protocol: HTTP2}", "{duration: 1s}",
       "spec.target.protocol: must be one of http1, http2, h2c, got \"HTTP2\""},
      {"{url: 'http://web.test/', protocol: http2}", "{duration: 1s}",
       "spec.target.protocol: http2 needs an https target (ALPN h2); use h2c for cleartext "
       "HTTP/2"},
      {"{url: 'https://web.test/', protocol: h2c}", "{duration: 1s}",
       "spec.target.protocol: h2c is cleartext HTTP/2; use http2 for an https target"},
      {"{url: 'http://web.test/'}", "{duration: 1s, maxStreams: 8}",
       "spec.load.maxStreams: only with spec.target.protocol http2 or h2c, got 8 with http1"},
      {"{url: 'http://web.test/', protocol: h2c}", "{duration: 1s, maxStreams: 0}",
       "spec.load.maxStreams: must be between 1 and 1000, got 0"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(messages(parse_with_target(row.target, row.load)),
              std::vector<std::string>{row.error})
        << row.target << " " << row.load;
  }
}

TEST(Http2Cli, FlagsSetTheProtocolAndStreams) {
  const CliOptions h2 = parse_command_line(
      {"--h2", "--max-streams", "10", "--allow-http1", "-n", "5", "https://127.0.0.1:8443/"});
  EXPECT_EQ(h2.spec.protocol, Protocol::http2);
  EXPECT_EQ(h2.spec.load.max_streams, 10u);
  EXPECT_TRUE(h2.allow_http1);
  const CliOptions h2c = parse_command_line({"--h2c", "http://127.0.0.1:8080/"});
  EXPECT_EQ(h2c.spec.protocol, Protocol::h2c);
  EXPECT_EQ(h2c.spec.load.max_streams, 1u);
  // -m stays the method.
  EXPECT_EQ(parse_command_line({"--h2c", "-m", "HEAD", "http://h/"}).spec.requests[0].method,
            "HEAD");
}

TEST(Http2Cli, RejectsCombinationsNamingThem) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--h2", "http://h/"}, "--h2: HTTP/2 over TLS needs an https:// URL, got http://h/"},
      {{"--h2c", "https://h/"}, "--h2c: cleartext HTTP/2 needs an http:// URL, got https://h/"},
      {{"--h2", "--h2c", "https://h/"}, "--h2 and --h2c: give one of them"},
      {{"--max-streams", "4", "http://h/"}, "--max-streams 4: only with --h2 or --h2c"},
      {{"--h2c", "--max-streams", "0", "http://h/"}, "--max-streams"},
      {{"--h2c", "--max-streams", "5000", "http://h/"}, "at most 1000 streams, got 5000"},
      {{"--h2c", "--allow-http1", "http://h/"}, "--allow-http1: only with --h2"},
      {{"--h2=yes", "https://h/"}, "--h2: takes no value"},
  };
  for (const auto& [args, needle] : cases) {
    try {
      parse_command_line(args);
      ADD_FAILURE() << "accepted " << needle;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

TEST(Http2Plan, LanesAreStreamsAndFieldsAreBuiltOnce) {
  std::string error;
  const auto target = parse_target("https://example.test:8443/a?b=1", error);
  ASSERT_TRUE(target) << error;
  CliOptions cli = parse_command_line({"--h2", "--max-streams", "8", "-c", "3", "-H", "X-Probe: 1",
                                       "-H", "Connection: close", "-m", "POST", "--body", "hello",
                                       "https://example.test:8443/a?b=1"});
  const RunPlan plan = plan_from_spec(cli.spec, *target, 1);
  EXPECT_TRUE(plan.http2());
  EXPECT_EQ(plan.lanes_per_connection(), 8u);
  const std::vector<std::pair<std::string, std::string>> fields = {
      {":method", "POST"},
      {":scheme", "https"},
      {":authority", "example.test:8443"},
      {":path", "/a?b=1"},
      {"user-agent", "kubeload-loadgen/0.1"},
      {"accept", "*/*"},
      {"x-probe", "1"},
      {"content-length", "5"}};
  EXPECT_EQ(plan.requests.at(0).h2_fields, fields);
  EXPECT_EQ(plan.requests.at(0).body, "hello");

  cli = parse_command_line({"-c", "3", "http://h/"});
  EXPECT_EQ(plan_from_spec(cli.spec, *target, 1).lanes_per_connection(), 1u);
}

TEST(Http2Result, ResetsAndGoawaysAreErrorKindsOfTheirOwn) {
  Result r;
  r.requests = 3;
  r.errors.rst_stream = 2;
  r.errors.goaway = 1;
  EXPECT_EQ(r.errors.total(), 3u);
  nlohmann::json j;
  to_json(j, r);
  EXPECT_EQ(j.at("errors").at("rstStream"), 2);
  EXPECT_EQ(j.at("errors").at("goaway"), 1);
  EXPECT_EQ(result_from_json(j).errors, r.errors);
  Result merged = r;
  merged.merge(r);
  EXPECT_EQ(merged.errors.rst_stream, 4u);
  EXPECT_EQ(merged.errors.goaway, 2u);
}

TEST(Http2Report, EveryReportNamesTheProtocol) {
  RunInfo info;
  info.url = "https://127.0.0.1:8443/";
  info.scheme = "https";
  info.host = "127.0.0.1";
  info.port = 8443;
  info.path = "/";
  info.protocol = "http2";
  info.max_streams = 8;
  RunResult run;
  run.result.requests = 10;
  run.result.errors.rst_stream = 3;
  run.result.errors.goaway = 2;
  run.request_results.push_back(NamedResult{"default", run.result});
  std::ostringstream text, ab, jmeter, json;
  write_report(text, ReportFormat::text, info, run);
  write_report(ab, ReportFormat::ab, info, run);
  write_report(jmeter, ReportFormat::jmeter, info, run);
  write_report(json, ReportFormat::json, info, run);
  EXPECT_NE(text.str().find("HTTP/2 over TLS (h2), 8 streams per connection"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("3 rstStream, 2 goaway"), std::string::npos) << text.str();
  EXPECT_NE(ab.str().find("HTTP/2 over TLS (h2), 8 streams per connection"), std::string::npos);
  EXPECT_NE(ab.str().find("Stream resets:          3"), std::string::npos) << ab.str();
  EXPECT_EQ(nlohmann::json::parse(json.str()).at("protocol"), "http2");
  EXPECT_EQ(jmeter.str().rfind("Protocol: HTTP/2 over TLS (h2), 8 streams per connection\n", 0), 0u)
      << jmeter.str();

  info.protocol = "h2c";
  info.max_streams = 1;
  std::ostringstream cleartext;
  write_report(cleartext, ReportFormat::jmeter, info, run);
  EXPECT_EQ(cleartext.str().rfind("Protocol: HTTP/2 cleartext (h2c), 1 stream per connection\n", 0),
            0u)
      << cleartext.str();
  // The table follows, as JMeter's Aggregate Report has it.
  EXPECT_NE(cleartext.str().find("\nLabel "), std::string::npos) << cleartext.str();
}

}  // namespace
}  // namespace kubeload::loadgen
