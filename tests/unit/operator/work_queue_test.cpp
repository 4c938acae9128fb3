#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "operator/work_queue.hpp"

namespace kubeload::controller {
namespace {

using namespace std::chrono_literals;

TEST(WorkQueue, DeduplicatesWaitingKeys) {
  WorkQueue q;
  q.add("ns/a");
  q.add("ns/a");
  q.add("ns/b");
  EXPECT_EQ(q.depth(), 2u);
  EXPECT_EQ(q.get(), "ns/a");
  EXPECT_EQ(q.get(), "ns/b");
}

TEST(WorkQueue, AKeyAddedWhileProcessingComesBackAfterDone) {
  WorkQueue q;
  q.add("k");
  ASSERT_EQ(q.get(), "k");
  q.add("k");                // an event arrived while reconciling
  EXPECT_EQ(q.depth(), 0u);  // not handed out twice at once
  q.done("k");
  EXPECT_EQ(q.depth(), 1u);
  EXPECT_EQ(q.get(), "k");
}

TEST(WorkQueue, DelayedKeysArriveWhenDue) {
  WorkQueue q;
  const auto start = std::chrono::steady_clock::now();
  q.add_after("later", 50ms);
  q.add("now");
  EXPECT_EQ(q.get(), "now");
  EXPECT_EQ(q.get(), "later");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
}

TEST(WorkQueue, FailuresBackOffExponentiallyUntilForgotten) {
  WorkQueue q(10ms, 50ms);
  for (const auto expected : {10ms, 20ms, 40ms, 50ms, 50ms}) {
    EXPECT_EQ(q.backoff_for("k"), expected);
    const auto start = std::chrono::steady_clock::now();
    q.add_rate_limited("k");
    EXPECT_EQ(q.get(), "k");
    q.done("k");
    EXPECT_GE(std::chrono::steady_clock::now() - start, expected);  // never early
  }
  EXPECT_EQ(q.backoff_for("other"), 10ms);
  q.forget("k");
  EXPECT_EQ(q.backoff_for("k"), 10ms);
}

TEST(WorkQueue, ShutDownReleasesWaiters) {
  WorkQueue q;
  std::optional<std::string> got = "unset";
  std::thread waiter([&] { got = q.get(); });
  std::this_thread::sleep_for(20ms);
  q.shut_down();
  waiter.join();
  EXPECT_FALSE(got.has_value());
}

}  // namespace
}  // namespace kubeload::controller

namespace kubeload::controller {
namespace {

using namespace std::chrono_literals;

TEST(WorkQueue, AddAfterKeepsOneEntryPerKeyTheEarliest) {
  WorkQueue q;
  for (int pass = 0; pass < 50; ++pass) q.add_after("ns/a", 1s);  // every pass asks again
  EXPECT_EQ(q.depth(), 1u);
  q.add_after("ns/a", 20ms);  // an earlier look replaces the later one
  EXPECT_EQ(q.depth(), 1u);
  EXPECT_EQ(q.get(), "ns/a");
  q.done("ns/a");
  EXPECT_EQ(q.depth(), 0u);  // the later entry is gone, not waiting to fire again
}

TEST(WorkQueue, AddAfterOfAQueuedKeyAddsNothing) {
  WorkQueue q;
  q.add("k");
  q.add_after("k", 10ms);
  EXPECT_EQ(q.depth(), 1u);
}

// A model of one running LoadTest: each pass requeues itself after 1s and
// its status write comes back as a watch event (filtered, see
// event_filter_test). Over a simulated stretch the key is handed out once
// per due time, never piling up.
TEST(WorkQueue, ARequeueingKeyIsHandedOutOncePerDueTime) {
  WorkQueue q;
  q.add("ns/running");
  int passes = 0;
  const auto until = std::chrono::steady_clock::now() + 250ms;
  while (std::chrono::steady_clock::now() < until) {
    auto key = q.get();
    ASSERT_TRUE(key);
    ++passes;
    q.add_after(*key, 50ms);  // the reconcile asks to look again
    q.add_after(*key, 50ms);  // and so does a second path (an event-triggered pass)
    q.done(*key);
    EXPECT_LE(q.depth(), 1u);
  }
  EXPECT_LE(passes, 7);  // 250ms / 50ms, plus the first
}

// Fairness: one namespace with a thousand waiting keys (a thousand broken
// LoadTests back from their backoff at once) delays another namespace's key
// by one hand-out, not a thousand.
TEST(WorkQueue, NamespacesTakeTurns) {
  WorkQueue q;
  for (int i = 0; i < 1000; ++i) q.add("busy/broken-" + std::to_string(i));
  q.add("quiet/checkout");
  q.add("other/search");
  EXPECT_EQ(q.get(), "busy/broken-0");
  EXPECT_EQ(q.get(), "quiet/checkout");
  EXPECT_EQ(q.get(), "other/search");
  EXPECT_EQ(q.get(), "busy/broken-1");
  EXPECT_EQ(q.get(), "busy/broken-2");  // alone now: its keys in order
  EXPECT_EQ(q.depth(), 997u);
}

// A big run re-added while it is being reconciled (its pass takes long,
// events keep coming) goes to the back of its namespace's turn: the other
// namespaces' keys are handed out first, the dirty key only once.
TEST(WorkQueue, AKeyBackFromProcessingWaitsForTheOtherNamespacesTurns) {
  WorkQueue q;
  q.add("load/thousand-workers");
  ASSERT_EQ(q.get(), "load/thousand-workers");
  q.add("load/thousand-workers");
  q.add("load/thousand-workers");
  q.add("a/one");
  q.add("b/two");
  q.done("load/thousand-workers");
  EXPECT_EQ(q.depth(), 3u);
  EXPECT_EQ(q.get(), "a/one");
  EXPECT_EQ(q.get(), "b/two");
  EXPECT_EQ(q.get(), "load/thousand-workers");
  EXPECT_EQ(q.depth(), 0u);
}

// Keys due from add_after join the turns like added ones.
TEST(WorkQueue, DelayedKeysTakeTurnsToo) {
  WorkQueue q;
  for (int i = 0; i < 5; ++i) q.add_after("busy/k" + std::to_string(i), 1ms);
  q.add_after("quiet/k", 1ms);
  std::this_thread::sleep_for(5ms);
  std::vector<std::string> order;
  for (int i = 0; i < 6; ++i) order.push_back(*q.get());
  const auto quiet = std::find(order.begin(), order.end(), "quiet/k");
  ASSERT_NE(quiet, order.end());
  EXPECT_LE(quiet - order.begin(), 1);
}

}  // namespace
}  // namespace kubeload::controller
