#include "common/scenario/check.hpp"

namespace kubeload::scenario {

std::variant<Check, std::string> Check::compile(std::string_view name, const CheckRule& rule) {
  const std::string where = name.empty() ? "" : "check " + std::string(name) + ": ";
  Check check;
  check.kind_ = rule.kind;
  if (rule.kind == CheckKind::body_contains) {
    if (rule.expected.empty()) return where + "the text to look for is empty";
    check.expected_ = rule.expected;
    return check;
  }
  auto pointer = JsonPointer::parse(rule.pointer);
  if (auto* problem = std::get_if<std::string>(&pointer)) return where + *problem;
  check.pointer_ = std::move(std::get<JsonPointer>(pointer));
  if (rule.kind == CheckKind::json_equals) {
    check.expected_ = rule.expected;
    return check;
  }
  auto regex = Regex::compile(rule.expected, Regex::Anchoring::whole);
  if (auto* problem = std::get_if<std::string>(&regex)) return where + *problem;
  check.regex_ = std::move(std::get<Regex>(regex));
  return check;
}

bool Check::passes(const ResponseView& response, std::string& scratch,
                   MatchScratch& match_scratch) const {
  if (kind_ == CheckKind::body_contains) {
    return response.body.find(expected_) != std::string_view::npos;
  }
  const auto value = pointer_->find(response.body);
  if (!value) return false;
  scratch.clear();
  if (!append_json_text(*value, scratch)) return false;
  if (kind_ == CheckKind::json_equals) return scratch == expected_;
  return regex_->search(scratch, 0, match_scratch).has_value();
}

}  // namespace kubeload::scenario
