#include "kubeload/names.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kubeload/text.hpp"

namespace kubeload {
namespace {

bool is_tchar(char c) {
  return is_alnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// [first]([middle]*[last])? with a length limit: the shape of every
// Kubernetes name rule.
bool matches_name_shape(std::string_view s, size_t max_length, bool (*first)(char),
                        bool (*middle)(char), bool (*last)(char)) {
  if (s.empty() || s.size() > max_length) return false;
  if (!first(s.front()) || !last(s.back())) return false;
  return std::all_of(s.begin(), s.end(), middle);
}

bool lower_alnum(char c) {
  return is_digit(c) || is_lower(c);
}
bool lower_alnum_dash(char c) {
  return lower_alnum(c) || c == '-';
}
bool label_name_char(char c) {
  return is_alnum(c) || c == '-' || c == '_' || c == '.';
}

}  // namespace

std::string short_hash(std::string_view text) {
  uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  const auto folded = static_cast<uint32_t>(hash ^ (hash >> 32));
  std::string out(kShortHashLength, '0');
  constexpr std::string_view kDigits = "0123456789abcdef";
  for (std::size_t i = 0; i < kShortHashLength; ++i) {
    out[kShortHashLength - 1 - i] = kDigits[(folded >> (4 * i)) & 0xf];
  }
  return out;
}

std::string loadtest_label_value(std::string_view loadtest_name) {
  constexpr std::size_t kMaxLabelValue = 63;  // Kubernetes' label value limit
  if (loadtest_name.size() <= kMaxLabelValue) return std::string(loadtest_name);
  const std::size_t room = kMaxLabelValue - 1 - kShortHashLength;
  std::string prefix = trim_trailing(std::string(loadtest_name.substr(0, room)), "-.");
  return prefix + "-" + short_hash(loadtest_name);
}

bool is_http_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

bool is_http_method(std::string_view s) {
  return is_http_token(s) && std::none_of(s.begin(), s.end(), is_lower);
}

bool is_dns1123_label(std::string_view s) {
  return matches_name_shape(s, 63, lower_alnum, lower_alnum_dash, lower_alnum);
}

bool is_dns1035_label(std::string_view s) {
  return matches_name_shape(s, 63, is_lower, lower_alnum_dash, lower_alnum);
}

bool is_generate_name(std::string_view s) {
  if (s.empty() || s.size() > 253 - 5) return false;
  std::string masked(s);
  if (masked.back() == '-') masked.back() = 'a';
  return is_dns1123_subdomain(masked);
}

bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view part =
        s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!matches_name_shape(part, 253, lower_alnum, lower_alnum_dash, lower_alnum)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_request_name(std::string_view s) {
  return matches_name_shape(
      s, 253, lower_alnum, [](char c) { return lower_alnum_dash(c) || c == '_'; }, lower_alnum);
}

bool is_qualified_name(std::string_view s) {
  const size_t slash = s.find('/');
  std::string_view name = s;
  if (slash != std::string_view::npos) {
    if (!is_dns1123_subdomain(s.substr(0, slash))) return false;
    name = s.substr(slash + 1);
  }
  return matches_name_shape(name, 63, is_alnum, label_name_char, is_alnum);
}

bool is_label_value(std::string_view s) {
  return s.empty() || matches_name_shape(s, 63, is_alnum, label_name_char, is_alnum);
}

bool is_secret_key(std::string_view s) {
  return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), [](char c) {
    return is_alnum(c) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace kubeload
