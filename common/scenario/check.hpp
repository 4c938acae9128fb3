#pragma once
// Checks of a response beyond its status: a JSON value equals a text or
// matches a pattern, the body contains a text. Compiled once per step; each
// failed check is a failure of its own kind for the scenario to count.

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/scenario/json_pointer.hpp"
#include "common/scenario/regex.hpp"
#include "common/scenario/response.hpp"

namespace kubeload::scenario {

enum class CheckKind : unsigned char {
  json_equals,    // the value at `pointer`, as extraction reads it, equals `expected`
  json_matches,   // the value at `pointer` matches the pattern `expected`, whole
  body_contains,  // the body contains `expected` (`pointer` unused)
};

struct CheckRule {
  CheckKind kind = CheckKind::body_contains;
  std::string pointer;
  std::string expected;
};

class Check {
 public:
  // `name` says which check this is in messages ("steps[1].checks[0]");
  // empty, the message is the problem alone (the caller names the field).
  static std::variant<Check, std::string> compile(std::string_view name, const CheckRule& rule);

  // Whether the response passes. A JSON value that is absent fails.
  // `scratch` holds the value read (a JSON string unescaped); no heap
  // allocation once it has the capacity.
  bool passes(const ResponseView& response, std::string& scratch,
              MatchScratch& match_scratch) const;

  CheckKind kind() const { return kind_; }

 private:
  CheckKind kind_ = CheckKind::body_contains;
  std::optional<JsonPointer> pointer_;
  std::optional<Regex> regex_;
  std::string expected_;
};

}  // namespace kubeload::scenario
