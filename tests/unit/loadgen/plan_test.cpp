#include <algorithm>
#include <chrono>

#include <gtest/gtest.h>

#include "loadgen/cli/cli.hpp"
#include "loadgen/engine/plan.hpp"

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
  const CliOptions cli = parse_command_line(
      {"-n", "1001", "--warmup-requests", "50", "--stages", "1s:10,1s:21", "http://h/"});
  std::string error;
  const RunPlan plan = plan_from_spec(cli.spec, *parse_target("http://h/", error), 3);
  uint64_t requests = 0, warmup = 0, stage0 = 0, stage1 = 0;
  for (uint32_t i = 0; i < 3; ++i) {
    const RunPlan part = split_plan(plan, i, 3);
    requests += *part.total_request_budget;
    warmup += *part.phases[0].request_budget;
    stage0 += part.phases[1].connections;
    stage1 += part.phases[2].connections;
  }
  EXPECT_EQ(requests, 1001u);
  EXPECT_EQ(warmup, 50u);
  EXPECT_EQ(stage0, 10u);
  EXPECT_EQ(stage1, 21u);
}

TEST(Split, ProportionalSharesAddUpAndFollowTheWeights) {
  struct Case {
    uint64_t total;
    std::vector<uint64_t> weights;
    std::vector<uint64_t> shares;
  };
  for (const Case& c : std::vector<Case>{
           {1000, {4, 3, 3}, {400, 300, 300}},
           {1000, {1, 1, 0}, {500, 500, 0}},
           {7, {1, 1, 1}, {3, 2, 2}},
           {10, {0, 0}, {5, 5}},
           {5, {2, 1}, {3, 2}},
           {1, {1, 2}, {0, 1}},
           {18446744073709551615ull, {3, 1}, {13835058055282163711ull, 4611686018427387904ull}},
       }) {
    uint64_t sum = 0;
    for (uint32_t i = 0; i < c.weights.size(); ++i) {
      EXPECT_EQ(proportional_share(c.total, c.weights, i), c.shares[i])
          << c.total << " part " << i << " of " << testing::PrintToString(c.weights);
      sum += proportional_share(c.total, c.weights, i);
    }
    EXPECT_EQ(sum, c.total);
  }
}

TEST(Split, APodsRequestBudgetFollowsItsConnections) {
  // -n 1000 -c 10 over 3 pods: 4, 3 and 3 connections. An even split of the
  // requests (334/333/333) leaves the pods with fewer connections the
  // longest tail; with -c 2 the third pod has no connection at all and
  // could never send its share.
  std::string error;
  const Target target = *parse_target("http://h/", error);
  const RunPlan ten =
      plan_from_spec(parse_command_line({"-n", "1000", "-c", "10", "http://h/"}).spec, target, 4);
  EXPECT_EQ(*split_plan(ten, 0, 3).total_request_budget, 400u);
  EXPECT_EQ(*split_plan(ten, 1, 3).total_request_budget, 300u);
  EXPECT_EQ(*split_plan(ten, 2, 3).total_request_budget, 300u);
  const RunPlan two =
      plan_from_spec(parse_command_line({"-n", "1000", "-c", "2", "http://h/"}).spec, target, 4);
  EXPECT_EQ(*split_plan(two, 0, 3).total_request_budget, 500u);
  EXPECT_EQ(*split_plan(two, 2, 3).total_request_budget, 0u);
  EXPECT_EQ(split_plan(two, 2, 3).phases[0].connections, 0u);
  // Threads of one process share their budget: a thread's part keeps it whole.
  EXPECT_EQ(*split_plan_for_thread(ten, 1, 4).total_request_budget, 1000u);
  EXPECT_EQ(split_plan_for_thread(ten, 1, 4).phases[0].connections, 3u);
}

TEST(Split, BudgetBlocksAreSmall) {
  EXPECT_EQ(budget_block(1000, 8), 1u);
  EXPECT_EQ(budget_block(10, 1), 1u);
  EXPECT_EQ(budget_block(100'000'000, 2), 32u);
  EXPECT_EQ(budget_block(0, 0), 1u);
}

// Every arrival intended by every part (pods, then threads in each pod), as
// offsets from the phase start.
std::vector<std::chrono::nanoseconds> arrivals_of_all_parts(const RunPlan& plan, uint32_t pods,
                                                            uint32_t threads) {
  const Phase& phase = plan.phases.back();
  const uint64_t arrivals = arrivals_within(phase.duration, phase.rate);
  std::vector<std::chrono::nanoseconds> offsets;
  for (uint32_t pod = 0; pod < pods; ++pod) {
    const RunPlan pod_plan = split_plan(plan, pod, pods);
    for (uint32_t thread = 0; thread < threads; ++thread) {
      const RunPlan part = split_plan_for_thread(pod_plan, thread, threads);
      EXPECT_DOUBLE_EQ(part.rate_of_part(part.phases.back()), phase.rate / (pods * threads));
      for (uint64_t k = part.turns.offset; k < arrivals; k += part.turns.stride) {
        offsets.push_back(arrival_offset(k, phase.rate));
      }
    }
  }
  std::sort(offsets.begin(), offsets.end());
  return offsets;
}

TEST(Split, OpenModelPartsTakeTurnsInOneArrivalSequence) {
  // -r 10 -d 5s is 50 arrivals 100 ms apart, whether one thread sends them
  // or 3 pods of 8 threads: the parts interleave, they do not each follow
  // the whole schedule (8 threads at 1.25/s for 5 s would be 56 arrivals, in
  // bursts of 8).
  std::string error;
  const RunPlan plan =
      plan_from_spec(parse_command_line({"-r", "10", "-d", "5s", "http://h/"}).spec,
                     *parse_target("http://h/", error), 8);
  for (const auto& [pods, threads] :
       std::vector<std::pair<uint32_t, uint32_t>>{{1, 1}, {1, 8}, {3, 8}, {2, 3}}) {
    const auto offsets = arrivals_of_all_parts(plan, pods, threads);
    ASSERT_EQ(offsets.size(), 50u) << pods << " pods of " << threads << " threads";
    for (size_t k = 0; k < offsets.size(); ++k) {
      EXPECT_EQ(offsets[k], std::chrono::milliseconds(100 * k)) << "arrival " << k;
    }
  }
  EXPECT_EQ(arrivals_within(std::chrono::seconds(5), 10), 50u);
  EXPECT_EQ(arrivals_within(std::chrono::milliseconds(250), 20), 5u);
  EXPECT_EQ(arrivals_within(std::chrono::milliseconds(251), 20), 6u);
  EXPECT_EQ(arrivals_within(std::chrono::seconds(1), 3), 3u);
  // The budget of an open-model run indexes the one sequence: no part divides it.
  const RunPlan counted =
      plan_from_spec(parse_command_line({"-r", "10", "-n", "7", "http://h/"}).spec,
                     *parse_target("http://h/", error), 8);
  EXPECT_EQ(*split_plan(counted, 1, 2).total_request_budget, 7u);
}

TEST(Split, ThreadsFollowTheLargestStageAndEachStageItsOwnConnections) {
  std::string error;
  const RunPlan plan =
      plan_from_spec(parse_command_line({"--stages", "10s:1,10s:100,10s:1000", "http://h/"}).spec,
                     *parse_target("http://h/", error), 8);
  EXPECT_EQ(plan.usable_threads(), 8u);
  uint64_t first_stage = 0;
  for (uint32_t i = 0; i < 8; ++i) {
    const RunPlan part = split_plan_for_thread(plan, i, 8);
    first_stage += part.phases[0].connections;
    EXPECT_EQ(part.phases[2].connections, 125u);
  }
  EXPECT_EQ(first_stage, 1u);
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
  // The open model's threads each need a connection of their own.
  const CliOptions capped =
      parse_command_line({"-r", "100", "--max-connections", "2", "http://h/"});
  EXPECT_EQ(plan_from_spec(capped.spec, *parse_target("http://h/", error), 4).usable_threads(), 2u);
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
      // Options that would be silently ignored are errors naming the value.
      {{"-d", "5s", "--stages", "1s:5,1s:10", "http://h/"}, "-d 5s: not with --stages"},
      {{"-c", "7", "--stages", "1s:5", "http://h/"}, "-c 7: not with --stages"},
      {{"-r", "10", "--max-connections", "2", "-t", "4", "http://h/"},
       "--max-connections 2: below --threads 4"},
      // -r beside --stages: each open-model stage gives its own rate.
      {{"-r", "999", "--stages", "1s:10/s", "http://h/"}, "-r 999: not with --stages"},
      {{"-r", "200", "--stages", "1s:100,1s:200", "http://h/"}, "-r 200: not with --stages"},
      {{"--stages", "1s:100/s,1s:20", "http://h/"}, "\"1s:20\""},
      {{"--stages", "1s:0/s", "http://h/"}, "\"0\""},
      {{"--max-connections", "5", "--stages", "1s:10", "http://h/"},
       "--max-connections 5: only in the open model"},
      // An explicit thread count that the connections could never use.
      {{"-t", "8", "-c", "2", "http://h/"}, "-t 8: above the 2 connections"},
      {{"-t", "16", "http://h/"}, "-t 16: above the 10 connections"},
      {{"-t", "4", "--stages", "1s:1,1s:3", "http://h/"}, "-t 4: above the 3 connections"},
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

TEST(Cli, OpenModelStagesGiveTheirOwnRates) {
  const CliOptions cli =
      parse_command_line({"--max-connections", "4", "--warmup", "1s", "-n", "500", "--stages",
                          "1s:100/s,2s:250.5/s", "http://h/"});
  const LoadSpec& load = cli.spec.load;
  EXPECT_FALSE(load.rate);
  ASSERT_EQ(load.stages.size(), 2u);
  EXPECT_EQ(load.stages[0].rate, 100.0);
  EXPECT_EQ(load.stages[1].rate, 250.5);
  EXPECT_FALSE(load.stages[0].connections);
  EXPECT_EQ(load.max_connections, 4u);
  EXPECT_EQ(load.requests, 500u);
  std::string error;
  const RunPlan plan = plan_from_spec(cli.spec, *parse_target("http://h/", error), 2);
  EXPECT_TRUE(plan.open_model);
  EXPECT_EQ(plan.max_connections, 4u);
  ASSERT_EQ(plan.phases.size(), 3u);  // warm-up at the first stage's rate, then the stages
  EXPECT_TRUE(plan.phases[0].warmup);
  EXPECT_EQ(plan.phases[0].rate, 100.0);
  EXPECT_EQ(plan.phases[2].rate, 250.5);
}

TEST(Cli, ThreadsUpToTheConnectionsAreAccepted) {
  EXPECT_EQ(parse_command_line({"-t", "3", "-c", "3", "http://h/"}).threads, 3u);
  EXPECT_EQ(parse_command_line({"-t", "3", "--stages", "1s:1,1s:3", "http://h/"}).threads, 3u);
  EXPECT_EQ(parse_command_line({"-t", "10", "http://h/"}).threads, 10u);
  EXPECT_EQ(parse_command_line({"-t", "8", "-r", "10", "http://h/"}).threads, 8u);
}

TEST(Cli, AManifestsLoadIsCheckedAgainstTheThreadsByItsFieldNames) {
  auto message = [](const LoadSpec& load, uint32_t threads) -> std::string {
    try {
      check_threads_usable(load, threads, LoadSource::manifest);
      return "";
    } catch (const UsageError& e) {
      return e.what();
    }
  };
  LoadSpec closed;
  closed.connections = 2;
  EXPECT_EQ(message(closed, 4),
            "-t 4: above the 2 connections of spec.load.connections (each thread needs a "
            "connection of its own)");
  EXPECT_EQ(message(closed, 2), "");
  LoadSpec stages;
  stages.stages = {StageSpec{std::chrono::seconds(1), 1, std::nullopt},
                   StageSpec{std::chrono::seconds(1), 3, std::nullopt}};
  EXPECT_NE(message(stages, 4).find("-t 4: above the 3 connections of the largest of "
                                    "spec.load.stages"),
            std::string::npos);
  LoadSpec open;
  open.rate = 10;
  open.max_connections = 2;
  EXPECT_NE(message(open, 4).find("spec.load.maxConnections 2: below --threads 4"),
            std::string::npos);
  EXPECT_EQ(message(open, 2), "");
  EXPECT_NO_THROW(check_threads_usable(closed, std::nullopt, LoadSource::manifest));
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
