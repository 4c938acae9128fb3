#pragma once
// A latency histogram with the bucket layout of HdrHistogram, so that it
// serializes to (and from) HdrHistogram's V2 compressed base64 form and merges
// exactly. Recording is a bucket increment plus the min/max update: no loops.
//
// The counts are stored sparsely, in chunks of kChunkLength consecutive
// counts allocated when a count in them is first recorded: the default
// layout has 28,672 counts (224 KiB dense), an empty histogram holds no
// storage at all, and a typical latency histogram a few dozen chunks.
// Recording allocates only when it touches a chunk for the first time, so
// after warm-up (values in ranges seen before) it does not allocate, and over
// a histogram's life it allocates at most a few dozen times whatever the
// number of values (the chunk store grows geometrically).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kubeload {

class HistogramDecoder;

class Histogram {
 public:
  // Latencies are recorded in microseconds: 1 us to 24 h at 3 significant digits.
  static constexpr int64_t kDefaultLowest = 1;
  static constexpr int64_t kDefaultHighest = int64_t{24} * 3600 * 1000 * 1000;
  static constexpr int kDefaultSignificantDigits = 3;

  explicit Histogram(int64_t lowest_discernible = kDefaultLowest,
                     int64_t highest_trackable = kDefaultHighest,
                     int significant_digits = kDefaultSignificantDigits);
  Histogram(const Histogram& other) = default;
  Histogram& operator=(const Histogram& other) = default;
  Histogram(Histogram&&) noexcept = default;
  Histogram& operator=(Histogram&&) noexcept = default;
  ~Histogram() = default;

  // Values below 0 count as 0; values above highest_trackable() are clamped
  // to it (still counted, so totals stay exact).
  void record(int64_t value) noexcept { record(value, 1); }
  void record(int64_t value, uint64_t count) noexcept;

  // Exact merge. Throws std::invalid_argument when the layouts differ; on
  // any exception (std::bad_alloc included) this histogram is unchanged.
  void add(const Histogram& other);
  // Empties the histogram and releases its storage.
  void reset() noexcept;

  // Heap bytes held for the counts (capacity, not just what is in use):
  // 0 when nothing was ever recorded.
  size_t allocated_bytes() const noexcept;
  // The same layout stored densely, for comparison: counts_length() * 8.
  size_t dense_bytes() const noexcept;

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

  // HdrHistogram's V2 encodings, base64. `compressed` ("HISTF...", cookie
  // base 0x1c849304) is what HdrHistogram's tools and logs read; `uncompressed`
  // is the bare V2 payload (encodeIntoByteBuffer's, "HISTE...", cookie base
  // 0x1c849303), a third to a half longer for a run's latency histograms
  // and read without zlib: the encoding a worker sends its final result in,
  // because inflating was a fifth of the operator's CPU in its last pass
  // over a thousand of them (the pass's CPU 0.45 -> 0.36 s without it).
  // Like HdrHistogram's Java and C code we write the cookies with the 0x10
  // word-size nibble set, and readers mask it.
  enum class Encoding { compressed, uncompressed };
  std::string encode_base64(Encoding encoding = Encoding::compressed) const;
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
  // Same lowest, highest and digits: what add() requires.
  bool same_layout(const Histogram& other) const noexcept;

  // Bucket iteration, for reports and tests: calls f(value_equivalent_low,
  // value_equivalent_high, count) for every non-empty bucket in value order.
  template <typename F>
  void for_each_nonempty(F&& f) const {
    for_each_nonzero_count([&](int32_t index, uint64_t count) {
      const int64_t low = value_from_index(index);
      f(low, highest_equivalent_value(low), count);
    });
  }

  int64_t lowest_equivalent_value(int64_t value) const noexcept;
  int64_t highest_equivalent_value(int64_t value) const noexcept;
  // Midpoint of the value's bucket: what mean() and stddev() weigh each count by.
  int64_t median_equivalent_value(int64_t value) const noexcept;

 private:
  static constexpr int32_t kChunkMagnitude = 6;
  static constexpr int32_t kChunkLength = int32_t{1} << kChunkMagnitude;
  static constexpr int32_t kNoChunk = -1;

  // Decoding takes the layout from untrusted bytes, so it allocates under a
  // tighter cap than a layout chosen in code.
  Histogram(int64_t lowest_discernible, int64_t highest_trackable, int significant_digits,
            int64_t max_counts_length);
  friend class HistogramDecoder;
  int32_t bucket_index_of(int64_t value) const noexcept;
  int32_t sub_bucket_index_of(int64_t value, int32_t bucket_index) const noexcept;
  int32_t counts_index_for(int64_t value) const noexcept;
  int64_t value_from_index(int32_t index) const noexcept;
  uint64_t equivalent_range_size(int64_t value) const noexcept;

  int32_t chunk_count() const noexcept {
    return (counts_length_ + kChunkLength - 1) >> kChunkMagnitude;
  }
  // The kChunkLength counts of a chunk, or nullptr when none was recorded there.
  const uint64_t* chunk_counts(int32_t chunk) const noexcept {
    if (chunk_offsets_.empty() || chunk_offsets_[chunk] == kNoChunk) return nullptr;
    return chunks_.data() + chunk_offsets_[chunk];
  }
  uint64_t count_at(int32_t index) const noexcept {
    const uint64_t* counts = chunk_counts(index >> kChunkMagnitude);
    return counts == nullptr ? 0 : counts[index & (kChunkLength - 1)];
  }
  // The count at `index`, allocating its chunk (zeroed) when it has none.
  uint64_t& count_slot(int32_t index);
  // Calls f(index, count) for every non-zero count in index order.
  template <typename F>
  void for_each_nonzero_count(F&& f) const {
    for (int32_t chunk = 0; chunk < chunk_count(); ++chunk) {
      const uint64_t* counts = chunk_counts(chunk);
      if (counts == nullptr) continue;
      const int32_t base = chunk << kChunkMagnitude;
      for (int32_t i = 0; i < kChunkLength; ++i) {
        if (counts[i] != 0) f(base + i, counts[i]);
      }
    }
  }

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
  // chunk_offsets_[c] is where the counts of indices [c * kChunkLength,
  // (c + 1) * kChunkLength) start in chunks_, or kNoChunk; empty until the
  // first count. Chunks sit in chunks_ in the order they were first touched.
  std::vector<int32_t> chunk_offsets_;
  std::vector<uint64_t> chunks_;
};

// Decodes as Histogram::decode_base64 does, with one zlib stream and one set of
// buffers kept from one histogram to the next: a worker's result carries
// dozens of histograms, and the pass that writes a run's final status reads
// a thousand results.
class HistogramDecoder {
 public:
  HistogramDecoder();
  ~HistogramDecoder();
  HistogramDecoder(const HistogramDecoder&) = delete;
  HistogramDecoder& operator=(const HistogramDecoder&) = delete;

  Histogram decode_base64(std::string_view text);
  Histogram decode_base64(std::string_view text, const Histogram::Layout& required);

 private:
  Histogram decode(std::string_view text, const std::optional<Histogram::Layout>& required);
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
};

}  // namespace kubeload
