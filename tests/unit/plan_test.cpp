#include <gtest/gtest.h>

#include "loadgen/cli.hpp"
#include "loadgen/plan.hpp"

namespace kubeload::loadgen {
namespace {

TEST(Target, ParsesUrls) {
  std::string error;
  auto t = parse_target("http://127.0.0.1:8080/a/b?x=1#frag", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->host, "127.0.0.1");
  EXPECT_EQ(t->port, 8080);
  EXPECT_EQ(t->path, "/a/b?x=1");
  EXPECT_EQ(t->host_header(), "127.0.0.1:8080");
  t = parse_target("HTTPS://example.test", error);
  ASSERT_TRUE(t) << error;
  EXPECT_TRUE(t->tls());
  EXPECT_EQ(t->port, 443);
  EXPECT_EQ(t->path, "/");
  EXPECT_EQ(t->host_header(), "example.test");
  t = parse_target("http://[::1]:81/", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->host, "::1");
  EXPECT_EQ(t->host_header(), "[::1]:81");
}

TEST(Target, RejectsBadUrlsNamingThem) {
  for (const std::string bad : {"ftp://x/", "127.0.0.1:80", "http://:80/", "http://h:0/",
                                "http://h:99999/", "http://h:8x/", "http://u@h/"}) {
    std::string error;
    EXPECT_FALSE(parse_target(bad, error)) << bad;
    EXPECT_FALSE(error.empty());
  }
  std::string error;
  parse_target("http://h:99999/", error);
  EXPECT_NE(error.find("99999"), std::string::npos) << error;
}

TEST(Request, WireFormIsBuiltOnce) {
  std::string error;
  const Target t = *parse_target("http://example.test:8080/p", error);
  const RequestTemplate r =
      make_request(t, "cart", "POST", "/api", {{"Accept", "application/json"}}, "{}", false);
  EXPECT_EQ(r.wire,
            "POST /api HTTP/1.1\r\nHost: example.test:8080\r\nUser-Agent: kubeload-loadgen/0.1\r\n"
            "Connection: close\r\nAccept: application/json\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_TRUE(r.is_success_status(302));
  EXPECT_FALSE(r.is_success_status(404));
  const RequestTemplate head = make_request(t, "h", "HEAD", "", {}, "", true);
  EXPECT_TRUE(head.head);
  EXPECT_EQ(head.wire.rfind("HEAD /p HTTP/1.1\r\n", 0), 0u);
}

TEST(Split, SharesDifferByAtMostOneAndAddUp) {
  for (uint64_t total : {0ull, 1ull, 7ull, 1003ull, 18446744073709551615ull}) {
    for (uint32_t parts : {1u, 2u, 3u, 7u, 64u}) {
      uint64_t sum = 0, low = UINT64_MAX, high = 0;
      for (uint32_t i = 0; i < parts; ++i) {
        const uint64_t s = share_of(total, i, parts);
        sum += s;
        low = std::min(low, s);
        high = std::max(high, s);
      }
      EXPECT_EQ(sum, total);
      EXPECT_LE(high - low, 1u);
    }
  }
}

TEST(Split, PlanSplitKeepsTotals) {
  const CliOptions cli =
      parse_command_line({"-c", "10", "-n", "1001", "--stages", "1s:10,1s:21", "http://h/"});
  std::string error;
  const RunPlan plan = plan_from_spec(cli.spec, *parse_target("http://h/", error), 3);
  uint64_t requests = 0, stage0 = 0, stage1 = 0;
  for (uint32_t i = 0; i < plan.threads; ++i) {
    const RunPlan part = split_plan(plan, i, plan.threads);
    requests += *part.total_request_budget;
    stage0 += part.phases[0].connections;
    stage1 += part.phases[1].connections;
  }
  EXPECT_EQ(requests, 1001u);
  EXPECT_EQ(stage0, 10u);
  EXPECT_EQ(stage1, 21u);
}

TEST(Split, AShareNeverRunsMoreThreadsThanItHasConnections) {
  // 2 connections over 2 pods of 4 cores: each pod's share has 1 connection.
  const CliOptions cli = parse_command_line({"-c", "2", "-n", "400", "http://h/"});
  std::string error;
  const RunPlan whole = plan_from_spec(cli.spec, *parse_target("http://h/", error), 4);
  EXPECT_EQ(whole.threads, 2u);
  RunPlan share = split_plan(whole, 1, 2);
  share.threads = 4;
  EXPECT_EQ(share.usable_threads(), 1u);
  const CliOptions open = parse_command_line({"-r", "100", "http://h/"});
  EXPECT_EQ(plan_from_spec(open.spec, *parse_target("http://h/", error), 4).usable_threads(), 4u);
}

TEST(Plan, WarmupComesFirstAndUsesTheFirstStageLoad) {
  const CliOptions cli =
      parse_command_line({"-r", "100", "--warmup", "2s", "-d", "5s", "http://h/"});
  std::string error;
  const RunPlan plan = plan_from_spec(cli.spec, *parse_target("http://h/", error), 2);
  ASSERT_EQ(plan.phases.size(), 2u);
  EXPECT_TRUE(plan.phases[0].warmup);
  EXPECT_EQ(plan.phases[0].duration, std::chrono::seconds(2));
  EXPECT_DOUBLE_EQ(plan.phases[0].rate, 100);
  EXPECT_TRUE(plan.open_model);
  EXPECT_EQ(plan.phases[1].duration, std::chrono::seconds(5));
  EXPECT_EQ(plan.stage_count(), 1);
}

TEST(Cli, DefaultsToTenSecondsAndTenConnections) {
  const CliOptions cli = parse_command_line({"http://h/"});
  std::string error;
  const RunPlan plan = plan_from_spec(cli.spec, *parse_target("http://h/", error), 4);
  ASSERT_EQ(plan.phases.size(), 1u);
  EXPECT_EQ(plan.phases[0].duration, std::chrono::seconds(10));
  EXPECT_EQ(plan.phases[0].connections, 10u);
  EXPECT_TRUE(plan.keep_alive);
}

TEST(Cli, BadValuesAreNamed) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"-c", "0", "http://h/"}, "\"0\""},
      {{"-d", "10x", "http://h/"}, "\"10x\""},
      {{"-r", "-5", "http://h/"}, "\"-5\""},
      // beyond what 64-bit nanosecond arithmetic on the run's clock can hold
      {{"-d", "2562047h", "http://h/"}, "-d: must be at most 8760h, got \"2562047h\""},
      {{"--warmup", "9000h", "-d", "1s", "http://h/"}, "--warmup: must be at most 8760h"},
      {{"-r", "2e9", "http://h/"}, "\"2e9\""},
      {{"--format", "xml", "http://h/"}, "\"xml\""},
      {{"--stages", "10s", "http://h/"}, "\"10s\""},
      {{"--expect-status", "700", "http://h/"}, "\"700\""},
      {{"-H", "NoColon", "http://h/"}, "\"NoColon\""},
      {{"--bogus", "http://h/"}, "--bogus"},
      {{"-c"}, "-c: missing value"},
      {{"-c", "5", "-r", "10", "http://h/"}, "exclude"},
      {{}, "no URL"},
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

TEST(Cli, ShortOptionsTakeAttachedValues) {
  const CliOptions cli = parse_command_line({"-c50", "-n", "100", "--format=ab", "-HX-Test: 1",
                                             "--expect-status", "2xx,404", "http://h/"});
  EXPECT_EQ(cli.spec.load.connections, 50u);
  EXPECT_EQ(cli.spec.load.requests, 100u);
  EXPECT_EQ(cli.format, ReportFormat::ab);
  ASSERT_EQ(cli.spec.requests.size(), 1u);
  EXPECT_EQ(cli.spec.requests[0].headers.at(0).first, "X-Test");
  EXPECT_EQ(cli.spec.requests[0].expect.status.size(), 101u);
}

}  // namespace
}  // namespace kubeload::loadgen

namespace kubeload::loadgen {
namespace {

TEST(Cli, RunTakesAManifestAndOnlyReportOptions) {
  const CliOptions cli = parse_command_line(
      {"run", "x.yaml", "--format", "jmeter", "--target", "http://127.0.0.1:1/", "-t", "2"});
  EXPECT_EQ(cli.mode, CliOptions::Mode::run);
  EXPECT_EQ(cli.manifest_path, "x.yaml");
  EXPECT_EQ(cli.target_override, "http://127.0.0.1:1/");
  EXPECT_EQ(cli.threads, 2u);
  try {
    parse_command_line({"run", "x.yaml", "-c", "10"});
    ADD_FAILURE() << "accepted -c with run";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("-c: not with loadgen run"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kubeload::loadgen
