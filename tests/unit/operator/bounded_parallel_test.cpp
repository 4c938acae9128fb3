// for_each_bounded: every index once, never more than the limit in flight,
// and really in parallel (calls that each wait for `limit` of them to be
// running at once would never return if they ran one by one).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "operator/bounded_parallel.hpp"

namespace {

using kubeload::controller::for_each_bounded;

TEST(BoundedParallel, CallsEveryIndexOnceWithAtMostTheLimitInFlight) {
  for (const std::size_t limit : {1u, 4u, 32u}) {
    std::vector<std::atomic<int>> calls(1000);
    std::atomic<int> in_flight{0}, most{0};
    for_each_bounded(calls.size(), limit, [&](std::size_t i) {
      const int now = ++in_flight;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::yield();
      ++calls[i];
      --in_flight;
    });
    for (std::size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(calls[i], 1) << i;
    EXPECT_LE(most.load(), static_cast<int>(limit));
  }
}

TEST(BoundedParallel, RunsLimitCallsAtOnce) {
  constexpr std::size_t kLimit = 8;
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t arrived = 0;
  bool all_together = true;
  for_each_bounded(kLimit * 3, kLimit, [&](std::size_t i) {
    if (i >= kLimit) return;
    std::unique_lock lock(mutex);
    ++arrived;
    changed.notify_all();
    // A generous liveness bound, not a speed check: run one by one, the
    // first call would wait here for the others forever.
    if (!changed.wait_for(lock, std::chrono::seconds(30), [&] { return arrived >= kLimit; })) {
      all_together = false;
    }
  });
  EXPECT_TRUE(all_together);
  EXPECT_EQ(arrived, kLimit);
}

TEST(BoundedParallel, NothingToDoAndALimitOfZeroAreFine) {
  int calls = 0;
  for_each_bounded(0, 8, [&](std::size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  for_each_bounded(3, 0, [&](std::size_t) { ++calls; });  // one at a time
  EXPECT_EQ(calls, 3);
}

}  // namespace
