#include "kubeload/histogram.hpp"

#include "allocation_counter.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kubeload {
namespace {

constexpr int64_t kHourInMicros = int64_t{3600} * 1000 * 1000;

// Keeps the optimizer from deleting an allocation whose result is unused.
void escape(const void* pointer) {
  asm volatile("" : : "g"(pointer) : "memory");
}

// ---- layout -----------------------------------------------------------------
// Expected numbers worked out by hand from HdrHistogram's algorithm:
// subBucketCount = 2^ceil(log2(2 * 10^3)) = 2048; bucketCount is the number of
// doublings of 2048 needed to exceed highest, plus one; countsArrayLength =
// (bucketCount + 1) * 1024.

TEST(HistogramLayout, DefaultIsOneMicrosecondTo24HoursAt3Digits) {
  Histogram histogram;
  EXPECT_EQ(histogram.lowest_discernible(), 1);
  EXPECT_EQ(histogram.highest_trackable(), 24 * kHourInMicros);
  EXPECT_EQ(histogram.significant_digits(), 3);
  EXPECT_EQ(histogram.unit_magnitude(), 0);
  EXPECT_EQ(histogram.sub_bucket_count(), 2048);
  // 86.4e9 / 2048 = 42.2e6 < 2^26, so 26 doublings: 27 buckets.
  EXPECT_EQ(histogram.bucket_count(), 27);
  EXPECT_EQ(histogram.counts_length(), 28 * 1024);
}

TEST(HistogramLayout, OneHourInMicrosecondsMatchesHdrHistogramReference) {
  Histogram histogram(1, kHourInMicros, 3);
  EXPECT_EQ(histogram.unit_magnitude(), 0);
  EXPECT_EQ(histogram.sub_bucket_count(), 2048);
  // 3.6e9 / 2048 = 1.76e6, between 2^20 and 2^21: 21 doublings, 22 buckets.
  EXPECT_EQ(histogram.bucket_count(), 22);
  EXPECT_EQ(histogram.counts_length(), 23552);
}

TEST(HistogramLayout, LargeLowestValueAndFiveDigits) {
  Histogram histogram(20'000'000, 100'000'000, 5);
  EXPECT_EQ(histogram.unit_magnitude(), 24);        // 2^24 <= 2e7 < 2^25
  EXPECT_EQ(histogram.sub_bucket_count(), 262144);  // 2^ceil(log2(200000))
  EXPECT_EQ(histogram.bucket_count(), 1);           // 2^18 << 24 = 2^42 > 1e8
  EXPECT_EQ(histogram.counts_length(), 2 * 131072);
}

TEST(HistogramLayout, WholeInt64RangeReachesTheTop) {
  Histogram histogram(1, std::numeric_limits<int64_t>::max(), 2);
  EXPECT_EQ(histogram.sub_bucket_count(), 256);
  // 2^8 doubles 54 times up to 2^62, then one bucket more covers the top.
  EXPECT_EQ(histogram.bucket_count(), 56);
  EXPECT_EQ(histogram.counts_length(), 57 * 128);
  const int64_t top = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(histogram.highest_equivalent_value(top), top);
  histogram.record(top);
  EXPECT_EQ(histogram.max(), top);
  EXPECT_EQ(histogram.value_at_percentile(100), top);
}

TEST(HistogramLayout, RejectsInvalidParameters) {
  EXPECT_THROW(Histogram(0, 1000, 3), std::invalid_argument);
  EXPECT_THROW(Histogram(1, 1, 3), std::invalid_argument);
  EXPECT_THROW(Histogram(1, 1000, 6), std::invalid_argument);
  EXPECT_THROW(Histogram(1, 1000, -1), std::invalid_argument);
  EXPECT_THROW(Histogram(int64_t{1} << 50, std::numeric_limits<int64_t>::max(), 5),
               std::invalid_argument);
}

TEST(HistogramLayout, EquivalentValueRangesMatchHdrHistogram) {
  Histogram histogram(1, kHourInMicros, 3);
  // Values from HdrHistogram's own equivalence tests.
  EXPECT_EQ(histogram.lowest_equivalent_value(10007), 10000);
  EXPECT_EQ(histogram.lowest_equivalent_value(10009), 10008);
  EXPECT_EQ(histogram.highest_equivalent_value(10000), 10007);
  EXPECT_EQ(histogram.highest_equivalent_value(8180 * 1024), 8183 * 1024 + 1023);
  EXPECT_EQ(histogram.highest_equivalent_value(8191 * 1024), 8191 * 1024 + 1023);
  EXPECT_EQ(histogram.highest_equivalent_value(8193 * 1024), 8199 * 1024 + 1023);
  EXPECT_EQ(histogram.highest_equivalent_value(9995 * 1024), 9999 * 1024 + 1023);
  EXPECT_EQ(histogram.highest_equivalent_value(10007 * 1024), 10007 * 1024 + 1023);
  EXPECT_EQ(histogram.highest_equivalent_value(10008 * 1024), 10015 * 1024 + 1023);
  EXPECT_EQ(histogram.median_equivalent_value(100'000'000), 99'975'168);
  // Below 2048 every value is its own bucket.
  for (int64_t value = 0; value < 2048; ++value) {
    ASSERT_EQ(histogram.lowest_equivalent_value(value), value);
    ASSERT_EQ(histogram.highest_equivalent_value(value), value);
  }
}

TEST(HistogramLayout, BucketsTileTheRangeWithBoundedRelativeWidth) {
  Histogram histogram;
  std::mt19937_64 random(11);
  std::uniform_int_distribution<int> magnitude(0, 36);
  for (int i = 0; i < 200'000; ++i) {
    const int64_t value = static_cast<int64_t>(random() >> (63 - magnitude(random))) + 1;
    const int64_t low = histogram.lowest_equivalent_value(value);
    const int64_t high = histogram.highest_equivalent_value(value);
    ASSERT_LE(low, value);
    ASSERT_GE(high, value);
    ASSERT_TRUE(std::has_single_bit(static_cast<uint64_t>(high - low + 1))) << value;
    ASSERT_LE(static_cast<double>(high - low), static_cast<double>(low) / 1024.0) << value;
    ASSERT_EQ(histogram.lowest_equivalent_value(high + 1), high + 1) << value;
    ASSERT_EQ(histogram.highest_equivalent_value(low - 1), low - 1) << value;
  }
}

// ---- recording and statistics -------------------------------------------------

TEST(HistogramStatistics, EmptyHistogramIsAllZero) {
  Histogram histogram;
  EXPECT_EQ(histogram.total_count(), 0u);
  EXPECT_EQ(histogram.min(), 0);
  EXPECT_EQ(histogram.max(), 0);
  EXPECT_EQ(histogram.mean(), 0.0);
  EXPECT_EQ(histogram.stddev(), 0.0);
  EXPECT_EQ(histogram.value_at_percentile(50), 0);
  EXPECT_EQ(histogram.value_at_percentile(100), 0);
}

TEST(HistogramStatistics, EmptyHistogramWithCoarseUnitsIsAllZero) {
  Histogram histogram(1000, kHourInMicros, 3);  // the first bucket spans [0, 511]
  EXPECT_EQ(histogram.value_at_percentile(0), 0);
  EXPECT_EQ(histogram.value_at_percentile(100), 0);
  EXPECT_EQ(histogram.max(), 0);
}

TEST(HistogramStatistics, TopPercentileIsTheMaxEvenBeyondDoublePrecision) {
  Histogram histogram;
  histogram.record(5, uint64_t{1} << 60);
  histogram.record(1'000'000'000);  // one value among 2^60: below a double's resolution
  EXPECT_EQ(histogram.max(), histogram.highest_equivalent_value(1'000'000'000));
  EXPECT_EQ(histogram.value_at_percentile(100), histogram.max());
  EXPECT_EQ(histogram.value_at_percentile(99.9), 5);
  EXPECT_EQ(histogram.value_at_percentile(0), 5);
}

TEST(HistogramStatistics, SmallExactValues) {
  Histogram histogram;
  histogram.record(1);
  histogram.record(2);
  histogram.record(3);
  EXPECT_EQ(histogram.total_count(), 3u);
  EXPECT_EQ(histogram.min(), 1);
  EXPECT_EQ(histogram.max(), 3);
  EXPECT_DOUBLE_EQ(histogram.mean(), 2.0);
  EXPECT_DOUBLE_EQ(histogram.stddev(), std::sqrt(2.0 / 3.0));
  EXPECT_EQ(histogram.value_at_percentile(0), 1);
  EXPECT_EQ(histogram.value_at_percentile(33.3), 1);
  EXPECT_EQ(histogram.value_at_percentile(33.4), 2);
  EXPECT_EQ(histogram.value_at_percentile(66.7), 3);
  EXPECT_EQ(histogram.value_at_percentile(100), 3);
}

TEST(HistogramStatistics, MeanWeighsBucketMidpoints) {
  Histogram histogram;
  histogram.record(10000);  // bucket [10000, 10007], midpoint 10004
  EXPECT_DOUBLE_EQ(histogram.mean(), 10004.0);
  EXPECT_EQ(histogram.min(), 10000);
  EXPECT_EQ(histogram.max(), 10007);
}

// HdrHistogram's "raw" scenario: 10000 values of 1 ms plus one 100 s outlier.
TEST(HistogramStatistics, HdrHistogramRawScenario) {
  Histogram histogram(1, kHourInMicros, 3);
  for (int i = 0; i < 10000; ++i) histogram.record(1000);
  histogram.record(100'000'000);
  const int64_t outlier_bucket_top = 100'007'935;  // [99942400, 100007935]
  EXPECT_EQ(histogram.total_count(), 10001u);
  EXPECT_EQ(histogram.min(), 1000);
  EXPECT_EQ(histogram.max(), outlier_bucket_top);
  EXPECT_EQ(histogram.value_at_percentile(30.0), 1000);
  EXPECT_EQ(histogram.value_at_percentile(99.0), 1000);
  EXPECT_EQ(histogram.value_at_percentile(99.99), 1000);
  EXPECT_EQ(histogram.value_at_percentile(99.999), outlier_bucket_top);
  EXPECT_EQ(histogram.value_at_percentile(100.0), outlier_bucket_top);
  const double expected_mean = (10000.0 * 1000.0 + 99'975'168.0) / 10001.0;
  EXPECT_DOUBLE_EQ(histogram.mean(), expected_mean);
  const double expected_variance =
      (10000.0 * (1000.0 - expected_mean) * (1000.0 - expected_mean) +
       (99'975'168.0 - expected_mean) * (99'975'168.0 - expected_mean)) /
      10001.0;
  EXPECT_NEAR(histogram.stddev(), std::sqrt(expected_variance),
              1e-9 * std::sqrt(expected_variance));
}

TEST(HistogramStatistics, PercentileZeroIsLowestAndHundredIsHighestEquivalent) {
  Histogram histogram;
  histogram.record(12345);  // bucket [12344, 12351]
  EXPECT_EQ(histogram.value_at_percentile(0), 12344);
  EXPECT_EQ(histogram.value_at_percentile(50), 12351);
  EXPECT_EQ(histogram.value_at_percentile(100), 12351);
  EXPECT_EQ(histogram.value_at_percentile(150), 12351);
  EXPECT_EQ(histogram.value_at_percentile(-5), 12344);
}

TEST(HistogramStatistics, OutOfRangeValuesAreClampedAndCounted) {
  Histogram histogram(1, kHourInMicros, 3);
  histogram.record(-42);
  histogram.record(std::numeric_limits<int64_t>::max());
  histogram.record(kHourInMicros * 5, 2);
  EXPECT_EQ(histogram.total_count(), 4u);
  EXPECT_EQ(histogram.min(), 0);
  EXPECT_EQ(histogram.max(), histogram.highest_equivalent_value(kHourInMicros));
  EXPECT_EQ(histogram.value_at_percentile(25), 0);
  EXPECT_EQ(histogram.value_at_percentile(50), histogram.highest_equivalent_value(kHourInMicros));
}

TEST(HistogramStatistics, RecordWithCountEqualsRepeatedRecord) {
  Histogram repeated;
  Histogram counted;
  for (int i = 0; i < 7; ++i) repeated.record(123456);
  counted.record(123456, 7);
  counted.record(999, 0);  // a zero count changes nothing
  EXPECT_EQ(repeated, counted);
  EXPECT_EQ(counted.max(), repeated.max());
  EXPECT_EQ(counted.min(), repeated.min());
}

TEST(HistogramStatistics, ResetEmptiesEverything) {
  Histogram histogram;
  histogram.record(5);
  histogram.record(500000);
  histogram.reset();
  EXPECT_EQ(histogram, Histogram());
  EXPECT_EQ(histogram.min(), 0);
  EXPECT_EQ(histogram.max(), 0);
  histogram.record(77);
  EXPECT_EQ(histogram.min(), 77);
  EXPECT_EQ(histogram.max(), 77);
}

TEST(HistogramStatistics, LowestAboveOneGroupsSmallValuesIntoTheFirstUnit) {
  Histogram histogram(1000, kHourInMicros, 3);  // unit magnitude 9: units of 512
  EXPECT_EQ(histogram.unit_magnitude(), 9);
  histogram.record(700);
  EXPECT_EQ(histogram.min(), 512);
  EXPECT_EQ(histogram.max(), 1023);
}

// ---- accuracy against exact order statistics ----------------------------------

struct PercentileCase {
  double percent;
  int64_t parts_per_million;
};
constexpr PercentileCase kPercentiles[] = {{0, 0},        {50, 500000},   {90, 900000},
                                           {99, 990000},  {99.9, 999000}, {99.99, 999900},
                                           {100, 1000000}};

void expect_matches_exact_order_statistics(const std::vector<int64_t>& values) {
  Histogram histogram;
  for (int64_t value : values) histogram.record(value);
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const auto count = static_cast<int64_t>(sorted.size());

  ASSERT_EQ(histogram.total_count(), sorted.size());
  EXPECT_EQ(histogram.min(), histogram.lowest_equivalent_value(sorted.front()));
  EXPECT_EQ(histogram.max(), histogram.highest_equivalent_value(sorted.back()));
  EXPECT_LE(static_cast<double>(histogram.max() - sorted.back()), 1e-3 * sorted.back());

  for (const auto& [percent, ppm] : kPercentiles) {
    // Same rank as HdrHistogram: the ceil(p * N)-th smallest value, at least the first.
    const int64_t rank = std::max<int64_t>(1, (ppm * count + 999'999) / 1'000'000);
    const int64_t exact = sorted[static_cast<size_t>(rank - 1)];
    const int64_t reported = histogram.value_at_percentile(percent);
    EXPECT_EQ(reported, percent == 0 ? histogram.lowest_equivalent_value(exact)
                                     : histogram.highest_equivalent_value(exact))
        << "p" << percent;
    EXPECT_LE(std::abs(static_cast<double>(reported - exact)), 1e-3 * static_cast<double>(exact))
        << "p" << percent << " exact " << exact << " reported " << reported;
  }

  double sum = 0;
  double sum_of_squares = 0;
  for (int64_t value : values) {
    sum += static_cast<double>(value);
    sum_of_squares += static_cast<double>(value) * static_cast<double>(value);
  }
  const double exact_mean = sum / static_cast<double>(count);
  double squared_deviations = 0;
  for (int64_t value : values) {
    const double deviation = static_cast<double>(value) - exact_mean;
    squared_deviations += deviation * deviation;
  }
  const double exact_stddev = std::sqrt(squared_deviations / static_cast<double>(count));
  EXPECT_LE(std::abs(histogram.mean() - exact_mean), 1e-3 * exact_mean);
  // Every value moves by at most 1/2048 of itself, so the stddev moves by at
  // most that fraction of the root mean square.
  const double root_mean_square = std::sqrt(sum_of_squares / static_cast<double>(count));
  EXPECT_LE(std::abs(histogram.stddev() - exact_stddev), 1e-3 * root_mean_square);
}

constexpr size_t kSampleCount = 2'000'000;

TEST(HistogramAccuracy, Uniform) {
  std::mt19937_64 random(1);
  std::uniform_int_distribution<int64_t> latency(1, 5'000'000);
  std::vector<int64_t> values(kSampleCount);
  for (auto& value : values) value = latency(random);
  expect_matches_exact_order_statistics(values);
}

TEST(HistogramAccuracy, LogNormal) {
  std::mt19937_64 random(2);
  std::lognormal_distribution<double> latency(std::log(2000.0), 1.0);  // median 2 ms
  std::vector<int64_t> values(kSampleCount);
  for (auto& value : values) value = std::max<int64_t>(1, std::llround(latency(random)));
  expect_matches_exact_order_statistics(values);
}

TEST(HistogramAccuracy, LogNormalWithRareHugeOutliers) {
  std::mt19937_64 random(3);
  std::lognormal_distribution<double> latency(std::log(800.0), 0.5);
  std::uniform_int_distribution<int64_t> outlier(1'000'000'000, 10'000'000'000);
  std::bernoulli_distribution is_outlier(0.0005);
  std::vector<int64_t> values(kSampleCount);
  for (auto& value : values) {
    value =
        is_outlier(random) ? outlier(random) : std::max<int64_t>(1, std::llround(latency(random)));
  }
  expect_matches_exact_order_statistics(values);
}

TEST(HistogramAccuracy, ExponentialSpanningManyBuckets) {
  std::mt19937_64 random(4);
  std::exponential_distribution<double> latency(1.0 / 50'000.0);
  std::vector<int64_t> values(kSampleCount);
  for (auto& value : values) value = 1 + std::llround(latency(random));
  expect_matches_exact_order_statistics(values);
}

// ---- merge ---------------------------------------------------------------------

std::vector<int64_t> mixed_values(uint64_t seed, size_t count) {
  std::mt19937_64 random(seed);
  std::lognormal_distribution<double> latency(std::log(3000.0), 1.5);
  std::vector<int64_t> values(count);
  for (auto& value : values) value = std::llround(latency(random));
  return values;
}

TEST(HistogramMerge, MergeOfPartsEqualsHistogramOfUnion) {
  const std::vector<int64_t> part_a = mixed_values(21, 300'000);
  std::vector<int64_t> part_b(200'000);
  std::mt19937_64 random(22);
  std::uniform_int_distribution<int64_t> uniform(0, 90'000'000'000);  // some clamp at 24 h
  for (auto& value : part_b) value = uniform(random);

  Histogram histogram_a;
  Histogram histogram_b;
  Histogram histogram_union;
  for (int64_t value : part_a) {
    histogram_a.record(value);
    histogram_union.record(value);
  }
  for (int64_t value : part_b) {
    histogram_b.record(value);
    histogram_union.record(value);
  }
  Histogram merged = histogram_a;
  merged.add(histogram_b);
  EXPECT_EQ(merged, histogram_union);
  EXPECT_EQ(merged.total_count(), part_a.size() + part_b.size());
  EXPECT_EQ(merged.min(), histogram_union.min());
  EXPECT_EQ(merged.max(), histogram_union.max());
  EXPECT_DOUBLE_EQ(merged.mean(), histogram_union.mean());
  EXPECT_DOUBLE_EQ(merged.stddev(), histogram_union.stddev());
  for (const auto& percentile : kPercentiles) {
    EXPECT_EQ(merged.value_at_percentile(percentile.percent),
              histogram_union.value_at_percentile(percentile.percent));
  }
  EXPECT_NE(merged, histogram_a);  // the comparison does look at the counts
}

TEST(HistogramMerge, EmptySidesAndSelf) {
  Histogram values;
  values.record(17);
  values.record(17000);
  Histogram empty;
  Histogram merged = empty;
  merged.add(values);
  EXPECT_EQ(merged, values);
  EXPECT_EQ(merged.min(), 17);
  merged.add(empty);
  EXPECT_EQ(merged, values);
  merged.add(merged);
  EXPECT_EQ(merged.total_count(), 4u);
  EXPECT_EQ(merged.value_at_percentile(50), 17);
}

TEST(HistogramMerge, DifferentLayoutsAreRejected) {
  Histogram micros;
  EXPECT_THROW(micros.add(Histogram(1, kHourInMicros, 3)), std::invalid_argument);
  EXPECT_THROW(micros.add(Histogram(1, Histogram::kDefaultHighest, 2)), std::invalid_argument);
  EXPECT_THROW(micros.add(Histogram(2, Histogram::kDefaultHighest, 3)), std::invalid_argument);
}

TEST(HistogramMerge, CopiesAreDeepAndIndependent) {
  Histogram original;
  original.record(100);
  Histogram copy = original;
  copy.record(200);
  EXPECT_EQ(original.total_count(), 1u);
  EXPECT_EQ(copy.total_count(), 2u);
  original = copy;
  EXPECT_EQ(original, copy);
}

// ---- encoding ------------------------------------------------------------------

void expect_round_trip(const Histogram& histogram) {
  const std::string encoded = histogram.encode_base64();
  EXPECT_EQ(encoded.substr(0, 5), "HISTF");  // cookie 0x1c849314, as HdrHistogram writes it
  const Histogram decoded = Histogram::decode_base64(encoded);
  EXPECT_EQ(decoded, histogram);
  EXPECT_EQ(decoded.lowest_discernible(), histogram.lowest_discernible());
  EXPECT_EQ(decoded.highest_trackable(), histogram.highest_trackable());
  EXPECT_EQ(decoded.significant_digits(), histogram.significant_digits());
  EXPECT_EQ(decoded.total_count(), histogram.total_count());
  EXPECT_EQ(decoded.min(), histogram.min());
  EXPECT_EQ(decoded.max(), histogram.max());
  EXPECT_DOUBLE_EQ(decoded.mean(), histogram.mean());
  for (const auto& percentile : kPercentiles) {
    EXPECT_EQ(decoded.value_at_percentile(percentile.percent),
              histogram.value_at_percentile(percentile.percent));
  }
  EXPECT_EQ(decoded.encode_base64(), encoded);
}

TEST(HistogramEncoding, RoundTripEmpty) {
  expect_round_trip(Histogram());
}

TEST(HistogramEncoding, RoundTripSingleValue) {
  Histogram histogram;
  histogram.record(4242);
  expect_round_trip(histogram);
}

TEST(HistogramEncoding, RoundTripZeroOnly) {
  Histogram histogram;
  histogram.record(0, 3);
  expect_round_trip(histogram);
}

TEST(HistogramEncoding, RoundTripHighestAndClampedValues) {
  Histogram histogram;
  histogram.record(Histogram::kDefaultHighest);
  histogram.record(std::numeric_limits<int64_t>::max());
  histogram.record(-1);
  histogram.record(1);
  expect_round_trip(histogram);
}

TEST(HistogramEncoding, RoundTripManyValues) {
  Histogram histogram;
  for (int64_t value : mixed_values(31, 100'000)) histogram.record(value);
  expect_round_trip(histogram);
}

TEST(HistogramEncoding, RoundTripHugeCountsUseNineByteVarints) {
  Histogram histogram;
  histogram.record(1, uint64_t{1} << 33);
  histogram.record(2, uint64_t{1} << 62);  // ZigZag 2^63: all nine bytes
  histogram.record(3, 1);
  histogram.record(5000, (uint64_t{1} << 62) - 12345);
  expect_round_trip(histogram);
}

TEST(HistogramEncoding, RoundTripOtherLayouts) {
  Histogram coarse(1000, kHourInMicros, 2);
  for (int64_t value : mixed_values(32, 10'000)) coarse.record(value);
  expect_round_trip(coarse);
  Histogram whole_range(1, std::numeric_limits<int64_t>::max(), 2);
  whole_range.record(std::numeric_limits<int64_t>::max());
  whole_range.record(3);
  expect_round_trip(whole_range);
  Histogram fine(1, 1'000'000, 5);
  fine.record(999'999);
  fine.record(1);
  expect_round_trip(fine);
}

// Produced by the Python hdrh package (an independent implementation):
// HdrHistogram(1, 86400000000, 3) recording 1, 1000, 12345, 12345, 100000000.
TEST(HistogramEncoding, DecodesWhatHdrhEncoded) {
  const Histogram decoded = Histogram::decode_base64(
      "HISTFAAAACx4nJNpmSzMwMDAwwABzFCaEYhFZK8nMNh/gAowneZn2m3BcvM8IxMAjycHbw==");
  Histogram expected;
  for (int64_t value : {1, 1000, 12345, 12345, 100'000'000}) expected.record(value);
  EXPECT_EQ(decoded, expected);
  EXPECT_EQ(decoded.total_count(), 5u);
  EXPECT_EQ(decoded.min(), 1);
  EXPECT_EQ(decoded.max(), 100'007'935);
  EXPECT_EQ(decoded.value_at_percentile(40), 1000);
  EXPECT_EQ(decoded.value_at_percentile(50), 12351);
}

// ---- corrupt input -------------------------------------------------------------
// Helpers that build encodings by hand, independently of the code under test.

std::string base64_of(const std::vector<uint8_t>& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t available = std::min<size_t>(3, bytes.size() - i);
    uint32_t group = 0;
    for (size_t k = 0; k < 3; ++k) group = (group << 8) | (k < available ? bytes[i + k] : 0);
    for (size_t k = 0; k < 4; ++k) {
      text += k <= available ? kAlphabet[(group >> (18 - 6 * k)) & 0x3f] : '=';
    }
  }
  return text;
}

std::vector<uint8_t> bytes_of_base64(const std::string& text) {
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint8_t> bytes;
  uint32_t bits = 0;
  int bit_count = 0;
  for (char c : text) {
    if (c == '=') break;
    bits = (bits << 6) | static_cast<uint32_t>(kAlphabet.find(c));
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      bytes.push_back(static_cast<uint8_t>(bits >> bit_count));
    }
  }
  return bytes;
}

void append_u32(std::vector<uint8_t>& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

void append_u64(std::vector<uint8_t>& out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

void append_varint(std::vector<uint8_t>& out, int64_t value) {
  uint64_t bits = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  for (int i = 0; i < 8 && bits >= 0x80; ++i) {
    out.push_back(static_cast<uint8_t>(bits | 0x80));
    bits >>= 7;
  }
  out.push_back(static_cast<uint8_t>(bits));
}

struct PayloadFields {
  uint32_t cookie = 0x1c849313;
  uint32_t normalizing_index_offset = 0;
  uint32_t significant_digits = 1;
  uint64_t lowest = 1;
  uint64_t highest = 10;  // with 1 digit: one bucket, 32 counts
  double conversion_ratio = 1.0;
  std::vector<int64_t> counts;  // negative entries are zero runs, as on the wire
  int64_t length_adjustment = 0;
};

std::vector<uint8_t> payload_of(const PayloadFields& fields) {
  std::vector<uint8_t> counts;
  for (int64_t count : fields.counts) append_varint(counts, count);
  std::vector<uint8_t> payload;
  append_u32(payload, fields.cookie);
  append_u32(payload,
             static_cast<uint32_t>(static_cast<int64_t>(counts.size()) + fields.length_adjustment));
  append_u32(payload, fields.normalizing_index_offset);
  append_u32(payload, fields.significant_digits);
  append_u64(payload, fields.lowest);
  append_u64(payload, fields.highest);
  append_u64(payload, std::bit_cast<uint64_t>(fields.conversion_ratio));
  payload.insert(payload.end(), counts.begin(), counts.end());
  return payload;
}

std::vector<uint8_t> zlib_compress(const std::vector<uint8_t>& input) {
  uLongf size = compressBound(static_cast<uLong>(input.size()));
  std::vector<uint8_t> output(size);
  EXPECT_EQ(compress(output.data(), &size, input.data(), static_cast<uLong>(input.size())), Z_OK);
  output.resize(size);
  return output;
}

std::vector<uint8_t> framed(const std::vector<uint8_t>& compressed, uint32_t cookie = 0x1c849314) {
  std::vector<uint8_t> bytes;
  append_u32(bytes, cookie);
  append_u32(bytes, static_cast<uint32_t>(compressed.size()));
  bytes.insert(bytes.end(), compressed.begin(), compressed.end());
  return bytes;
}

std::string compressed_encoding(const PayloadFields& fields) {
  return base64_of(framed(zlib_compress(payload_of(fields))));
}

std::string decode_error(const std::string& text) {
  try {
    Histogram::decode_base64(text);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(decoded without error)";
}

TEST(HistogramDecoding, HandBuiltEncodingDecodes) {
  PayloadFields fields;
  fields.counts = {0, 3, -5, 2};  // index 1: 3, index 7: 2
  const Histogram decoded = Histogram::decode_base64(compressed_encoding(fields));
  Histogram expected(1, 10, 1);
  expected.record(1, 3);
  expected.record(7, 2);
  EXPECT_EQ(decoded, expected);
  EXPECT_EQ(decoded.min(), 1);
  EXPECT_EQ(decoded.max(), 7);
  // Also the uncompressed V2 form, and the cookies without the 0x10 nibble.
  EXPECT_EQ(Histogram::decode_base64(base64_of(payload_of(fields))), expected);
  fields.cookie = 0x1c849303;
  EXPECT_EQ(
      Histogram::decode_base64(base64_of(framed(zlib_compress(payload_of(fields)), 0x1c849304))),
      expected);
  // Surrounding whitespace, as from a pasted line, is tolerated.
  EXPECT_EQ(Histogram::decode_base64(" " + compressed_encoding(fields) + "\n"), expected);
}

TEST(HistogramEncoding, UncompressedIsTheBareV2PayloadAndReadsBackEqual) {
  Histogram histogram;
  for (int64_t value : mixed_values(43, 3000)) histogram.record(value);
  histogram.record(0, 4);  // a count at index 0 as well (the minimum is then 0)
  const std::string uncompressed = histogram.encode_base64(Histogram::Encoding::uncompressed);
  const std::string compressed = histogram.encode_base64();
  EXPECT_EQ(uncompressed.substr(0, 5), "HISTE");
  EXPECT_EQ(compressed.substr(0, 5), "HISTF");
  // The bytes are the payload compressed encodings carry behind their 8-byte frame.
  const std::vector<uint8_t> framed = bytes_of_base64(compressed);
  uLongf inflated_size = 1 << 20;
  std::vector<uint8_t> inflated(inflated_size);
  ASSERT_EQ(uncompress(inflated.data(), &inflated_size, framed.data() + 8, framed.size() - 8),
            Z_OK);
  inflated.resize(inflated_size);
  EXPECT_EQ(bytes_of_base64(uncompressed), inflated);
  for (const std::string& encoded : {uncompressed, compressed}) {
    const Histogram decoded = Histogram::decode_base64(encoded, Histogram::Layout{});
    EXPECT_EQ(decoded, histogram);
    EXPECT_EQ(decoded.total_count(), histogram.total_count());
    EXPECT_EQ(decoded.min(), histogram.min());
    EXPECT_EQ(decoded.max(), histogram.max());
    EXPECT_EQ(decoded.encode_base64(), compressed);
  }
  Histogram only_zeros;
  only_zeros.record(0, 3);
  const Histogram decoded =
      Histogram::decode_base64(only_zeros.encode_base64(Histogram::Encoding::uncompressed));
  EXPECT_EQ(decoded, only_zeros);
  EXPECT_EQ(decoded.min(), 0);
  EXPECT_EQ(decoded.max(), 0);
  EXPECT_EQ(decoded.total_count(), 3u);
  EXPECT_EQ(Histogram::decode_base64(Histogram().encode_base64(Histogram::Encoding::uncompressed)),
            Histogram());
}

TEST(HistogramDecoding, RejectsBadBase64) {
  EXPECT_NE(decode_error("").find("empty"), std::string::npos);
  EXPECT_NE(decode_error("HISTFAA").find("multiple of 4"), std::string::npos);
  EXPECT_NE(decode_error("HIST*AAA").find("invalid base64 character at offset 4"),
            std::string::npos);
  EXPECT_NE(decode_error("HI=TFAAA").find("padding"), std::string::npos);
  EXPECT_NE(decode_error("HISTFAA AAAA").find("invalid base64 character at offset 7"),
            std::string::npos);
}

TEST(HistogramDecoding, RejectsBadCookies) {
  PayloadFields fields;
  fields.counts = {1};
  EXPECT_NE(decode_error(base64_of(framed(zlib_compress(payload_of(fields)), 0x1c849301)))
                .find("unknown cookie 0x1c849301"),
            std::string::npos);
  EXPECT_NE(decode_error(base64_of(framed(zlib_compress(payload_of(fields)), 0x1c849394)))
                .find("unknown cookie"),
            std::string::npos);
  fields.cookie = 0x12345678;
  EXPECT_NE(decode_error(compressed_encoding(fields)).find("unknown payload cookie 0x12345678"),
            std::string::npos);
  EXPECT_NE(decode_error("AAAA").find("too short"), std::string::npos);
}

TEST(HistogramDecoding, RejectsLengthMismatches) {
  PayloadFields fields;
  fields.counts = {1, 2, 3};
  std::vector<uint8_t> bytes = framed(zlib_compress(payload_of(fields)));
  bytes.push_back(0);
  EXPECT_NE(decode_error(base64_of(bytes)).find("compressed bytes but"), std::string::npos);

  // The length field agrees with the bytes, but they hold more than the stream.
  std::vector<uint8_t> padded_stream = zlib_compress(payload_of(fields));
  padded_stream.push_back(0x55);
  EXPECT_NE(decode_error(base64_of(framed(padded_stream))).find("stray bytes"), std::string::npos);

  fields.length_adjustment = 1;
  EXPECT_NE(decode_error(compressed_encoding(fields)).find("bytes of counts but"),
            std::string::npos);
  fields.length_adjustment = -1;
  EXPECT_NE(decode_error(compressed_encoding(fields)).find("bytes of counts but"),
            std::string::npos);

  EXPECT_NE(decode_error(base64_of(framed({0x78, 0x9c, 0x01, 0x02}))).find("compressed data"),
            std::string::npos);
  EXPECT_NE(decode_error(base64_of(framed({1, 2, 3, 4, 5, 6, 7}))).find("corrupt"),
            std::string::npos);
}

TEST(HistogramDecoding, RejectsBadHeaderFields) {
  PayloadFields fields;
  fields.counts = {1};
  PayloadFields offset = fields;
  offset.normalizing_index_offset = 3;
  EXPECT_NE(decode_error(compressed_encoding(offset)).find("normalizing index offset"),
            std::string::npos);
  PayloadFields digits = fields;
  digits.significant_digits = 9;
  EXPECT_NE(decode_error(compressed_encoding(digits)).find("significant digits"),
            std::string::npos);
  PayloadFields lowest = fields;
  lowest.lowest = 0;
  EXPECT_NE(decode_error(compressed_encoding(lowest)).find("lowest discernible"),
            std::string::npos);
  PayloadFields highest = fields;
  highest.highest = 1;
  EXPECT_NE(decode_error(compressed_encoding(highest)).find("highest trackable"),
            std::string::npos);
  PayloadFields negative = fields;
  negative.highest = uint64_t{1} << 63;
  EXPECT_NE(decode_error(compressed_encoding(negative)).find("highest trackable"),
            std::string::npos);
  PayloadFields ratio = fields;
  ratio.conversion_ratio = 0.001;
  EXPECT_NE(decode_error(compressed_encoding(ratio)).find("conversion ratio"), std::string::npos);
}

TEST(HistogramDecoding, RefusesLayoutsTooLargeToAllocate) {
  PayloadFields fields;
  fields.significant_digits = 5;
  fields.highest = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  // Valid for HdrHistogram, but 6160384 counts (49 MB) from a 60-byte input.
  EXPECT_NE(decode_error(compressed_encoding(fields)).find("layout needs 6160384 counts"),
            std::string::npos);
  fields.highest = (uint64_t{1} << 48) - 1;  // the largest 5-digit layout under the cap
  EXPECT_EQ(decode_error(compressed_encoding(fields)), "(decoded without error)");
}

TEST(HistogramDecoding, RequiredLayoutIsCheckedBeforeAllocating) {
  // The largest layout the general decoder admits (2^48 at 5 digits, 32 MiB of
  // counts) is refused when the default layout is required, by its header alone.
  PayloadFields fields;
  fields.significant_digits = 5;
  fields.highest = (uint64_t{1} << 48) - 1;
  try {
    Histogram::decode_base64(compressed_encoding(fields), Histogram::Layout{});
    ADD_FAILURE() << "a non-default layout was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("is not the expected (1, 86400000000, 3)"),
              std::string::npos)
        << error.what();
  }
  Histogram recorded;
  recorded.record(1234, 5);
  EXPECT_EQ(Histogram::decode_base64(recorded.encode_base64(), Histogram::Layout{}), recorded);
}

TEST(HistogramDecoding, RejectsCountsOutsideTheArray) {
  PayloadFields fields;  // 32 counts
  fields.counts = {-32, 1};
  EXPECT_NE(decode_error(compressed_encoding(fields)).find("index 32 is beyond"),
            std::string::npos);
  fields.counts = {1, -32};
  EXPECT_NE(decode_error(compressed_encoding(fields)).find("runs past the counts array"),
            std::string::npos);
  fields.counts = {std::numeric_limits<int64_t>::min()};
  EXPECT_NE(decode_error(compressed_encoding(fields)).find("runs past"), std::string::npos);
  fields.counts = {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max(),
                   std::numeric_limits<int64_t>::max()};
  EXPECT_NE(decode_error(compressed_encoding(fields)).find("overflows"), std::string::npos);
  fields.counts = {-31, 1};  // the last index is fine
  EXPECT_EQ(decode_error(compressed_encoding(fields)), "(decoded without error)");
}

TEST(HistogramDecoding, RejectsTruncatedVarint) {
  PayloadFields fields;
  fields.counts = {5};
  std::vector<uint8_t> payload = payload_of(fields);
  payload.push_back(0x80);  // a continuation bit with nothing after it
  payload[7] += 1;          // keep the declared length honest
  EXPECT_NE(decode_error(base64_of(framed(zlib_compress(payload)))).find("middle of a varint"),
            std::string::npos);
}

std::string a_realistic_encoding() {
  Histogram histogram;
  for (int64_t value : mixed_values(41, 2000)) histogram.record(value);
  return histogram.encode_base64();
}

TEST(HistogramDecoding, EveryTruncationIsRejected) {
  const std::string encoded = a_realistic_encoding();
  for (size_t length = 0; length < encoded.size(); ++length) {
    EXPECT_THROW(Histogram::decode_base64(encoded.substr(0, length)), std::invalid_argument)
        << "base64 prefix of length " << length;
  }
  const std::vector<uint8_t> bytes = bytes_of_base64(encoded);
  for (size_t length = 0; length < bytes.size(); ++length) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<long>(length));
    EXPECT_THROW(Histogram::decode_base64(base64_of(prefix)), std::invalid_argument)
        << "byte prefix of length " << length;
  }
  // Truncated zlib streams behind an honest length field.
  const std::vector<uint8_t> compressed(bytes.begin() + 8, bytes.end());
  for (size_t length = 0; length < compressed.size(); ++length) {
    const std::vector<uint8_t> prefix(compressed.begin(),
                                      compressed.begin() + static_cast<long>(length));
    EXPECT_THROW(Histogram::decode_base64(base64_of(framed(prefix))), std::invalid_argument)
        << "compressed prefix of length " << length;
  }
}

TEST(HistogramDecoding, CorruptedBytesThrowOrDecodeButNeverCrash) {
  const std::vector<uint8_t> bytes = bytes_of_base64(a_realistic_encoding());
  size_t rejected = 0;
  for (size_t position = 0; position < bytes.size(); ++position) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::vector<uint8_t> corrupted = bytes;
      corrupted[position] ^= flip;
      try {
        Histogram::decode_base64(base64_of(corrupted));
      } catch (const std::invalid_argument&) {
        ++rejected;
      }
    }
  }
  // zlib's checksum catches nearly every change to the stream.
  EXPECT_GT(rejected, bytes.size() * 3 * 9 / 10);
}

TEST(HistogramDecoding, OneDecoderReadsEachEncodingAsAFreshDecodeDoes) {
  // One decoder (one zlib stream, reused buffers) over a sequence that mixes
  // sizes, both V2 forms, and failures in the middle of an inflate: each
  // answer is what a decode of its own gives.
  Histogram small;
  small.record(42);
  Histogram wide;
  for (int64_t v = 1; v < 5'000'000; v = v * 3 / 2 + 7)
    wide.record(v, static_cast<uint64_t>(v % 5 + 1));
  PayloadFields plain_fields;
  plain_fields.counts = {0, 3, 0, 0, 7};
  const std::string plain = base64_of(payload_of(plain_fields));
  // The wide encoding's zlib stream cut in half, framed as if whole.
  const std::vector<uint8_t> wide_framed = bytes_of_base64(wide.encode_base64());
  const std::vector<uint8_t> truncated(
      wide_framed.begin() + 8,
      wide_framed.begin() + 8 + static_cast<long>(wide_framed.size() - 8) / 2);
  const std::vector<std::string> sequence = {wide.encode_base64(),
                                             small.encode_base64(),
                                             base64_of(framed(truncated)),
                                             wide.encode_base64(),
                                             plain,
                                             "HIST*AAA",
                                             small.encode_base64(),
                                             Histogram().encode_base64(),
                                             a_realistic_encoding()};
  HistogramDecoder decoder;
  for (size_t i = 0; i < sequence.size(); ++i) {
    std::optional<Histogram> fresh;
    std::string fresh_error;
    try {
      fresh = Histogram::decode_base64(sequence[i]);
    } catch (const std::invalid_argument& e) {
      fresh_error = e.what();
    }
    try {
      const Histogram reused = decoder.decode_base64(sequence[i]);
      ASSERT_TRUE(fresh) << "input " << i << ": the fresh decode failed: " << fresh_error;
      EXPECT_EQ(reused, *fresh) << "input " << i;
      EXPECT_EQ(reused.total_count(), fresh->total_count()) << "input " << i;
      EXPECT_EQ(reused.min(), fresh->min()) << "input " << i;
      EXPECT_EQ(reused.max(), fresh->max()) << "input " << i;
      EXPECT_EQ(reused.encode_base64(), fresh->encode_base64()) << "input " << i;
    } catch (const std::invalid_argument& e) {
      EXPECT_FALSE(fresh) << "input " << i << ": only the reused decoder failed: " << e.what();
      EXPECT_EQ(e.what(), fresh_error) << "input " << i;
    }
  }
}

// ---- hot path --------------------------------------------------------------------

TEST(HistogramHotPath, RecordDoesNotAllocateAfterWarmUp) {
  {
    // The shared counter (allocation_counter.cpp) must see an allocation made
    // here, or a zero below would prove nothing.
    testing::AllocationCounter probe;
    auto vector = std::make_unique<std::vector<int>>(16);
    escape(vector.get());
    escape(vector->data());
    ASSERT_GE(probe.count(), 2u);
  }
  Histogram histogram;
  std::vector<int64_t> values = mixed_values(51, 100'000);
  values.push_back(-1);
  values.push_back(std::numeric_limits<int64_t>::max());
  uint64_t warm_up_allocations = 0;
  {
    testing::AllocationCounter counter;
    for (int64_t value : values) histogram.record(value);
    warm_up_allocations = counter.count();
  }
  // The chunk index once, then the chunk store growing geometrically up to
  // all 448 chunks of the layout (64 * 2^9 >= 28,672 counts): bounded by the
  // layout, not by the number of values.
  EXPECT_LE(warm_up_allocations, 1u + 10u);
  EXPECT_GE(warm_up_allocations, 1u);  // the probe above: the counter does count here

  // Values in the ranges already seen (another 100,000 from the same
  // distribution, as a run's steady state records) allocate nothing.
  const std::vector<int64_t> more = mixed_values(52, 100'000);
  for (int64_t value : more) histogram.record(value);  // warm-up for the tail this seed reaches
  testing::AllocationCounter counter;
  for (int64_t value : values) histogram.record(value);
  for (int64_t value : more) histogram.record(value);
  histogram.record(42, 1000);
  EXPECT_EQ(counter.count(), 0u);
  EXPECT_EQ(histogram.total_count(), 2 * (values.size() + more.size()) + 1000);
}

// ---- memory ----------------------------------------------------------------------
// Storage follows what a histogram holds (issue 12): the default layout is
// 28,672 counts, 224 KiB dense, and kept in chunks of 64 counts (512 bytes)
// behind an index of 448 offsets (1,792 bytes).

constexpr size_t kDenseDefaultBytes = 28'672 * 8;
constexpr size_t kChunkIndexBytes = 448 * 4;
constexpr size_t kChunkBytes = 64 * 8;

TEST(HistogramMemory, EmptyHistogramHoldsNoStorage) {
  Histogram empty;
  EXPECT_EQ(empty.dense_bytes(), kDenseDefaultBytes);
  EXPECT_EQ(empty.allocated_bytes(), 0u);
  EXPECT_EQ(Histogram(empty).allocated_bytes(), 0u);
  EXPECT_EQ(Histogram::decode_base64(empty.encode_base64()).allocated_bytes(), 0u);
  Histogram merged;
  merged.add(empty);
  EXPECT_EQ(merged.allocated_bytes(), 0u);
  EXPECT_EQ(merged, empty);
}

TEST(HistogramMemory, OneValueTakesOneChunk) {
  Histogram one;
  one.record(1500);
  EXPECT_EQ(one.allocated_bytes(), kChunkIndexBytes + kChunkBytes);
  EXPECT_EQ(Histogram::decode_base64(one.encode_base64()).allocated_bytes(),
            kChunkIndexBytes + kChunkBytes);
  one.reset();
  EXPECT_EQ(one.allocated_bytes(), 0u);
  EXPECT_EQ(one, Histogram());
}

TEST(HistogramMemory, TypicalLatenciesTakeAFractionOfTheDenseLayout) {
  // One stage of a run: 10,000 latencies around 5 ms, a slow tail, two
  // timeouts at 10 s.
  std::mt19937_64 random(12);
  std::lognormal_distribution<double> latency(std::log(5000.0), 0.6);
  Histogram typical;
  for (int i = 0; i < 10'000; ++i) typical.record(std::llround(latency(random)));
  typical.record(10'000'000, 2);
  // What the operator holds is decoded from a worker's result: exactly the
  // chunks with counts in them.
  const Histogram decoded = Histogram::decode_base64(typical.encode_base64());
  EXPECT_EQ(decoded, typical);
  size_t nonempty_counts = 0;
  decoded.for_each_nonempty([&](int64_t, int64_t, uint64_t) { ++nonempty_counts; });
  ASSERT_GE(decoded.allocated_bytes(), kChunkIndexBytes);
  const size_t chunk_bytes = decoded.allocated_bytes() - kChunkIndexBytes;
  EXPECT_EQ(chunk_bytes % kChunkBytes, 0u);
  const size_t chunks = chunk_bytes / kChunkBytes;
  EXPECT_LE(chunks, nonempty_counts);       // no chunk without a count in it
  EXPECT_GE(chunks * 64, nonempty_counts);  // and none counted twice
  EXPECT_LT(decoded.allocated_bytes(), kDenseDefaultBytes / 4) << decoded.allocated_bytes();
  // Recording grows the chunk store geometrically, so at most twice that.
  EXPECT_LE(typical.allocated_bytes(), kChunkIndexBytes + 2 * chunk_bytes);
}

TEST(HistogramMemory, MergeOfManyTakesTheUnionOfTheirChunks) {
  // A running merge of 1,000 workers' histograms holds what the union holds,
  // not 1,000 times anything.
  Histogram merged;
  Histogram all;
  for (uint64_t worker = 0; worker < 1'000; ++worker) {
    Histogram one;
    for (int64_t value : mixed_values(1'000 + worker, 200)) {
      one.record(value);
      all.record(value);
    }
    merged.add(Histogram::decode_base64(one.encode_base64()));
  }
  EXPECT_EQ(merged, all);
  EXPECT_EQ(merged.encode_base64(), all.encode_base64());
  EXPECT_LE(merged.allocated_bytes(), kChunkIndexBytes + 2 * (all.allocated_bytes()));
  EXPECT_LE(merged.allocated_bytes(), kChunkIndexBytes + kDenseDefaultBytes);
}

}  // namespace
}  // namespace kubeload
