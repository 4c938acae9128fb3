#pragma once
// kubectl's JSONPath templates (-o jsonpath=TEMPLATE), as k8s.io/client-go's
// util/jsonpath reads and prints them, for the part of the language kubectl
// users write: literal text, {.a.b}, {.a\.b/c} (escaped dots in label keys),
// {['key']}, {.items[*]}, {.items[0]}, {.items[-1]}, slices {[1:3]} and
// {[::2]}, {.*}, {@} / {$}, quoted text {"\n"}, {range ...}...{end}, and
// filters [?(@.a.b)] (exists) and [?(@.a OP VALUE)] with ==, !=, <, >, <=,
// >= against a quoted text, a number, true/false or another @ path.
// Recursive descent (..), unions [a,b], =~ and literals outside filters are
// refused with an error naming them, never printed wrongly.
//
// Printing follows kubectl: the results of one {...} are separated by a
// space, strings print raw, objects and arrays as compact JSON, a missing
// key prints nothing (kubectl's --allow-missing-template-keys=true), an index
// out of range is an error. No newline is added.

#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kubeload::plugin {

struct JsonPathError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class JsonPath {
 public:
  // Throws JsonPathError naming the unsupported or malformed part.
  explicit JsonPath(std::string_view template_text);
  // Throws JsonPathError (an index out of range, [0] on an object).
  void execute(std::ostream& out, const nlohmann::json& data) const;

  // One path step: .name, [*] / .*, [start:end:step], or a quoted text.
  struct Step {
    enum class Kind { field, wildcard, slice, text, filter };
    Kind kind = Kind::field;
    std::string text;         // the field name or the quoted text
    bool array_only = false;  // [*]: arrays only (.* takes object values too)
    // slice bounds as written; end_derived: [N] means [N:N+1]
    std::optional<long> start, end, step;
    bool end_derived = false;
    // filter: keep the array's items whose `left` path exists (op empty) or
    // compares with `right` (a path) or `right_value` (a literal)
    std::vector<Step> left, right;
    std::string op;
    std::optional<nlohmann::json> right_value;
  };
  // One piece of the template: text outside braces, a {path}, {range path}, {end}.
  struct Piece {
    enum class Kind { text, path, range, end };
    Kind kind = Kind::text;
    std::string text;
    std::vector<Step> steps;
    size_t end_index = 0;  // range: the index of its {end} (or the size: to the end)
  };

 private:
  void run(std::ostream& out, size_t begin, size_t end, const nlohmann::json& data) const;
  std::vector<Piece> pieces_;
};

}  // namespace kubeload::plugin
