#include "kubeload/text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace kubeload {
namespace {

constexpr size_t kMaxQuotedBytes = 100;

}  // namespace

std::string hex_encode(std::span<const unsigned char> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char byte : bytes) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  return out;
}

std::string trim_trailing(std::string s, std::string_view chars) {
  while (!s.empty() && chars.find(s.back()) != std::string_view::npos) s.pop_back();
  return s;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

std::string_view utf8_head(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

std::string quote(std::string_view s) {
  const std::string_view shown = utf8_head(s, kMaxQuotedBytes);
  if (shown.size() == s.size()) return "\"" + std::string(s) + "\"";
  return "\"" + std::string(shown) + "\"... (" + std::to_string(s.size()) + " bytes)";
}

size_t utf8_sequence_length(std::string_view s) noexcept {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  uint32_t code_point = 0;
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    code_point = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    code_point = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3F);
  }
  constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code_point < kSmallest[length] || code_point > 0x10FFFF) return 0;
  if (code_point >= 0xD800 && code_point <= 0xDFFF) return 0;
  return length;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const size_t length = utf8_sequence_length(s.substr(i));
    if (length == 0 || lead < 0x20 || lead == 0x7f) {
      constexpr char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out += kHex[lead >> 4];
      out += kHex[lead & 0xF];
      ++i;
    } else {
      out.append(s.substr(i, length));
      i += length;
    }
  }
  return out;
}

bool has_space_or_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte <= 0x20 || byte == 0x7f;
  });
}

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  std::array<char, 64> buffer{};
  auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                    std::chars_format::fixed, decimals);
  if (error != std::errc{}) return "-";  // only for magnitudes no report can reach
  std::string text(buffer.data(), end);
  // "-0.000" for a tiny negative value reads as a sign error; it is zero.
  if (text.front() == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

std::string shortest(double value) {
  if (!std::isfinite(value)) return "-";
  std::array<char, 64> buffer{};
  const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  if (error != std::errc{}) return "-";
  return std::string(buffer.data(), end);
}

}  // namespace kubeload
