#include "kubeload/api/status.hpp"

namespace kubeload::api {

using detail::parse;

std::optional<Phase> parse_phase(std::string_view text) noexcept {
  return parse(kPhases, text);
}
std::optional<Verdict> parse_verdict(std::string_view text) noexcept {
  return parse(kVerdicts, text);
}
std::optional<ConditionType> parse_condition_type(std::string_view text) noexcept {
  return parse(kConditionTypes, text);
}
std::optional<ConditionStatus> parse_condition_status(std::string_view text) noexcept {
  return parse(kConditionStatuses, text);
}
std::optional<Reason> parse_reason(std::string_view text) noexcept {
  return parse(kReasons, text);
}

bool is_final_phase(std::string_view phase) noexcept {
  const std::optional<Phase> parsed = parse_phase(phase);
  return parsed && is_final(*parsed);
}

}  // namespace kubeload::api
