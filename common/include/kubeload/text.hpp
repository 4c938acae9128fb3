#pragma once
// How values are shown in error messages, and the character rules several
// parsers share. Messages end up in logs, terminals and a LoadTest's status,
// so long values are cut (never inside a UTF-8 sequence) and their size given.

#include <cstddef>
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

// value with `decimals` digits after the point, locale-independent
// (std::to_chars); "-" for a non-finite value, so no report or status
// message shows nan or inf, and never "-0.000".
std::string fixed(double value, int decimals);

}  // namespace kubeload
