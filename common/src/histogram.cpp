#include "kubeload/histogram.hpp"

#include "kubeload/base64.hpp"
#include "kubeload/zlib.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kubeload {
namespace {

// HdrHistogram writes the cookie base with 0x10 in the "word size" nibble;
// readers mask that nibble off, so both spellings are accepted.
constexpr uint32_t kV2EncodingCookieBase = 0x1c849303;
constexpr uint32_t kV2CompressedCookieBase = 0x1c849304;
constexpr uint32_t kCookieWordSizeNibble = 0x10;
constexpr uint32_t kCookieWordSizeMask = 0xf0;

constexpr size_t kCompressedHeaderBytes = 8;  // cookie + compressed length
constexpr size_t kPayloadHeaderBytes = 40;    // see write_payload_header
constexpr size_t kMaxVarintBytes = 9;

// Even 5 significant digits over the whole int64 range need only about 6.2 M
// counts, so this cap never refuses a layout chosen in code.
constexpr int64_t kMaxCountsLength = int64_t{1} << 24;
// A decoded layout sizes an allocation from untrusted bytes: 4 M counts
// (32 MiB) still admits every layout of up to 4 digits, and 5 digits up to 2^48.
constexpr int64_t kMaxDecodedCountsLength = int64_t{1} << 22;

[[noreturn]] void fail(const std::string& reason) {
  throw std::invalid_argument("histogram encoding: " + reason);
}

std::string hex32(uint32_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) text += kDigits[(value >> shift) & 0xf];
  return text;
}

// ---- big-endian fields -------------------------------------------------

void put_u32(std::vector<uint8_t>& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

void put_u64(std::vector<uint8_t>& out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

void overwrite_u32(std::vector<uint8_t>& out, size_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[offset + i] = static_cast<uint8_t>(value >> (24 - 8 * i));
}

uint32_t get_u32(const uint8_t* bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | bytes[i];
  return value;
}

uint64_t get_u64(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | bytes[i];
  return value;
}

// ---- ZigZag LEB128, HdrHistogram flavour --------------------------------
// At most 9 bytes: eight 7-bit groups, then a ninth byte that carries the
// remaining 8 bits whole (it has no continuation bit).

void put_zigzag(std::vector<uint8_t>& out, int64_t value) {
  uint64_t bits = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  for (size_t group = 0; group + 1 < kMaxVarintBytes; ++group) {
    if (bits < 0x80) {
      out.push_back(static_cast<uint8_t>(bits));
      return;
    }
    out.push_back(static_cast<uint8_t>((bits & 0x7f) | 0x80));
    bits >>= 7;
  }
  out.push_back(static_cast<uint8_t>(bits));
}

int64_t get_zigzag(const uint8_t*& cursor, const uint8_t* end) {
  uint64_t bits = 0;
  for (size_t group = 0; group < kMaxVarintBytes; ++group) {
    if (cursor == end) fail("counts end in the middle of a varint");
    const uint8_t byte = *cursor++;
    if (group + 1 == kMaxVarintBytes) {
      bits |= static_cast<uint64_t>(byte) << 56;
      break;
    }
    bits |= static_cast<uint64_t>(byte & 0x7f) << (7 * group);
    if ((byte & 0x80) == 0) break;
  }
  return static_cast<int64_t>(bits >> 1) ^ -static_cast<int64_t>(bits & 1);
}

}  // namespace

Histogram::Histogram(int64_t lowest_discernible, int64_t highest_trackable, int significant_digits)
    : Histogram(lowest_discernible, highest_trackable, significant_digits, kMaxCountsLength) {}

Histogram::Histogram(int64_t lowest_discernible, int64_t highest_trackable, int significant_digits,
                     int64_t max_counts_length)
    : lowest_discernible_(lowest_discernible),
      highest_trackable_(highest_trackable),
      significant_digits_(significant_digits) {
  if (lowest_discernible < 1) {
    throw std::invalid_argument("histogram: lowest discernible value must be >= 1");
  }
  if (significant_digits < 0 || significant_digits > 5) {
    throw std::invalid_argument("histogram: significant digits must be in [0, 5]");
  }
  if (highest_trackable / 2 < lowest_discernible) {
    throw std::invalid_argument(
        "histogram: highest trackable value must be >= 2 * lowest discernible");
  }

  // ceil(log2(2 * 10^digits)), in integers so no rounding can move it
  // (HdrHistogram's largestValueWithSingleUnitResolution).
  int64_t single_unit_resolution = 2;
  for (int i = 0; i < significant_digits; ++i) single_unit_resolution *= 10;
  const int sub_bucket_count_magnitude =
      std::bit_width(static_cast<uint64_t>(single_unit_resolution - 1));

  unit_magnitude_ = 63 - std::countl_zero(static_cast<uint64_t>(lowest_discernible));
  sub_bucket_half_count_magnitude_ = std::max(sub_bucket_count_magnitude, 1) - 1;
  if (unit_magnitude_ + sub_bucket_half_count_magnitude_ > 61) {
    throw std::invalid_argument(
        "histogram: lowest discernible value too large for the significant digits");
  }
  sub_bucket_count_ = int32_t{1} << (sub_bucket_half_count_magnitude_ + 1);
  sub_bucket_half_count_ = sub_bucket_count_ / 2;
  sub_bucket_mask_ = (int64_t{sub_bucket_count_} - 1) << unit_magnitude_;
  leading_zero_count_base_ = 64 - unit_magnitude_ - sub_bucket_half_count_magnitude_ - 1;

  int64_t smallest_untrackable = int64_t{sub_bucket_count_} << unit_magnitude_;
  int32_t buckets_needed = 1;
  while (smallest_untrackable <= highest_trackable) {
    if (smallest_untrackable > std::numeric_limits<int64_t>::max() / 2) {
      ++buckets_needed;  // the next doubling would overflow; this bucket reaches the top
      break;
    }
    smallest_untrackable <<= 1;
    ++buckets_needed;
  }
  bucket_count_ = buckets_needed;

  const int64_t counts_length = (int64_t{bucket_count_} + 1) * sub_bucket_half_count_;
  if (counts_length > max_counts_length) {
    throw std::invalid_argument("histogram: layout needs " + std::to_string(counts_length) +
                                " counts, more than the " + std::to_string(max_counts_length) +
                                " allowed");
  }
  counts_length_ = static_cast<int32_t>(counts_length);
  min_non_zero_value_ = std::numeric_limits<int64_t>::max();
}

uint64_t& Histogram::count_slot(int32_t index) {
  if (chunk_offsets_.empty()) chunk_offsets_.assign(static_cast<size_t>(chunk_count()), kNoChunk);
  int32_t& offset = chunk_offsets_[static_cast<size_t>(index >> kChunkMagnitude)];
  if (offset == kNoChunk) {
    const size_t at = chunks_.size();
    chunks_.resize(at + kChunkLength);  // zeroed; geometric growth keeps this rare
    offset = static_cast<int32_t>(at);
  }
  return chunks_[static_cast<size_t>(offset + (index & (kChunkLength - 1)))];
}

size_t Histogram::allocated_bytes() const noexcept {
  return chunk_offsets_.capacity() * sizeof(int32_t) + chunks_.capacity() * sizeof(uint64_t);
}

size_t Histogram::dense_bytes() const noexcept {
  return static_cast<size_t>(counts_length_) * sizeof(uint64_t);
}

int32_t Histogram::bucket_index_of(int64_t value) const noexcept {
  return leading_zero_count_base_ -
         std::countl_zero(static_cast<uint64_t>(value | sub_bucket_mask_));
}

int32_t Histogram::sub_bucket_index_of(int64_t value, int32_t bucket_index) const noexcept {
  return static_cast<int32_t>(value >> (bucket_index + unit_magnitude_));
}

int32_t Histogram::counts_index_for(int64_t value) const noexcept {
  const int32_t bucket_index = bucket_index_of(value);
  const int32_t sub_bucket_index = sub_bucket_index_of(value, bucket_index);
  // The first bucket uses all its sub-buckets, later ones only the upper half
  // (the lower half is covered by the previous bucket at finer resolution).
  const int32_t bucket_base_index = (bucket_index + 1) << sub_bucket_half_count_magnitude_;
  return bucket_base_index + (sub_bucket_index - sub_bucket_half_count_);
}

int64_t Histogram::value_from_index(int32_t index) const noexcept {
  int32_t bucket_index = (index >> sub_bucket_half_count_magnitude_) - 1;
  int32_t sub_bucket_index = (index & (sub_bucket_half_count_ - 1)) + sub_bucket_half_count_;
  if (bucket_index < 0) {
    sub_bucket_index -= sub_bucket_half_count_;
    bucket_index = 0;
  }
  return static_cast<int64_t>(sub_bucket_index) << (bucket_index + unit_magnitude_);
}

uint64_t Histogram::equivalent_range_size(int64_t value) const noexcept {
  const int32_t bucket_index = bucket_index_of(value);
  const int32_t sub_bucket_index = sub_bucket_index_of(value, bucket_index);
  const int32_t adjusted_bucket =
      sub_bucket_index >= sub_bucket_count_ ? bucket_index + 1 : bucket_index;
  return uint64_t{1} << (unit_magnitude_ + adjusted_bucket);
}

int64_t Histogram::lowest_equivalent_value(int64_t value) const noexcept {
  value = std::max<int64_t>(value, 0);
  const int32_t bucket_index = bucket_index_of(value);
  const int32_t sub_bucket_index = sub_bucket_index_of(value, bucket_index);
  return static_cast<int64_t>(sub_bucket_index) << (bucket_index + unit_magnitude_);
}

int64_t Histogram::highest_equivalent_value(int64_t value) const noexcept {
  value = std::max<int64_t>(value, 0);
  // Unsigned: the top bucket ends exactly at INT64_MAX, so low + size is 2^63.
  const uint64_t next_non_equivalent =
      static_cast<uint64_t>(lowest_equivalent_value(value)) + equivalent_range_size(value);
  return static_cast<int64_t>(next_non_equivalent - 1);
}

int64_t Histogram::median_equivalent_value(int64_t value) const noexcept {
  value = std::max<int64_t>(value, 0);
  return static_cast<int64_t>(static_cast<uint64_t>(lowest_equivalent_value(value)) +
                              (equivalent_range_size(value) >> 1));
}

void Histogram::record(int64_t value, uint64_t count) noexcept {
  if (count == 0) return;
  value = std::clamp<int64_t>(value, 0, highest_trackable_);
  // Allocates only for a chunk touched the first time; std::bad_alloc there
  // ends the process, like any allocation failure on the hot path.
  count_slot(counts_index_for(value)) += count;
  total_count_ += count;
  if (value > max_value_) max_value_ = value;
  if (value != 0 && value < min_non_zero_value_) min_non_zero_value_ = value;
}

bool Histogram::same_layout(const Histogram& other) const noexcept {
  return lowest_discernible_ == other.lowest_discernible_ &&
         highest_trackable_ == other.highest_trackable_ &&
         significant_digits_ == other.significant_digits_;
}

void Histogram::add(const Histogram& other) {
  if (!same_layout(other)) {
    throw std::invalid_argument(
        "histogram add: layouts differ (lowest/highest/digits " +
        std::to_string(lowest_discernible_) + "/" + std::to_string(highest_trackable_) + "/" +
        std::to_string(significant_digits_) + " vs " + std::to_string(other.lowest_discernible_) +
        "/" + std::to_string(other.highest_trackable_) + "/" +
        std::to_string(other.significant_digits_) + ")");
  }
  if (!other.chunk_offsets_.empty()) {
    // Everything that can throw happens before the first count changes: the
    // chunk index and room for the chunks this histogram lacks.
    size_t missing_chunks = 0;
    for (int32_t chunk = 0; chunk < chunk_count(); ++chunk) {
      if (other.chunk_counts(chunk) != nullptr && chunk_counts(chunk) == nullptr) ++missing_chunks;
    }
    if (chunk_offsets_.empty()) chunk_offsets_.assign(static_cast<size_t>(chunk_count()), kNoChunk);
    const size_t needed = chunks_.size() + missing_chunks * kChunkLength;
    // Geometric, as push_back grows: a running merge of many histograms that
    // each add a chunk or two must not copy the whole store every time.
    if (needed > chunks_.capacity()) chunks_.reserve(std::max(needed, 2 * chunks_.capacity()));
    for (int32_t chunk = 0; chunk < chunk_count(); ++chunk) {
      if (other.chunk_counts(chunk) == nullptr) continue;
      uint64_t* mine = &count_slot(chunk << kChunkMagnitude);  // within the reserved capacity
      const uint64_t* theirs = other.chunk_counts(chunk);  // after count_slot: other may be *this
      for (int32_t i = 0; i < kChunkLength; ++i) mine[i] += theirs[i];
    }
  }
  total_count_ += other.total_count_;
  max_value_ = std::max(max_value_, other.max_value_);
  min_non_zero_value_ = std::min(min_non_zero_value_, other.min_non_zero_value_);
}

void Histogram::reset() noexcept {
  // Move-assigned, not cleared: clear() would keep the capacity.
  chunk_offsets_ = std::vector<int32_t>();
  chunks_ = std::vector<uint64_t>();
  total_count_ = 0;
  min_non_zero_value_ = std::numeric_limits<int64_t>::max();
  max_value_ = 0;
}

int64_t Histogram::min() const noexcept {
  if (total_count_ == 0 || count_at(0) != 0) return 0;
  return lowest_equivalent_value(min_non_zero_value_);
}

int64_t Histogram::max() const noexcept {
  return max_value_ == 0 ? 0 : highest_equivalent_value(max_value_);
}

double Histogram::mean() const noexcept {
  if (total_count_ == 0) return 0.0;
  double weighted_sum = 0.0;
  for_each_nonzero_count([&](int32_t index, uint64_t count) {
    weighted_sum += static_cast<double>(median_equivalent_value(value_from_index(index))) *
                    static_cast<double>(count);
  });
  return weighted_sum / static_cast<double>(total_count_);
}

double Histogram::stddev() const noexcept {
  if (total_count_ == 0) return 0.0;
  const double average = mean();
  double squared_deviation_sum = 0.0;
  for_each_nonzero_count([&](int32_t index, uint64_t count) {
    const double deviation =
        static_cast<double>(median_equivalent_value(value_from_index(index))) - average;
    squared_deviation_sum += deviation * deviation * static_cast<double>(count);
  });
  return std::sqrt(squared_deviation_sum / static_cast<double>(total_count_));
}

int64_t Histogram::value_at_percentile(double percentile) const noexcept {
  if (total_count_ == 0) return 0;
  if (std::isnan(percentile)) percentile = 0.0;
  // One ulp down first, so 99.9% of 1000 does not round up to rank 1000
  // through floating-point noise; then clamp to [0, 100].
  const double requested =
      std::clamp(std::nextafter(percentile, -std::numeric_limits<double>::infinity()), 0.0, 100.0);
  const double fractional_rank = requested / 100.0 * static_cast<double>(total_count_);
  // Past 2^53 recorded values the double rank is inexact and could stop short
  // of the last bucket, so the top percentile is pinned to the last value.
  const uint64_t rank =
      percentile >= 100.0 ? total_count_
                          : std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(fractional_rank)),
                                                 1, total_count_);
  // Chunks never allocated hold zeros, which never move the running total.
  uint64_t running_total = 0;
  for (int32_t chunk = 0; chunk < chunk_count(); ++chunk) {
    const uint64_t* counts = chunk_counts(chunk);
    if (counts == nullptr) continue;
    for (int32_t i = 0; i < kChunkLength; ++i) {
      running_total += counts[i];
      if (running_total >= rank) {
        const int64_t value = value_from_index((chunk << kChunkMagnitude) + i);
        return percentile <= 0.0 ? lowest_equivalent_value(value) : highest_equivalent_value(value);
      }
    }
  }
  return 0;
}

bool Histogram::operator==(const Histogram& other) const noexcept {
  // min and max follow from the counts (up to HdrHistogram's own rounding
  // after a decode), so the layout and the counts are the whole state.
  if (!same_layout(other) || total_count_ != other.total_count_) return false;
  // A chunk that was never allocated holds zeros, as does one allocated and
  // then merged with zeros: compare the counts, not the storage.
  static constexpr std::array<uint64_t, kChunkLength> kZeros{};
  for (int32_t chunk = 0; chunk < chunk_count(); ++chunk) {
    const uint64_t* mine = chunk_counts(chunk);
    const uint64_t* theirs = other.chunk_counts(chunk);
    if (mine == nullptr && theirs == nullptr) continue;
    if (!std::equal(mine != nullptr ? mine : kZeros.data(),
                    (mine != nullptr ? mine : kZeros.data()) + kChunkLength,
                    theirs != nullptr ? theirs : kZeros.data())) {
      return false;
    }
  }
  return true;
}

std::string Histogram::encode_base64(Encoding encoding) const {
  int32_t counts_limit = 0;  // one past the last non-zero count
  for_each_nonzero_count([&](int32_t index, uint64_t) { counts_limit = index + 1; });

  std::vector<uint8_t> payload;
  payload.reserve(kPayloadHeaderBytes + static_cast<size_t>(counts_limit) * 2);
  put_u32(payload, kV2EncodingCookieBase | kCookieWordSizeNibble);
  put_u32(payload, 0);  // payload length, patched below
  put_u32(payload, 0);  // normalizing index offset: we never shift
  put_u32(payload, static_cast<uint32_t>(significant_digits_));
  put_u64(payload, static_cast<uint64_t>(lowest_discernible_));
  put_u64(payload, static_cast<uint64_t>(highest_trackable_));
  put_u64(payload, std::bit_cast<uint64_t>(1.0));  // integer-to-double conversion ratio

  for (int32_t i = 0; i < counts_limit;) {
    const uint64_t count = count_at(i++);
    if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw std::overflow_error("histogram encoding: a bucket count exceeds int64");
    }
    if (count != 0) {
      put_zigzag(payload, static_cast<int64_t>(count));
      continue;
    }
    int64_t zeros = 1;
    while (i < counts_limit && count_at(i) == 0) {
      ++zeros;
      ++i;
    }
    // A lone zero is written as a zero count; longer runs as -length.
    put_zigzag(payload, zeros > 1 ? -zeros : 0);
  }
  overwrite_u32(payload, 4, static_cast<uint32_t>(payload.size() - kPayloadHeaderBytes));
  if (encoding == Encoding::uncompressed) return base64_encode(payload);

  const std::vector<uint8_t> compressed = deflate_bytes(payload);
  std::vector<uint8_t> framed;
  framed.reserve(kCompressedHeaderBytes + compressed.size());
  put_u32(framed, kV2CompressedCookieBase | kCookieWordSizeNibble);
  put_u32(framed, static_cast<uint32_t>(compressed.size()));
  framed.insert(framed.end(), compressed.begin(), compressed.end());
  return base64_encode(framed);
}

Histogram Histogram::decode_base64(std::string_view text) {
  return HistogramDecoder().decode_base64(text);
}

Histogram Histogram::decode_base64(std::string_view text, const Layout& required) {
  return HistogramDecoder().decode_base64(text, required);
}

struct HistogramDecoder::Buffers {
  Inflater inflater;
  std::vector<uint8_t> framed;
  std::vector<uint8_t> inflated;
  std::vector<std::pair<int32_t, uint64_t>> nonzero;  // (index, count), in index order
};

HistogramDecoder::HistogramDecoder() : buffers_(std::make_unique<Buffers>()) {}
HistogramDecoder::~HistogramDecoder() = default;

Histogram HistogramDecoder::decode_base64(std::string_view text) {
  return decode(text, std::nullopt);
}

Histogram HistogramDecoder::decode_base64(std::string_view text,
                                          const Histogram::Layout& required) {
  return decode(text, required);
}

Histogram HistogramDecoder::decode(std::string_view text,
                                   const std::optional<Histogram::Layout>& required) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  std::vector<uint8_t>& framed = buffers_->framed;
  try {
    base64_decode_into(text, framed);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }

  const auto cookie_is = [](uint32_t cookie, uint32_t base) {
    return (cookie & ~kCookieWordSizeMask) == base &&
           ((cookie & kCookieWordSizeMask) == 0 ||
            (cookie & kCookieWordSizeMask) == kCookieWordSizeNibble);
  };
  if (framed.size() < 4)
    fail("only " + std::to_string(framed.size()) + " bytes, too short for a cookie");
  const uint32_t outer_cookie = get_u32(framed.data());

  const uint8_t* payload = nullptr;
  size_t payload_size = 0;
  if (cookie_is(outer_cookie, kV2CompressedCookieBase)) {
    if (framed.size() < kCompressedHeaderBytes) fail("truncated compressed-histogram header");
    const uint32_t compressed_length = get_u32(framed.data() + 4);
    const size_t available = framed.size() - kCompressedHeaderBytes;
    if (compressed_length != available) {
      fail("header says " + std::to_string(compressed_length) + " compressed bytes but " +
           std::to_string(available) + " follow");
    }
    const size_t max_payload =
        kPayloadHeaderBytes + static_cast<size_t>(kMaxDecodedCountsLength) * kMaxVarintBytes;
    std::vector<uint8_t>& inflated = buffers_->inflated;
    try {
      buffers_->inflater.inflate_all(
          std::span<const uint8_t>(framed.data() + kCompressedHeaderBytes, available), max_payload,
          inflated);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    payload = inflated.data();
    payload_size = inflated.size();
  } else if (cookie_is(outer_cookie, kV2EncodingCookieBase)) {
    payload = framed.data();
    payload_size = framed.size();
  } else {
    fail("unknown cookie " + hex32(outer_cookie) + ", expected an HdrHistogram V2 encoding (" +
         hex32(kV2CompressedCookieBase | kCookieWordSizeNibble) + ")");
  }

  if (payload_size < kPayloadHeaderBytes) {
    fail("payload of " + std::to_string(payload_size) + " bytes is shorter than its " +
         std::to_string(kPayloadHeaderBytes) + "-byte header");
  }
  const uint32_t inner_cookie = get_u32(payload);
  if (!cookie_is(inner_cookie, kV2EncodingCookieBase)) {
    fail("unknown payload cookie " + hex32(inner_cookie) + ", expected " +
         hex32(kV2EncodingCookieBase | kCookieWordSizeNibble));
  }
  const uint32_t counts_bytes = get_u32(payload + 4);
  if (counts_bytes != payload_size - kPayloadHeaderBytes) {
    fail("payload header says " + std::to_string(counts_bytes) + " bytes of counts but " +
         std::to_string(payload_size - kPayloadHeaderBytes) + " follow");
  }
  const uint32_t normalizing_index_offset = get_u32(payload + 8);
  if (normalizing_index_offset != 0) {
    fail("normalizing index offset " + std::to_string(normalizing_index_offset) +
         " is not supported (only 0)");
  }
  const auto significant_digits = static_cast<int32_t>(get_u32(payload + 12));
  const auto lowest = static_cast<int64_t>(get_u64(payload + 16));
  const auto highest = static_cast<int64_t>(get_u64(payload + 24));
  const double conversion_ratio = std::bit_cast<double>(get_u64(payload + 32));
  if (conversion_ratio != 1.0) {
    fail("integer-to-double conversion ratio is not 1.0 (a DoubleHistogram?), not supported");
  }

  if (required && (lowest != required->lowest || highest != required->highest ||
                   significant_digits != required->significant_digits)) {
    fail("layout (lowest " + std::to_string(lowest) + ", highest " + std::to_string(highest) +
         ", " + std::to_string(significant_digits) + " significant digits) is not the expected (" +
         std::to_string(required->lowest) + ", " + std::to_string(required->highest) + ", " +
         std::to_string(required->significant_digits) + ")");
  }
  std::optional<Histogram> decoded;
  try {
    decoded.emplace(Histogram(lowest, highest, significant_digits, kMaxDecodedCountsLength));
  } catch (const std::invalid_argument& error) {
    fail(std::string("bad layout in header: ") + error.what());
  }
  Histogram& histogram = *decoded;  // a reference so the helpers below read naturally

  const uint8_t* cursor = payload + kPayloadHeaderBytes;
  const uint8_t* const end = payload + payload_size;
  const auto length = static_cast<uint64_t>(histogram.counts_length_);
  // One pass over the counts checks them and collects the non-zero ones with
  // the chunks they fill; the chunk store is then allocated once at its size
  // (grown a chunk at a time and then trimmed, it was copied over and over: a
  // tenth of the operator's CPU in its last pass over a thousand workers'
  // results) and filled in index order.
  std::vector<std::pair<int32_t, uint64_t>>& nonzero = buffers_->nonzero;
  nonzero.clear();
  size_t chunks_filled = 0;
  int64_t last_chunk = -1;
  uint64_t index = 0;
  uint64_t total = 0;
  while (cursor != end) {
    const int64_t value = get_zigzag(cursor, end);
    if (value < 0) {
      const uint64_t zeros = uint64_t{0} - static_cast<uint64_t>(value);
      if (zeros > length - index) {
        fail("a run of " + std::to_string(zeros) + " zero counts at index " +
             std::to_string(index) + " runs past the counts array (length " +
             std::to_string(length) + ")");
      }
      index += zeros;
      continue;
    }
    if (index >= length) {
      fail("count at index " + std::to_string(index) + " is beyond the counts array (length " +
           std::to_string(length) + ")");
    }
    // Zeros need no storage: a chunk is allocated for the counts it holds.
    if (value != 0) {
      const auto count = static_cast<uint64_t>(value);
      if (total > std::numeric_limits<uint64_t>::max() - count)
        fail("total count overflows 64 bits");
      total += count;
      nonzero.emplace_back(static_cast<int32_t>(index), count);
      const auto chunk = static_cast<int64_t>(index >> Histogram::kChunkMagnitude);
      if (chunk != last_chunk) {
        ++chunks_filled;
        last_chunk = chunk;
      }
    }
    ++index;
  }
  if (!nonzero.empty()) {
    histogram.chunk_offsets_.assign(static_cast<size_t>(histogram.chunk_count()),
                                    Histogram::kNoChunk);
    histogram.chunks_.assign(chunks_filled * Histogram::kChunkLength, 0);
    int32_t next_offset = 0;
    for (const auto& [at, count] : nonzero) {
      int32_t& offset =
          histogram.chunk_offsets_[static_cast<size_t>(at >> Histogram::kChunkMagnitude)];
      if (offset == Histogram::kNoChunk) {
        offset = next_offset;
        next_offset += Histogram::kChunkLength;
      }
      histogram.chunks_[static_cast<size_t>(offset + (at & (Histogram::kChunkLength - 1)))] = count;
    }
  }
  // Min and max follow from the counts read (in index order); the least
  // non-zero value is past index 0, which counts the zeros.
  const int64_t max_index = nonzero.empty() ? -1 : nonzero.back().first;
  const auto first_non_zero_value = std::find_if(
      nonzero.begin(), nonzero.end(), [](const auto& counted) { return counted.first != 0; });
  const int64_t min_non_zero_index =
      first_non_zero_value == nonzero.end() ? -1 : first_non_zero_value->first;
  histogram.total_count_ = total;
  histogram.max_value_ = max_index < 0
                             ? 0
                             : histogram.highest_equivalent_value(
                                   histogram.value_from_index(static_cast<int32_t>(max_index)));
  histogram.min_non_zero_value_ =
      min_non_zero_index < 0 ? std::numeric_limits<int64_t>::max()
                             : histogram.value_from_index(static_cast<int32_t>(min_non_zero_index));
  return std::move(*decoded);
}

}  // namespace kubeload
