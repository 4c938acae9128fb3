#include "kubeload/duration.hpp"

#include <array>
#include <cstdint>
#include <limits>

#include "kubeload/text.hpp"

namespace kubeload {
namespace {

constexpr uint64_t kMaxNanos = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// A unit's length in nanoseconds as multiplier * 10^exponent. Keeping the
// power of ten apart lets fractions ("1.5h") be converted exactly in 64 bits.
struct Unit {
  std::string_view suffix;
  uint64_t multiplier;
  int exponent;
};

constexpr std::array<Unit, 8> kUnits{{
    {"ns", 1, 0},
    {"us", 1, 3},
    {"\xC2\xB5s", 1, 3},  // U+00B5 MICRO SIGN, as Go accepts
    {"\xCE\xBCs", 1, 3},  // U+03BC GREEK SMALL LETTER MU, as Go accepts
    {"ms", 1, 6},
    {"s", 1, 9},
    {"m", 6, 10},
    {"h", 36, 11},
}};

constexpr uint64_t pow10(int exponent) {
  uint64_t result = 1;
  for (int i = 0; i < exponent; ++i) result *= 10;
  return result;
}

// More fraction digits than this cannot change the result by a nanosecond
// (the longest unit, h, is 3.6e12 ns) and would overflow the exact arithmetic.
constexpr int kMaxFractionDigits = 17;

// Appends `value / 10^decimals` with trailing zeros of the fraction dropped.
void append_decimal(std::string& out, uint64_t value, int decimals) {
  const uint64_t scale = pow10(decimals);
  out += std::to_string(value / scale);
  uint64_t fraction = value % scale;
  if (fraction == 0) return;
  std::string digits = std::to_string(fraction);
  digits.insert(0, static_cast<size_t>(decimals) - digits.size(), '0');
  while (digits.back() == '0') digits.pop_back();
  out += '.';
  out += digits;
}

}  // namespace

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  if (text == "0") return std::chrono::nanoseconds{0};
  if (text.empty()) return std::nullopt;

  uint64_t total = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    uint64_t whole = 0;
    size_t whole_digits = 0;
    for (; pos < text.size() && is_digit(text[pos]); ++pos, ++whole_digits) {
      const uint64_t digit = static_cast<uint64_t>(text[pos] - '0');
      if (whole > (kMaxNanos - digit) / 10) return std::nullopt;
      whole = whole * 10 + digit;
    }
    uint64_t fraction = 0;
    int fraction_digits = 0;
    size_t fraction_digits_seen = 0;
    if (pos < text.size() && text[pos] == '.') {
      for (++pos; pos < text.size() && is_digit(text[pos]); ++pos, ++fraction_digits_seen) {
        if (fraction_digits < kMaxFractionDigits) {
          fraction = fraction * 10 + static_cast<uint64_t>(text[pos] - '0');
          ++fraction_digits;
        }
      }
    }
    if (whole_digits == 0 && fraction_digits_seen == 0) return std::nullopt;

    const size_t unit_start = pos;
    while (pos < text.size() && !is_digit(text[pos]) && text[pos] != '.') ++pos;
    const std::string_view suffix = text.substr(unit_start, pos - unit_start);
    const Unit* unit = nullptr;
    for (const Unit& candidate : kUnits) {
      if (candidate.suffix == suffix) unit = &candidate;
    }
    if (unit == nullptr) return std::nullopt;

    const uint64_t unit_nanos = unit->multiplier * pow10(unit->exponent);
    if (whole > kMaxNanos / unit_nanos) return std::nullopt;
    uint64_t part = whole * unit_nanos;
    // fraction / 10^digits * multiplier * 10^exponent, exact and floored.
    if (fraction_digits <= unit->exponent) {
      part += fraction * unit->multiplier * pow10(unit->exponent - fraction_digits);
    } else {
      part += fraction * unit->multiplier / pow10(fraction_digits - unit->exponent);
    }
    if (part > kMaxNanos - total) return std::nullopt;
    total += part;
  }
  return std::chrono::nanoseconds{static_cast<int64_t>(total)};
}

std::string format_duration(std::chrono::nanoseconds d) {
  std::string out;
  const int64_t count = d.count();
  // Negating INT64_MIN overflows, so take the magnitude in unsigned arithmetic.
  uint64_t nanos = static_cast<uint64_t>(count);
  if (count < 0) {
    out += '-';
    nanos = ~nanos + 1;
  }
  if (nanos == 0) return "0s";

  constexpr uint64_t kMicro = 1000, kMilli = 1000 * kMicro, kSecond = 1000 * kMilli;
  constexpr uint64_t kMinute = 60 * kSecond, kHour = 60 * kMinute;
  if (nanos < kMicro) return out + std::to_string(nanos) + "ns";
  if (nanos < kMilli) {
    append_decimal(out, nanos, 3);
    return out + "us";
  }
  if (nanos < kSecond) {
    append_decimal(out, nanos, 6);
    return out + "ms";
  }
  if (const uint64_t hours = nanos / kHour; hours > 0) out += std::to_string(hours) + "h";
  if (const uint64_t minutes = nanos % kHour / kMinute; minutes > 0) {
    out += std::to_string(minutes) + "m";
  }
  if (const uint64_t seconds = nanos % kMinute; seconds > 0) {
    append_decimal(out, seconds, 9);
    out += "s";
  }
  return out;
}

}  // namespace kubeload
