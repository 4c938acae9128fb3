// The memory budget of the /result answers in flight: reservations wait for
// each other, and one larger than the whole budget takes all of it.

#include "operator/byte_budget.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <optional>
#include <thread>
#include <vector>

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

// Two calls that hold 30 of 100 bytes each and then want 80: each gives
// its 30 back before it waits, so one gets its 80 and the other gets them
// when that one is done. Had a call kept its bytes while waiting for the
// rest (50 more, with 40 free), both would wait for good.
TEST(ByteBudget, ResizingLeasesDoNotWaitForEachOther) {
  ByteBudget budget(100);
  std::vector<ByteBudget::Lease> leases;
  leases.push_back(budget.reserve(30));
  leases.push_back(budget.reserve(30));
  std::vector<std::future<void>> grown;
  for (ByteBudget::Lease& lease : leases) {
    grown.push_back(std::async(std::launch::async, [&lease] {
      lease.resize(80);
      EXPECT_EQ(lease.bytes(), 80u);
      lease.resize(0);  // done with them
    }));
  }
  for (std::future<void>& each : grown) {
    if (each.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
      ADD_FAILURE() << "resizing leases wait for each other";
      std::_Exit(1);  // the waiting threads cannot be joined
    }
  }
  EXPECT_EQ(budget.free(), 100u);
}

}  // namespace
}  // namespace kubeload::controller
