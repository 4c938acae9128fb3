#include "kubeload/api/status.hpp"

#include <algorithm>

namespace kubeload::api {
namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> read(const std::array<std::pair<Enum, std::string_view>, N>& table,
                         std::string_view text) noexcept {
  const auto row = std::find_if(table.begin(), table.end(),
                                [text](const auto& entry) { return entry.second == text; });
  if (row == table.end()) return std::nullopt;
  return row->first;
}

}  // namespace

std::optional<Phase> parse_phase(std::string_view text) noexcept {
  return read(kPhases, text);
}
std::optional<Verdict> parse_verdict(std::string_view text) noexcept {
  return read(kVerdicts, text);
}
std::optional<ConditionType> parse_condition_type(std::string_view text) noexcept {
  return read(kConditionTypes, text);
}
std::optional<ConditionStatus> parse_condition_status(std::string_view text) noexcept {
  return read(kConditionStatuses, text);
}
std::optional<Reason> parse_reason(std::string_view text) noexcept {
  return read(kReasons, text);
}

bool is_final_phase(std::string_view phase) noexcept {
  const std::optional<Phase> parsed = parse_phase(phase);
  return parsed && is_final(*parsed);
}

}  // namespace kubeload::api
