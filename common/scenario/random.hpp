#pragma once
// The random numbers of ${random(A,B)} and ${uuid}: one generator per virtual
// user or worker thread, owned by the caller, seeded by it, so a test can
// repeat a run's draws. Not for secrets: the values only have to differ.

#include <cstdint>

namespace kubeload::scenario {

// SplitMix64: one 64-bit state word, a few multiplies per draw, every seed
// (0 included) good. Statistically fine for load test data, and small enough
// to keep one per virtual user.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [low, high] (low <= high), without modulo bias: Lemire's
  // multiply-and-reject.
  std::int64_t between(std::int64_t low, std::int64_t high) {
    const std::uint64_t span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    if (span == UINT64_MAX) return static_cast<std::int64_t>(next());
    const std::uint64_t range = span + 1;
    const std::uint64_t threshold = (0 - range) % range;
    for (;;) {
      const unsigned __int128 product = static_cast<unsigned __int128>(next()) * range;
      if (static_cast<std::uint64_t>(product) >= threshold) {
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) +
                                         static_cast<std::uint64_t>(product >> 64));
      }
    }
  }

 private:
  std::uint64_t state_;
};

}  // namespace kubeload::scenario
