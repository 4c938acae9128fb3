#pragma once
// A latency histogram with the bucket layout of HdrHistogram, so that it
// serializes to (and from) HdrHistogram's V2 compressed base64 form and merges
// exactly. Recording is a bucket increment plus the min/max update: no
// allocation, no loops.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kubeload {

class Histogram {
 public:
  // Latencies are recorded in microseconds: 1 us to 24 h at 3 significant digits.
  static constexpr int64_t kDefaultLowest = 1;
  static constexpr int64_t kDefaultHighest = int64_t{24} * 3600 * 1000 * 1000;
  static constexpr int kDefaultSignificantDigits = 3;

  explicit Histogram(int64_t lowest_discernible = kDefaultLowest,
                     int64_t highest_trackable = kDefaultHighest,
                     int significant_digits = kDefaultSignificantDigits);
  Histogram(const Histogram& other);
  Histogram& operator=(const Histogram& other);
  Histogram(Histogram&&) noexcept = default;
  Histogram& operator=(Histogram&&) noexcept = default;
  ~Histogram() = default;

  // Values below 0 count as 0; values above highest_trackable() are clamped
  // to it (still counted, so totals stay exact).
  void record(int64_t value) noexcept { record(value, 1); }
  void record(int64_t value, uint64_t count) noexcept;

  // Exact merge. Throws std::invalid_argument when the layouts differ.
  void add(const Histogram& other);
  void reset() noexcept;

  uint64_t total_count() const noexcept { return total_count_; }
  int64_t min() const noexcept;  // 0 when empty
  int64_t max() const noexcept;  // 0 when empty; highest equivalent value of the top bucket
  double mean() const noexcept;
  double stddev() const noexcept;
  // HdrHistogram's getValueAtPercentile: percentile in [0, 100].
  int64_t value_at_percentile(double percentile) const noexcept;

  int64_t lowest_discernible() const noexcept { return lowest_discernible_; }
  int64_t highest_trackable() const noexcept { return highest_trackable_; }
  int significant_digits() const noexcept { return significant_digits_; }

  // Layout as HdrHistogram derives it, exposed so tests can pin it against the
  // reference implementation's numbers.
  int32_t unit_magnitude() const noexcept { return unit_magnitude_; }
  int32_t sub_bucket_count() const noexcept { return sub_bucket_count_; }
  int32_t bucket_count() const noexcept { return bucket_count_; }
  int32_t counts_length() const noexcept { return counts_length_; }

  // HdrHistogram V2 compressed encoding, base64 ("HISTF..."). The cookie base
  // is 0x1c849304; like HdrHistogram's Java and C code we write it with the
  // 0x10 word-size nibble set (0x1c849314), and readers mask that nibble.
  std::string encode_base64() const;
  // Accepts the compressed form and the plain V2 payload (cookie base
  // 0x1c849303), either nibble, surrounding whitespace ignored. Throws
  // std::invalid_argument saying what is wrong on malformed input, and
  // refuses layouts over 2^22 counts rather than allocate for them.
  static Histogram decode_base64(std::string_view text);
  // As above, and refuses, before allocating anything for the counts, an
  // encoding whose layout is not `lowest`/`highest`/`significant_digits`: what
  // the operator reads from a worker can only be what a worker records.
  struct Layout {
    int64_t lowest = kDefaultLowest;
    int64_t highest = kDefaultHighest;
    int significant_digits = kDefaultSignificantDigits;
  };
  static Histogram decode_base64(std::string_view text, const Layout& required);

  bool operator==(const Histogram& other) const noexcept;

  // Bucket iteration, for reports and tests: calls f(value_equivalent_low,
  // value_equivalent_high, count) for every non-empty bucket in value order.
  template <typename F>
  void for_each_nonempty(F&& f) const {
    for (int32_t i = 0; i < counts_length_; ++i) {
      if (counts_[i] != 0) {
        const int64_t low = value_from_index(i);
        f(low, highest_equivalent_value(low), counts_[i]);
      }
    }
  }

  int64_t lowest_equivalent_value(int64_t value) const noexcept;
  int64_t highest_equivalent_value(int64_t value) const noexcept;
  // Midpoint of the value's bucket: what mean() and stddev() weigh each count by.
  int64_t median_equivalent_value(int64_t value) const noexcept;

 private:
  // Decoding takes the layout from untrusted bytes, so it allocates under a
  // tighter cap than a layout chosen in code.
  Histogram(int64_t lowest_discernible, int64_t highest_trackable, int significant_digits,
            int64_t max_counts_length);
  static Histogram decode(std::string_view text, const std::optional<Layout>& required);
  int32_t bucket_index_of(int64_t value) const noexcept;
  int32_t sub_bucket_index_of(int64_t value, int32_t bucket_index) const noexcept;
  int32_t counts_index_for(int64_t value) const noexcept;
  int64_t value_from_index(int32_t index) const noexcept;
  uint64_t equivalent_range_size(int64_t value) const noexcept;
  bool same_layout(const Histogram& other) const noexcept;
  // Recomputes total, min and max from the counts, as after a decode.
  void establish_tracking_from_counts();

  int64_t lowest_discernible_;
  int64_t highest_trackable_;
  int significant_digits_;
  int32_t unit_magnitude_;
  int32_t sub_bucket_half_count_magnitude_;
  int32_t sub_bucket_count_;
  int32_t sub_bucket_half_count_;
  int64_t sub_bucket_mask_;
  int32_t bucket_count_;
  int32_t counts_length_;
  int32_t leading_zero_count_base_;
  uint64_t total_count_ = 0;
  int64_t min_non_zero_value_;
  int64_t max_value_ = 0;
  std::unique_ptr<uint64_t[]> counts_;
};

}  // namespace kubeload
