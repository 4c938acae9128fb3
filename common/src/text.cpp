#include "kubeload/text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace kubeload {
namespace {

constexpr size_t kMaxQuotedBytes = 100;

}  // namespace

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

}  // namespace kubeload
