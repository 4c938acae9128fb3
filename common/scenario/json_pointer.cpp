#include "common/scenario/json_pointer.hpp"

#include <array>
#include <charconv>

#include "common/scenario/message.hpp"

namespace kubeload::scenario {
namespace {

constexpr std::size_t npos = std::string_view::npos;

std::size_t skip_whitespace(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

// From the opening quote at `i`: the index just past the closing quote, or npos.
std::size_t skip_string(std::string_view s, std::size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;  // whatever it escapes, it does not end the string
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return npos;
}

bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// From the value's first byte at `i`: the index just past it, or npos. Nested
// values are skipped with a depth count, not recursion, so a deep document
// cannot overflow the stack; bracket kinds are not matched against each other.
std::size_t skip_value(std::string_view s, std::size_t i) {
  if (i >= s.size()) return npos;
  const char first = s[i];
  if (first == '"') return skip_string(s, i);
  if (first == '{' || first == '[') {
    std::size_t depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = skip_string(s, i);
        if (i == npos) return npos;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return npos;
  }
  for (const std::string_view literal : {"true", "false", "null"}) {
    if (s.substr(i, literal.size()) == literal) return i + literal.size();
  }
  if (first == '-' || (first >= '0' && first <= '9')) {
    while (i < s.size() && is_number_char(s[i])) ++i;
    return i;
  }
  return npos;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::uint32_t> read_hex4(std::string_view s, std::size_t at) {
  if (at + 4 > s.size()) return std::nullopt;
  std::uint32_t value = 0;
  for (std::size_t k = at; k < at + 4; ++k) {
    const int digit = hex_digit(s[k]);
    if (digit < 0) return std::nullopt;
    value = value * 16 + static_cast<std::uint32_t>(digit);
  }
  return value;
}

// Unescapes a string's content (between its quotes), handing `sink` one
// piece at a time: runs of plain bytes as they are, each escape decoded.
// `sink` returns false to stop early. False when an escape is broken or the
// sink stopped.
template <class Sink>
bool unescape(std::string_view raw, Sink&& sink) {
  std::size_t i = 0;
  while (i < raw.size()) {
    std::size_t plain = i;
    while (plain < raw.size() && raw[plain] != '\\') ++plain;
    if (plain > i && !sink(raw.substr(i, plain - i))) return false;
    if (plain == raw.size()) return true;
    i = plain + 1;
    if (i >= raw.size()) return false;
    const char escape = raw[i++];
    char simple = 0;
    switch (escape) {
      case '"':
      case '\\':
      case '/':
        simple = escape;
        break;
      case 'b':
        simple = '\b';
        break;
      case 'f':
        simple = '\f';
        break;
      case 'n':
        simple = '\n';
        break;
      case 'r':
        simple = '\r';
        break;
      case 't':
        simple = '\t';
        break;
      case 'u':
        break;
      default:
        return false;
    }
    if (escape != 'u') {
      if (!sink(std::string_view(&simple, 1))) return false;
      continue;
    }
    auto unit = read_hex4(raw, i);
    if (!unit) return false;
    i += 4;
    std::uint32_t code_point = *unit;
    if (code_point >= 0xd800 && code_point <= 0xdbff) {
      // A high surrogate must be followed by an escaped low one.
      if (raw.substr(i, 2) != "\\u") return false;
      const auto low = read_hex4(raw, i + 2);
      if (!low || *low < 0xdc00 || *low > 0xdfff) return false;
      i += 6;
      code_point = 0x10000 + ((code_point - 0xd800) << 10) + (*low - 0xdc00);
    } else if (code_point >= 0xdc00 && code_point <= 0xdfff) {
      return false;  // a lone low surrogate
    }
    std::array<char, 4> utf8{};
    std::size_t length = 0;
    if (code_point < 0x80) {
      utf8[length++] = static_cast<char>(code_point);
    } else if (code_point < 0x800) {
      utf8[length++] = static_cast<char>(0xc0 | (code_point >> 6));
      utf8[length++] = static_cast<char>(0x80 | (code_point & 0x3f));
    } else if (code_point < 0x10000) {
      utf8[length++] = static_cast<char>(0xe0 | (code_point >> 12));
      utf8[length++] = static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
      utf8[length++] = static_cast<char>(0x80 | (code_point & 0x3f));
    } else {
      utf8[length++] = static_cast<char>(0xf0 | (code_point >> 18));
      utf8[length++] = static_cast<char>(0x80 | ((code_point >> 12) & 0x3f));
      utf8[length++] = static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
      utf8[length++] = static_cast<char>(0x80 | (code_point & 0x3f));
    }
    if (!sink(std::string_view(utf8.data(), length))) return false;
  }
  return true;
}

// Whether a member name (raw, between its quotes) unescapes to `name`,
// decoded piece by piece: no buffer.
bool name_equals(std::string_view raw, std::string_view name) {
  if (raw.find('\\') == npos) return raw == name;
  std::size_t matched = 0;
  const bool whole = unescape(raw, [&](std::string_view piece) {
    if (name.substr(matched, piece.size()) != piece) return false;
    matched += piece.size();
    return true;
  });
  return whole && matched == name.size();
}

std::optional<std::size_t> array_index(std::string_view token) {
  if (token.empty() || (token.size() > 1 && token.front() == '0')) return std::nullopt;
  std::size_t value = 0;
  const auto [end, failure] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (failure != std::errc{} || end != token.data() + token.size()) return std::nullopt;
  return value;
}

JsonType type_of(char first) {
  switch (first) {
    case '"':
      return JsonType::string;
    case '{':
      return JsonType::object;
    case '[':
      return JsonType::array;
    case 't':
    case 'f':
      return JsonType::boolean;
    case 'n':
      return JsonType::null;
    default:
      return JsonType::number;
  }
}

}  // namespace

std::variant<JsonPointer, std::string> JsonPointer::parse(std::string_view text) {
  JsonPointer pointer;
  pointer.text_ = text;
  if (text.empty()) return pointer;
  if (text.front() != '/') {
    return "JSON pointer " + quoted(text) + ": must be empty or start with \"/\"";
  }
  std::size_t at = 1;
  for (;;) {
    const std::size_t end = std::min(text.find('/', at), text.size());
    const std::string_view raw = text.substr(at, end - at);
    Token token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token.name += raw[i];
        continue;
      }
      const char next = i + 1 < raw.size() ? raw[i + 1] : '\0';
      if (next != '0' && next != '1') {
        return "JSON pointer " + quoted(text) + ": \"~\" must be followed by 0 or 1, in " +
               quoted(raw);
      }
      token.name += next == '0' ? '~' : '/';
      ++i;
    }
    token.index = array_index(token.name);
    pointer.tokens_.push_back(std::move(token));
    if (end == text.size()) break;
    at = end + 1;
  }
  return pointer;
}

std::optional<JsonValue> JsonPointer::find(std::string_view s) const {
  std::size_t at = skip_whitespace(s, 0);
  for (const Token& token : tokens_) {
    if (at >= s.size()) return std::nullopt;
    const char open = s[at];
    if (open != '{' && open != '[') return std::nullopt;  // a scalar has no members
    if (open == '[' && !token.index) return std::nullopt;
    std::size_t i = skip_whitespace(s, at + 1);
    const char close = open == '{' ? '}' : ']';
    if (i < s.size() && s[i] == close) return std::nullopt;  // empty
    bool descended = false;
    for (std::size_t element = 0; !descended; ++element) {
      if (open == '{') {
        if (i >= s.size() || s[i] != '"') return std::nullopt;
        const std::size_t name_end = skip_string(s, i);
        if (name_end == npos) return std::nullopt;
        const std::string_view name = s.substr(i + 1, name_end - i - 2);
        i = skip_whitespace(s, name_end);
        if (i >= s.size() || s[i] != ':') return std::nullopt;
        i = skip_whitespace(s, i + 1);
        descended = name_equals(name, token.name);
      } else {
        descended = element == *token.index;
      }
      if (descended) break;
      i = skip_value(s, i);
      if (i == npos) return std::nullopt;
      i = skip_whitespace(s, i);
      if (i >= s.size() || s[i] != ',') return std::nullopt;  // the close, or broken
      i = skip_whitespace(s, i + 1);
    }
    at = i;
  }
  const std::size_t end = skip_value(s, at);
  if (end == npos) return std::nullopt;
  return JsonValue{type_of(s[at]), s.substr(at, end - at)};
}

bool append_json_text(const JsonValue& value, std::string& out) {
  if (value.type != JsonType::string) {
    out.append(value.raw);
    return true;
  }
  if (value.raw.size() < 2) return false;
  return unescape(value.raw.substr(1, value.raw.size() - 2), [&](std::string_view piece) {
    out.append(piece);
    return true;
  });
}

}  // namespace kubeload::scenario
