// The leader elector's decisions, without an API server: whose the Lease
// is, and whether a leader may still act.

#include <gtest/gtest.h>

#include "operator/event_filter.hpp"
#include "operator/leader_election.hpp"
#include "operator/status.hpp"

namespace kubeload::controller {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

TEST(LeaderElection, DecideLease) {
  const Timestamp now = *parse_time("2026-11-30T17:00:00Z");
  struct Row {
    std::string holder;
    std::optional<Timestamp> renewed;
    LeaseVerdict expected;
    const char* why;
  };
  const std::vector<Row> rows = {
      {"me", now - 1s, LeaseVerdict::kRenew, "our own lease"},
      {"me", now - 1h, LeaseVerdict::kRenew, "our own, even stale: renew it"},
      {"other", now - 14s, LeaseVerdict::kHeldByOther, "another holder, renewed within 15s"},
      {"other", now - 15s, LeaseVerdict::kAcquire, "another holder that stopped renewing"},
      {"other", std::nullopt, LeaseVerdict::kAcquire, "no renewTime"},
      {"", now, LeaseVerdict::kAcquire, "released (empty holder)"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(decide_lease(row.holder, row.renewed, 15s, "me", now), row.expected) << row.why;
  }
}

TEST(LeaderElection, ALeaderStopsBeforeItsLeaseCanBeTaken) {
  const Steady::time_point renewed = Steady::now();
  const auto renew_deadline = std::chrono::milliseconds(10000);  // 2/3 of a 15s lease
  EXPECT_TRUE(may_still_lead(renewed, renew_deadline, renewed + 9s));
  EXPECT_FALSE(may_still_lead(renewed, renew_deadline, renewed + 10s));
  // Another replica may take the lease at 15s: the old leader stopped 5s earlier.
  EXPECT_FALSE(may_still_lead(renewed, renew_deadline, renewed + 15s));
  EXPECT_FALSE(may_still_lead(std::nullopt, renew_deadline, renewed));
}

TEST(LoadTestEventFilter, OwnStatusWritesDoNotTriggerPasses) {
  LoadTestEventFilter filter;
  nlohmann::json lt = {
      {"metadata", {{"name", "a"}, {"namespace", "ns"}, {"uid", "u1"}, {"generation", 1}}}};
  EXPECT_TRUE(filter.should_reconcile(kube::WatchEventType::Added, lt));
  lt["status"] = {{"phase", "Running"}, {"progress", "10%"}};
  lt["metadata"]["resourceVersion"] = "7";
  EXPECT_FALSE(filter.should_reconcile(kube::WatchEventType::Modified, lt));
  lt["status"]["progress"] = "11%";
  EXPECT_FALSE(filter.should_reconcile(kube::WatchEventType::Modified, lt));
  lt["metadata"]["labels"] = {{"team", "x"}};
  EXPECT_TRUE(filter.should_reconcile(kube::WatchEventType::Modified, lt));
  lt["metadata"]["deletionTimestamp"] = "2026-11-30T17:00:00Z";
  EXPECT_TRUE(filter.should_reconcile(kube::WatchEventType::Modified, lt));
  EXPECT_TRUE(filter.should_reconcile(kube::WatchEventType::Deleted, lt));
  // Recreated under the same name: a new uid is a new object.
  lt = {{"metadata", {{"name", "a"}, {"namespace", "ns"}, {"uid", "u2"}, {"generation", 1}}}};
  EXPECT_TRUE(filter.should_reconcile(kube::WatchEventType::Modified, lt));
  EXPECT_FALSE(filter.should_reconcile(kube::WatchEventType::Bookmark, lt));
}

}  // namespace
}  // namespace kubeload::controller
