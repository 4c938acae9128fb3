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
  const Steady::time_point now = Steady::now();
  struct Row {
    std::string holder;
    Steady::duration unchanged_for;  // since this replica saw the record change
    LeaseVerdict expected;
    const char* why;
  };
  const std::vector<Row> rows = {
      {"me", 1s, LeaseVerdict::kRenew, "our own lease"},
      {"me", 1h, LeaseVerdict::kRenew, "our own, even stale: renew it"},
      {"other", 14s, LeaseVerdict::kHeldByOther, "another holder, renewed within 15s as seen here"},
      {"other", 15s, LeaseVerdict::kAcquire, "another holder that stopped renewing"},
      {"", 0s, LeaseVerdict::kAcquire, "released (empty holder)"},
  };
  for (const Row& row : rows) {
    const LeaseObservation observed{"record", now - row.unchanged_for};
    EXPECT_EQ(decide_lease(row.holder, observed, 15s, "me", now), row.expected) << row.why;
  }
}

// Expiry is judged by when this replica saw the record change, never by the
// holder's renewTime: the holder's clock may be far off ours.
TEST(LeaderElection, AnotherReplicasClockDoesNotDecide) {
  const Steady::time_point start = Steady::now();
  // The holder renews every 2 s, writing a renewTime an hour in the past
  // (its clock is behind): a live lease, never taken.
  std::optional<LeaseObservation> seen;
  for (int i = 0; i <= 30; ++i) {
    const Steady::time_point now = start + std::chrono::seconds(2 * i);
    const std::string record = R"({"holderIdentity":"other","renewTime":"2026-12-03T13:00:)" +
                               std::to_string(10 + i) + R"(.000000Z"})";
    seen = observe_lease(seen, record, now);
    EXPECT_EQ(decide_lease("other", *seen, 15s, "me", now), LeaseVerdict::kHeldByOther) << i;
  }
  // It stops renewing (its renewTime says the future: its clock is ahead):
  // free once the record stood still for the lease's duration here.
  const std::string frozen =
      R"({"holderIdentity":"other","renewTime":"2027-01-01T00:00:00.000000Z"})";
  const Steady::time_point stopped = start + 62s;
  seen = observe_lease(seen, frozen, stopped);
  EXPECT_EQ(decide_lease("other", *seen, 15s, "me", stopped + 14s), LeaseVerdict::kHeldByOther);
  seen = observe_lease(seen, frozen, stopped + 14s);
  EXPECT_EQ(decide_lease("other", *seen, 15s, "me", stopped + 15s), LeaseVerdict::kAcquire);
}

// A replica that starts (or restarts) sees every record for the first time:
// it waits a whole lease duration before taking another holder's lease.
TEST(LeaderElection, AFreshReplicaWaitsALeaseDuration) {
  const Steady::time_point now = Steady::now();
  const LeaseObservation first = observe_lease(std::nullopt, "record", now);
  EXPECT_EQ(first.observed_at, now);
  EXPECT_EQ(decide_lease("other", first, 15s, "me", now + 14s), LeaseVerdict::kHeldByOther);
  EXPECT_EQ(decide_lease("other", first, 15s, "me", now + 15s), LeaseVerdict::kAcquire);
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
