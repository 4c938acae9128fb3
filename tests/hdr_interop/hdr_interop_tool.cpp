// Our side of the HdrHistogram interoperability check (see check.py):
//   hdr_interop_tool encode SEED N   record N pseudo-random latencies, print JSON
//   hdr_interop_tool decode BASE64   decode an encoding, print the same JSON
// The JSON carries the encodings, the summary statistics and every non-empty
// bucket, so the checker can compare both implementations value by value.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "kubeload/histogram.hpp"

namespace {

constexpr std::string_view kUsage =
    "usage: hdr_interop_tool encode SEED N\n"
    "       hdr_interop_tool decode BASE64\n";

// Keys are the decimal spellings check.py uses, so both sides parse the same text.
constexpr std::pair<const char*, double> kPercentiles[] = {
    {"0", 0.0},     {"50", 50.0},     {"90", 90.0},  {"99", 99.0},
    {"99.9", 99.9}, {"99.99", 99.99}, {"100", 100.0}};

uint64_t parse_unsigned(std::string_view text, const char* what) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument(std::string(what) +
                                " is not a non-negative integer: " + std::string(text));
  }
  return value;
}

// Mostly log-normal latencies around 2 ms, with some zeros, some sub-unit
// values and rare outliers beyond 24 h, so clamping is exercised too.
kubeload::Histogram record_pseudo_random(uint64_t seed, uint64_t count) {
  std::mt19937_64 random(seed);
  std::lognormal_distribution<double> typical(std::log(2000.0), 1.2);
  std::uniform_int_distribution<int64_t> outlier(1'000'000'000, 100'000'000'000);
  std::uniform_int_distribution<int> kind(0, 999);
  kubeload::Histogram histogram;
  for (uint64_t i = 0; i < count; ++i) {
    const int which = kind(random);
    if (which == 0) {
      histogram.record(0);
    } else if (which == 1) {
      histogram.record(outlier(random));
    } else {
      histogram.record(std::llround(typical(random)));
    }
  }
  return histogram;
}

nlohmann::json describe(const kubeload::Histogram& histogram) {
  nlohmann::json percentiles = nlohmann::json::object();
  for (const auto& [key, percentile] : kPercentiles) {
    percentiles[key] = histogram.value_at_percentile(percentile);
  }
  nlohmann::json buckets = nlohmann::json::array();
  histogram.for_each_nonempty([&buckets](int64_t low, int64_t, uint64_t count) {
    buckets.push_back({low, count});
  });
  return {
      {"encoded", histogram.encode_base64()},
      // What a worker sends the operator: the bare V2 payload.
      {"uncompressed", histogram.encode_base64(kubeload::Histogram::Encoding::uncompressed)},
      {"lowest", histogram.lowest_discernible()},
      {"highest", histogram.highest_trackable()},
      {"significant_digits", histogram.significant_digits()},
      {"total_count", histogram.total_count()},
      {"min", histogram.min()},
      {"max", histogram.max()},
      {"mean", histogram.mean()},
      {"stddev", histogram.stddev()},
      {"percentiles", percentiles},
      {"buckets", buckets},
  };
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string_view command = argc > 1 ? argv[1] : "";
    if (command == "encode" && argc == 4) {
      const uint64_t seed = parse_unsigned(argv[2], "SEED");
      const uint64_t count = parse_unsigned(argv[3], "N");
      std::cout << describe(record_pseudo_random(seed, count)).dump() << '\n';
      return 0;
    }
    if (command == "decode" && argc == 3) {
      std::cout << describe(kubeload::Histogram::decode_base64(argv[2])).dump() << '\n';
      return 0;
    }
    std::cerr << kUsage;
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "hdr_interop_tool: " << error.what() << '\n';
    return 1;
  }
}
