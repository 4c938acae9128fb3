// Whether other runs loaded a run's target while it ran (issue 29): the
// addresses a run records for each way a spec names its target, which
// other runs meet its window and addresses (the window's edges, itself, a
// run still going, another Service or namespace in front of the same pods),
// and the status and condition plan() writes from that, decided once.

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/spec.hpp"
#include "operator/shared_target.hpp"
#include "operator/target_destinations.hpp"

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;
using namespace std::chrono_literals;

LoadTestSpec spec_of(const std::string& target) {
  const json lt = {{"apiVersion", "kubeload.dev/v1alpha1"},
                   {"kind", "LoadTest"},
                   {"metadata", {{"name", "checkout"}, {"namespace", "shop"}}},
                   {"spec", {{"load", {{"duration", "1m"}}}, {"target", json::parse(target)}}}};
  const ParsedLoadTest parsed = parse_loadtest(lt.dump());
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.errors.front().to_string());
  return parsed.spec;
}

// A Service `ns`/`name` as observe() reads it: `cluster_ip` in front of `endpoints`.
TargetServiceView service(const std::string& ns, const std::string& name,
                          const std::string& cluster_ip,
                          const std::vector<std::string>& endpoints) {
  json slice_endpoints = json::array();
  for (const std::string& address : endpoints)
    slice_endpoints.push_back({{"addresses", {address}}});
  const json slices = {
      {"items",
       {{{"metadata",
          {{"labels", {{"endpointslice.kubernetes.io/managed-by", kEndpointSliceController}}}}},
         {"endpoints", slice_endpoints},
         {"ports", {{{"port", 80}}}}}}}};
  const json object = {{"spec", {{"clusterIP", cluster_ip}, {"selector", {{"app", "nginx"}}}}}};
  return target_service_view({ClusterHost::Kind::Service, ns, name, true}, object, slices);
}

using Addresses = std::vector<std::string>;

TEST(SharedTarget, AddressesForEachWayASpecNamesItsTarget) {
  const TargetServiceView nginx = service("shop", "nginx", "10.96.0.10", {"10.244.0.5"});
  const struct {
    const char* name;
    std::string target;
    std::optional<TargetServiceView> service;
    Addresses expected;
  } rows[] = {
      {"a Service: its cluster IP, endpoints and name",
       R"({"service": {"name": "nginx"}})",
       nginx,
       {"10.244.0.5", "10.96.0.10", "nginx.shop.svc"}},
      {"the Service's cluster DNS name in a url: the same",
       R"({"url": "http://nginx.shop.svc.cluster.local/"})",
       nginx,
       {"10.244.0.5", "10.96.0.10", "nginx.shop.svc"}},
      {"a Service not read (forbidden): its name",
       R"({"service": {"name": "nginx", "namespace": "web"}})",
       std::nullopt,
       {"nginx.web.svc"}},
      {"a pod IP", R"({"url": "http://10.244.0.5:8080/"})", std::nullopt, {"10.244.0.5"}},
      {"a pod by its DNS name: its address",
       R"({"url": "http://10-244-0-5.shop.pod.cluster.local/"})",
       std::nullopt,
       {"10.244.0.5"}},
      {"an IPv6 literal, as one spelling",
       R"({"url": "http://[FD00:0:0::5]/"})",
       std::nullopt,
       {"fd00::5"}},
      {"a host outside the cluster: its name",
       R"({"url": "https://API.Example.com./v1"})",
       std::nullopt,
       {"api.example.com"}},
      {"a short name that is no Service: the name the worker resolves",
       R"({"url": "http://backend/"})",
       std::nullopt,
       {"backend"}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(target_addresses(spec_of(row.target), row.service, "shop", "cluster.local"),
              row.expected);
  }
}

TEST(SharedTarget, AddressesAreBounded) {
  Addresses endpoints;
  for (int i = 0; i < 300; ++i) {
    endpoints.push_back("10.244." + std::to_string(i / 200) + "." + std::to_string(i % 200));
  }
  const Addresses recorded =
      target_addresses(spec_of(R"({"service": {"name": "nginx"}})"),
                       service("shop", "nginx", "10.96.0.10", endpoints), "shop", "cluster.local");
  EXPECT_EQ(recorded.size(), kMaxTargetAddresses);
  EXPECT_TRUE(std::is_sorted(recorded.begin(), recorded.end()));
}

const Timestamp kStart = Timestamp{} + std::chrono::hours(24 * 365 * 56);
const Timestamp kEnd = kStart + 60s;

OtherRun other(const std::string& ns, const std::string& name, std::optional<Timestamp> start,
               std::optional<Timestamp> completion, Addresses addresses,
               const std::string& uid = "") {
  return {ns, name, uid.empty() ? "uid-" + name : uid, start, completion, std::move(addresses)};
}

TEST(SharedTarget, WhichOtherRunsMetTheWindowAndTheAddresses) {
  // This run: a Service "nginx" in front of 10.244.0.5 (its own cluster IP).
  const Addresses ours = {"10.244.0.5", "10.96.0.10", "nginx.shop.svc"};
  const struct {
    const char* name;
    OtherRun other;
    bool shared;
  } rows[] = {
      {"another Service selecting the same pod",
       other("shop", "b", kStart + 5s, kEnd - 5s, {"10.244.0.5", "10.96.0.99", "web.shop.svc"}),
       true},
      {"another namespace's Service in front of it",
       other("team-b", "c", kStart, kEnd, {"10.244.0.5", "10.96.1.1", "front.team-b.svc"}), true},
      {"a url of the pod's IP", other("shop", "d", kStart, kEnd, {"10.244.0.5"}), true},
      {"a url of the Service's cluster IP", other("shop", "e", kStart, kEnd, {"10.96.0.10"}), true},
      {"the same Service, its endpoints not read",
       other("shop", "f", kStart, kEnd, {"nginx.shop.svc"}), true},
      {"other pods", other("shop", "g", kStart, kEnd, {"10.244.0.6", "10.96.0.11"}), false},
      {"still running, started during the window",
       other("shop", "h", kEnd - 1s, std::nullopt, {"10.244.0.5"}), true},
      {"still running, started before it", other("shop", "i", kStart - 1h, std::nullopt, ours),
       true},
      {"not started yet", other("shop", "j", std::nullopt, std::nullopt, ours), false},
      {"started as this one ended (edge)", other("shop", "k", kEnd, kEnd + 60s, ours), true},
      {"ended as this one started (edge)", other("shop", "l", kStart - 60s, kStart, ours), true},
      {"started after it ended", other("shop", "m", kEnd + 1s, kEnd + 60s, ours), false},
      {"ended before it started", other("shop", "n", kStart - 60s, kStart - 1s, ours), false},
      {"itself (its uid), whatever its name",
       other("shop", "renamed", kStart, kEnd, ours, "uid-self"), false},
      {"no addresses recorded (an older operator's run)", other("shop", "o", kStart, kEnd, {}),
       false},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const auto shared = shared_runs("uid-self", kStart, kEnd, ours, {row.other});
    if (row.shared) {
      ASSERT_EQ(shared.size(), 1u);
      EXPECT_EQ(shared[0], (api::SharedRun{row.other.namespace_, row.other.name}));
    } else {
      EXPECT_TRUE(shared.empty());
    }
  }
}

TEST(SharedTarget, EachRunOnceInOrder) {
  const Addresses ours = {"10.244.0.5"};
  const auto shared =
      shared_runs("self", kStart, kEnd, ours,
                  {other("shop", "z", kStart, kEnd, ours), other("alpha", "a", kStart, kEnd, ours),
                   other("shop", "z", kStart, kEnd, ours, "uid-z2")});
  EXPECT_EQ(shared, (std::vector<api::SharedRun>{{"alpha", "a"}, {"shop", "z"}}));
}

TEST(SharedTarget, OtherRunReadFromTheCachedObject) {
  const json cached = {{"metadata", {{"namespace", "shop"}, {"name", "b"}, {"uid", "u-b"}}},
                       {"status",
                        {{"phase", "Running"},
                         {"startTime", "2026-12-01T10:00:00Z"},
                         {"target", {{"addresses", {"10.244.0.5", 7}}}}}}};
  const OtherRun run = other_run_view(cached);
  EXPECT_EQ(run.namespace_, "shop");
  EXPECT_EQ(run.name, "b");
  EXPECT_EQ(run.uid, "u-b");
  EXPECT_EQ(run.start, parse_time("2026-12-01T10:00:00Z"));
  EXPECT_EQ(run.completion, std::nullopt);
  EXPECT_EQ(run.addresses, Addresses{"10.244.0.5"});
  EXPECT_EQ(other_run_view(json::object()), OtherRun{});
}

// ---- the step of plan() -------------------------------------------------------------

api::LoadTestStatus final_status(const Addresses& addresses) {
  api::LoadTestStatus status;
  status.observed_generation = 1;
  status.phase = api::Phase::Succeeded;
  status.verdict = api::Verdict::Pass;
  status.start_time = kStart;
  status.completion_time = kEnd;
  status.target.emplace();
  status.target->addresses = addresses;
  return status;
}

const api::Condition* shared_condition(const api::LoadTestStatus& status) {
  return api::find_condition(status.conditions, api::ConditionType::TargetShared);
}

TEST(SharedTarget, AddressesRecordedWhenTheWorkersAreCreatedAndKept) {
  api::LoadTestStatus current;  // Pending, nothing recorded
  api::LoadTestStatus status;
  EXPECT_FALSE(
      plan_shared_target(current, status, "self", Addresses{"10.244.0.5"}, std::nullopt, kStart));
  ASSERT_TRUE(status.target);
  EXPECT_EQ(status.target->addresses, Addresses{"10.244.0.5"});
  EXPECT_FALSE(status.target->measured());
  EXPECT_EQ(json(status)["target"], (json{{"addresses", {"10.244.0.5"}}}));
  EXPECT_EQ(shared_condition(status), nullptr);  // running: nothing decided

  // Later passes keep them.
  api::LoadTestStatus next;
  EXPECT_FALSE(plan_shared_target(status, next, "self", std::nullopt, std::nullopt, kStart + 1s));
  EXPECT_EQ(next.target, status.target);

  // Nothing recorded (a spec without a target, a run of an older operator): no status.target.
  api::LoadTestStatus none;
  plan_shared_target(api::LoadTestStatus{}, none, "self", std::nullopt, std::nullopt, kStart);
  EXPECT_FALSE(none.target);
}

TEST(SharedTarget, DecidedWhenTheRunEndsAndKeptThen) {
  const Addresses ours = {"10.244.0.5", "10.96.0.10", "nginx.shop.svc"};
  api::LoadTestStatus running = final_status(ours);
  running.phase = api::Phase::Running;
  running.completion_time.reset();

  // Final, the other runs not read in this pass: look again.
  api::LoadTestStatus status = final_status(ours);
  EXPECT_TRUE(plan_shared_target(running, status, "self", std::nullopt, std::nullopt, kEnd));
  EXPECT_EQ(shared_condition(status), nullptr);

  // Read: b, through another Service, still running; c, another pod.
  const std::vector<OtherRun> others = {
      other("shop", "b", kStart + 2s, std::nullopt, {"10.244.0.5", "10.96.0.99"}),
      other("shop", "c", kStart, std::nullopt, {"10.244.0.9"}),
      other("shop", "self-name", kStart, kEnd, ours, "self")};
  status = final_status(ours);
  EXPECT_FALSE(plan_shared_target(running, status, "self", std::nullopt, others, kEnd));
  ASSERT_NE(shared_condition(status), nullptr);
  EXPECT_EQ(shared_condition(status)->status, api::ConditionStatus::True);
  EXPECT_EQ(shared_condition(status)->reason, "TargetShared");
  EXPECT_EQ(shared_condition(status)->message,
            "shop/b loaded the same target during this run: its latency and the target's CPU "
            "and memory include their load");
  EXPECT_EQ(shared_condition(status)->observed_generation, 1);
  EXPECT_EQ(status.target->shared_with, (std::vector<api::SharedRun>{{"shop", "b"}}));
  EXPECT_EQ(json(status)["target"]["sharedWith"],
            (json::array({{{"namespace", "shop"}, {"name", "b"}}})));
  // The verdict is the run's own.
  EXPECT_EQ(status.verdict, api::Verdict::Pass);
  EXPECT_EQ(status.phase, api::Phase::Succeeded);

  // Kept once decided, even when b is gone and the target was measured
  // since (a measurement writes status.target afresh).
  api::LoadTestStatus later = final_status({});
  later.target->namespace_ = "shop";
  later.target->pods = 1;
  EXPECT_FALSE(
      plan_shared_target(status, later, "self", std::nullopt, std::vector<OtherRun>{}, kEnd + 1h));
  EXPECT_EQ(later.target->shared_with, status.target->shared_with);
  EXPECT_EQ(later.target->addresses, ours);
  EXPECT_EQ(later.target->pods, 1u);
  EXPECT_EQ(*shared_condition(later), *shared_condition(status));
}

TEST(SharedTarget, AloneSaysNotShared) {
  const Addresses ours = {"10.244.0.5"};
  api::LoadTestStatus status = final_status(ours);
  plan_shared_target(
      final_status(ours), status, "self", std::nullopt,
      std::vector<OtherRun>{other("shop", "earlier", kStart - 1h, kStart - 1s, ours)}, kEnd);
  ASSERT_NE(shared_condition(status), nullptr);
  EXPECT_EQ(shared_condition(status)->status, api::ConditionStatus::False);
  EXPECT_EQ(shared_condition(status)->reason, "TargetNotShared");
  EXPECT_TRUE(status.target->shared_with.empty());
  EXPECT_FALSE(json(status)["target"].contains("sharedWith"));
}

TEST(SharedTarget, ManyRunsAtOnceKeepTheStatusBounded) {
  const Addresses ours = {"10.244.0.5"};
  std::vector<OtherRun> others;
  for (int i = 0; i < 60; ++i) {
    others.push_back(other("shop", "run-" + std::to_string(100 + i), kStart, kEnd, ours));
  }
  api::LoadTestStatus status = final_status(ours);
  plan_shared_target(final_status(ours), status, "self", std::nullopt, others, kEnd);
  EXPECT_EQ(status.target->shared_with.size(), kMaxSharedRuns);
  EXPECT_EQ(status.target->shared_with.front(), (api::SharedRun{"shop", "run-100"}));
  EXPECT_EQ(shared_condition(status)->message,
            "shop/run-100, shop/run-101, shop/run-102, shop/run-103, shop/run-104 and 55 more "
            "loaded the same target during this run: its latency and the target's CPU and memory "
            "include their load");

  status = final_status(ours);
  plan_shared_target(final_status(ours), status, "self", std::nullopt,
                     std::vector<OtherRun>{others[0], others[1], others[2]}, kEnd);
  EXPECT_TRUE(shared_condition(status)->message.starts_with(
      "shop/run-100, shop/run-101 and shop/run-102 loaded"));
}

TEST(SharedTarget, NothingDecidedForARunThatSentNoLoadOrRecordedNothing) {
  api::LoadTestStatus never_started = final_status({"10.244.0.5"});
  never_started.phase = api::Phase::Failed;
  never_started.start_time.reset();
  api::LoadTestStatus status = never_started;
  EXPECT_FALSE(plan_shared_target(never_started, status, "self", std::nullopt,
                                  std::vector<OtherRun>{}, kEnd));
  EXPECT_EQ(shared_condition(status), nullptr);
  EXPECT_FALSE(shared_target_undecided(never_started));

  api::LoadTestStatus older = final_status({});
  older.target.reset();
  status = older;
  EXPECT_FALSE(
      plan_shared_target(older, status, "self", std::nullopt, std::vector<OtherRun>{}, kEnd));
  EXPECT_EQ(shared_condition(status), nullptr);
  EXPECT_FALSE(shared_target_undecided(older));
  EXPECT_TRUE(shared_target_undecided(final_status({"10.244.0.5"})));
}

// Item 4 of the issue: A ends while B runs and names B; B ends later and
// names A, whose window met its own.
TEST(SharedTarget, TwoRunsAtOnceNameEachOther) {
  const Addresses a_addresses = {"10.244.0.5", "10.96.0.10", "nginx-a.shop.svc"};
  const Addresses b_addresses = {"10.244.0.5", "10.96.0.20", "nginx-b.shop.svc"};
  api::LoadTestStatus a = final_status(a_addresses);
  const OtherRun b_running = other("shop", "b", kStart + 3s, std::nullopt, b_addresses, "uid-b");
  plan_shared_target(api::LoadTestStatus(a), a, "uid-a", std::nullopt,
                     std::vector<OtherRun>{b_running}, kEnd);
  EXPECT_EQ(a.target->shared_with, (std::vector<api::SharedRun>{{"shop", "b"}}));

  api::LoadTestStatus b = final_status(b_addresses);
  b.start_time = kStart + 3s;
  b.completion_time = kEnd + 10s;
  const OtherRun a_done = other("shop", "a", kStart, kEnd, a_addresses, "uid-a");
  plan_shared_target(api::LoadTestStatus(b), b, "uid-b", std::nullopt,
                     std::vector<OtherRun>{a_done}, kEnd + 10s);
  EXPECT_EQ(b.target->shared_with, (std::vector<api::SharedRun>{{"shop", "a"}}));
}

}  // namespace
