// The memory budget of the /result answers in flight: reservations wait for
// each other, and one larger than the whole budget takes all of it.

#include "operator/byte_budget.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

namespace kubeload::controller {
namespace {

TEST(ByteBudget, LeasesGiveTheirBytesBack) {
  ByteBudget budget(100);
  {
    const ByteBudget::Lease a = budget.reserve(60);
    const ByteBudget::Lease b = budget.reserve(40);
    EXPECT_EQ(budget.free(), 0u);
  }
  EXPECT_EQ(budget.free(), 100u);
  const ByteBudget::Lease all = budget.reserve(1000);  // more than there is: all of it
  EXPECT_EQ(all.bytes(), 100u);
  EXPECT_EQ(budget.free(), 0u);
}

TEST(ByteBudget, AReservationWaitsUntilTheBytesAreFree) {
  ByteBudget budget(100);
  std::optional<ByteBudget::Lease> held;
  held.emplace(budget.reserve(70));
  std::atomic<bool> got(false);
  std::thread waiting([&] {
    const ByteBudget::Lease lease = budget.reserve(50);
    got = true;
  });
  // Not a timing assertion: however long this waits, the reservation cannot
  // have been granted while 70 of 100 bytes are held.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got);
  held.reset();
  waiting.join();
  EXPECT_TRUE(got);
  EXPECT_EQ(budget.free(), 100u);
}

TEST(ByteBudget, AResizedLeaseHoldsTheNewSize) {
  ByteBudget budget(100);
  ByteBudget::Lease lease = budget.reserve(10);
  lease.resize(80);
  EXPECT_EQ(lease.bytes(), 80u);
  EXPECT_EQ(budget.free(), 20u);
  lease.resize(5);
  EXPECT_EQ(budget.free(), 95u);
  lease.resize(1000);  // more than there is: all of it
  EXPECT_EQ(lease.bytes(), 100u);
}

// Two calls that hold a little each and then want most of the budget: each
// gives its bytes back before it waits, so one gets what it wants at once
// and the other when that one is done, where holding on while waiting would
// have left both waiting for good.
TEST(ByteBudget, ResizingLeasesDoNotWaitForEachOther) {
  ByteBudget budget(100);
  ByteBudget::Lease first = budget.reserve(30);
  std::optional<ByteBudget::Lease> second;
  second.emplace(budget.reserve(30));
  std::atomic<bool> grown(false);
  std::thread growing([&] {
    second->resize(90);
    grown = true;
    second.reset();
  });
  first.resize(70);  // 30 given back by `second` or not yet taken by it: room for 70 either way
  EXPECT_EQ(first.bytes(), 70u);
  first.resize(0);
  growing.join();
  EXPECT_TRUE(grown);
  EXPECT_EQ(budget.free(), 100u);
}

}  // namespace
}  // namespace kubeload::controller
