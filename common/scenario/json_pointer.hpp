#pragma once
// JSON pointers (RFC 6901) and finding the value one names in a JSON text.
//
// Why a scanner and not a DOM (nlohmann::json and its json_pointer): a DOM
// allocates for every string, array and object of the response, every time,
// and reads the whole document before the first lookup, where a step wants
// one value, usually near the start ({"token": ...}). The scanner walks the
// text once, skips what the pointer does not name without decoding it,
// stops at the value, and allocates nothing; the caller's buffer receives the
// value. It is not a validator: it reads what it passes through just enough
// to skip it, and what lies after the value is not looked at, so a document
// broken after the value still yields it. A document broken before it yields
// nothing.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kubeload::scenario {

enum class JsonType : unsigned char { string, number, object, array, boolean, null };

// A value found in a document: its type and its raw JSON text (for a string,
// with its quotes and escapes).
struct JsonValue {
  JsonType type = JsonType::null;
  std::string_view raw;
};

class JsonPointer {
 public:
  // "" (the whole document) or "/token/token...", "~1" standing for '/' and
  // "~0" for '~' in a token. Either the pointer or why not.
  static std::variant<JsonPointer, std::string> parse(std::string_view text);

  // The value the pointer names in `document`, or nothing: absent, or the
  // document is not JSON up to it. Object members are compared after
  // unescaping their names; the first of duplicate names wins. A token
  // names an array element only as a decimal index without leading zeros
  // ("-", past the end, never names one).
  std::optional<JsonValue> find(std::string_view document) const;

  const std::string& text() const { return text_; }

 private:
  struct Token {
    std::string name;                  // unescaped
    std::optional<std::size_t> index;  // when the token is an array index
  };
  std::string text_;
  std::vector<Token> tokens_;
};

// Appends a value's text to `out`: a string's content unescaped (UTF-8),
// anything else its raw JSON text. False when a string's escapes are broken
// (then `out` may hold part of it).
bool append_json_text(const JsonValue& value, std::string& out);

}  // namespace kubeload::scenario
