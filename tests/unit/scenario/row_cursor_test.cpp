#include "common/scenario/row_cursor.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

namespace kubeload::scenario {
namespace {

// Every row a part hands out until it gives none (at most `limit`).
std::vector<std::uint64_t> drain(UniqueRows& rows, std::size_t limit = 1000) {
  std::vector<std::uint64_t> taken;
  while (taken.size() < limit) {
    const auto row = rows.next();
    if (!row) break;
    taken.push_back(*row);
  }
  return taken;
}

TEST(UniqueRows, SplitsRowsAcrossThreePodsOfTwoThreads) {
  // 3 pods x 2 threads: parts 0..5; 14 rows.
  const std::vector<std::vector<std::uint64_t>> want{{0, 6, 12}, {1, 7, 13}, {2, 8},
                                                     {3, 9},     {4, 10},    {5, 11}};
  for (std::uint64_t worker = 0; worker < 3; ++worker) {
    for (std::uint64_t thread = 0; thread < 2; ++thread) {
      UniqueRows rows(14, RunPart{worker, 3, thread, 2}, OnExhausted::stop);
      const std::size_t part = worker * 2 + thread;
      EXPECT_EQ(drain(rows), want[part]) << "worker " << worker << " thread " << thread;
      EXPECT_EQ(rows.owned(), want[part].size());
      EXPECT_EQ(rows.next(), std::nullopt) << "stays spent";
    }
  }
}

TEST(UniqueRows, GivesEveryRowExactlyOnceForAnyPodsThreadsAndRows) {
  for (std::uint64_t workers = 1; workers <= 5; ++workers) {
    for (std::uint64_t threads = 1; threads <= 4; ++threads) {
      for (std::uint64_t n : {0, 1, 2, 5, 6, 7, 19, 20, 21, 97}) {
        std::vector<int> seen(n, 0);
        std::uint64_t owned = 0;
        for (std::uint64_t worker = 0; worker < workers; ++worker) {
          for (std::uint64_t thread = 0; thread < threads; ++thread) {
            UniqueRows rows(n, RunPart{worker, workers, thread, threads}, OnExhausted::stop);
            owned += rows.owned();
            for (const std::uint64_t row : drain(rows)) {
              ASSERT_LT(row, n);
              ++seen[row];
            }
          }
        }
        EXPECT_EQ(owned, n);
        for (std::uint64_t row = 0; row < n; ++row) {
          EXPECT_EQ(seen[row], 1) << "row " << row << " of " << n << ", " << workers
                                  << " workers x " << threads << " threads";
        }
      }
    }
  }
}

TEST(UniqueRows, RecycleStartsThePartsRowsOver) {
  UniqueRows rows(10, RunPart{1, 2, 0, 2}, OnExhausted::recycle);  // part 2 of 4: rows 2, 6
  std::vector<std::uint64_t> taken;
  for (int i = 0; i < 5; ++i) taken.push_back(*rows.next());
  EXPECT_EQ(taken, (std::vector<std::uint64_t>{2, 6, 2, 6, 2}));
}

TEST(UniqueRows, APartWithoutRowsStopsOrSharesRowGModN) {
  // 3 rows, 5 parts: part 4 owns none.
  UniqueRows stopped(3, RunPart{4, 5, 0, 1}, OnExhausted::stop);
  EXPECT_EQ(stopped.owned(), 0u);
  EXPECT_EQ(stopped.next(), std::nullopt);
  UniqueRows recycled(3, RunPart{4, 5, 0, 1}, OnExhausted::recycle);
  EXPECT_EQ(recycled.next(), 1u);
  EXPECT_EQ(recycled.next(), 1u);
  UniqueRows empty(0, RunPart{0, 1, 0, 1}, OnExhausted::recycle);
  EXPECT_EQ(empty.next(), std::nullopt);
}

TEST(UniqueRows, RefusesAPartOutsideTheRun) {
  EXPECT_THROW(UniqueRows(5, RunPart{3, 3, 0, 1}, OnExhausted::stop), std::invalid_argument);
  EXPECT_THROW(UniqueRows(5, RunPart{0, 1, 0, 0}, OnExhausted::stop), std::invalid_argument);
  EXPECT_EQ(RunPart({0, 0, 0, 1}).check(), "no workers: a run has at least one");
  EXPECT_EQ(RunPart({2, 2, 0, 1}).check(), "worker 2 of 2: the index counts from 0");
  EXPECT_EQ(RunPart({0, 1, 4, 4}).check(), "thread 4 of 4: the index counts from 0");
  EXPECT_EQ(RunPart({0, UINT64_MAX, 0, 2}).check(),
            "18446744073709551615 workers of 2 threads: more parts than 64 bits count");
  EXPECT_EQ(RunPart({1, 3, 1, 2}).check(), std::nullopt);
  EXPECT_EQ(RunPart({1, 3, 1, 2}).index(), 3u);
  EXPECT_EQ(RunPart({1, 3, 1, 2}).count(), 6u);
}

TEST(UniqueRows, HandsOutTheLastRowsOfAHugeTableWithoutOverflow) {
  const std::uint64_t n = UINT64_MAX - 1;
  UniqueRows rows(n, RunPart{0, 1, 0, 1}, OnExhausted::stop);
  EXPECT_EQ(rows.owned(), n);
  UniqueRows last(n, RunPart{2, 3, 0, 1}, OnExhausted::stop);
  EXPECT_EQ(last.owned(), (n - 2 - 1) / 3 + 1);
}

TEST(SequentialRows, StartsAtTheVirtualUsersIndexAndWraps) {
  SequentialRows rows(4, 6);  // virtual user 6 of a run, 4 rows: starts at 2
  std::vector<std::uint64_t> taken;
  for (int i = 0; i < 6; ++i) taken.push_back(*rows.next());
  EXPECT_EQ(taken, (std::vector<std::uint64_t>{2, 3, 0, 1, 2, 3}));
  SequentialRows first(4, 0);
  EXPECT_EQ(first.next(), 0u);
  SequentialRows none(0, 3);
  EXPECT_EQ(none.next(), std::nullopt);
}

TEST(RandomRow, DrawsEveryRowUniformlyFromTheCallersGenerator) {
  Random random(42);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100000; ++i) {
    const auto row = random_row(10, random);
    ASSERT_TRUE(row);
    ASSERT_LT(*row, 10u);
    ++counts[*row];
  }
  // 10,000 expected each; 5 standard deviations is about 475.
  for (const int count : counts) EXPECT_NEAR(count, 10000, 500);
  Random again(42);
  Random same(42);
  EXPECT_EQ(random_row(1000, again), random_row(1000, same)) << "repeatable by seed";
  EXPECT_EQ(random_row(0, random), std::nullopt);
}

}  // namespace
}  // namespace kubeload::scenario
