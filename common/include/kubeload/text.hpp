#pragma once
// How values are shown in error messages, and the character rules several
// parsers share. Messages end up in logs, terminals and a LoadTest's status,
// so long values are cut (never inside a UTF-8 sequence) and their size given.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace kubeload {

// At most max_bytes of s, cut before a UTF-8 continuation byte.
std::string_view utf8_head(std::string_view s, size_t max_bytes);

// "value", or "its first 100 bytes"... (N bytes).
std::string quote(std::string_view s);

// Length of the well-formed UTF-8 sequence at the start of `s`, or 0: no
// overlong forms, no surrogates, nothing above U+10FFFF.
size_t utf8_sequence_length(std::string_view s) noexcept;

// Control characters and bytes that are not UTF-8 become \xNN: a message is
// always printable, and valid in JSON (a status write must not fail on it).
std::string printable(std::string_view s);

// Whether s has a space, a control character or DEL: never valid in a URL,
// a path or a header value.
bool has_space_or_control(std::string_view s);

// ASCII character classes and case, the same in every locale (<cctype>'s
// depend on it): the one set the parsers share.
constexpr bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}
constexpr bool is_lower(char c) noexcept {
  return c >= 'a' && c <= 'z';
}
constexpr bool is_upper(char c) noexcept {
  return c >= 'A' && c <= 'Z';
}
constexpr bool is_alpha(char c) noexcept {
  return is_lower(c) || is_upper(c);
}
constexpr bool is_alnum(char c) noexcept {
  return is_digit(c) || is_alpha(c);
}
constexpr bool is_hex_digit(char c) noexcept {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
// A space or a tab (HTTP's optional whitespace).
constexpr bool is_blank(char c) noexcept {
  return c == ' ' || c == '\t';
}
constexpr char ascii_lower(char c) noexcept {
  return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}
// `s` with A-Z as a-z; every other byte as it is.
std::string lowercase(std::string_view s);
// Lower-case hex of `bytes`, two digits each (digests, tokens).
std::string hex_encode(std::span<const unsigned char> bytes);
// `s` without the trailing characters that are in `chars`.
std::string trim_trailing(std::string s, std::string_view chars);

// value with `decimals` digits after the point, locale-independent
// (std::to_chars); "-" for a non-finite value, so no report or status
// message shows nan or inf, and never "-0.000".
std::string fixed(double value, int decimals);
// The shortest text that reads back as `value` (std::to_chars): "87.5",
// "200", "106.25"; "-" for a non-finite value.
std::string shortest(double value);

}  // namespace kubeload
