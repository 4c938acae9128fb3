#pragma once
// Extraction: a value taken from a response into a virtual user's variable,
// by JSON pointer, header name, cookie name or regular expression. Compiled
// once per step, then run on each response with the caller's buffer and
// scratch. Found and not found are distinct outcomes; the scenario decides
// what a miss costs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/scenario/json_pointer.hpp"
#include "common/scenario/regex.hpp"
#include "common/scenario/response.hpp"

namespace kubeload::scenario {

enum class ExtractFrom : unsigned char {
  json,    // expression: a JSON pointer into the body
  header,  // expression: a header field's name, any case; the first such field
  cookie,  // expression: a cookie's name, exact; the last Set-Cookie of it, as a jar keeps
  regex,   // expression: a PCRE2 pattern searched in the body
};

struct ExtractRule {
  ExtractFrom from = ExtractFrom::json;
  std::string expression;
  // regex only: the group to take; unset, group 1 when the pattern has a
  // group, else the whole match.
  std::optional<std::uint32_t> group;
};

enum class Extraction : unsigned char { found, not_found };

class Extractor {
 public:
  // `name` says which extraction this is in messages ("steps[0].extract.token");
  // empty, the message is the problem alone (the caller names the field).
  static std::variant<Extractor, std::string> compile(std::string_view name,
                                                      const ExtractRule& rule);

  // Replaces `out` with the value when found (a JSON string unescaped, other
  // JSON values as their JSON text, a header or cookie value as sent), and
  // clears it when not. No heap allocation once `out` has the capacity.
  Extraction extract(const ResponseView& response, std::string& out, MatchScratch& scratch) const;

  ExtractFrom from() const { return from_; }

 private:
  ExtractFrom from_ = ExtractFrom::json;
  std::string field_;  // header or cookie name
  std::optional<JsonPointer> pointer_;
  std::optional<Regex> regex_;
  std::uint32_t group_ = 0;
};

// The header and cookie lookups on their own (checks and tests use them).
std::optional<std::string_view> find_header(const ResponseView& response, std::string_view name);
std::optional<std::string_view> find_set_cookie(const ResponseView& response,
                                                std::string_view name);
// Whether `name` is an RFC 9110 token, as header field and cookie names are.
bool is_token(std::string_view name);

}  // namespace kubeload::scenario
