#pragma once
// Reading Kubernetes objects and our own documents as JSON without throwing:
// a missing member, or one of another type, reads as null or "".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kubeload::json_access {

inline const nlohmann::json& member(const nlohmann::json& object, std::string_view key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

inline std::string text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : "";
}

// A count (a non-negative integer): parsed from the API server it is
// unsigned, built in code it may be signed. nullopt for anything else.
inline std::optional<uint64_t> count(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) return value.get<uint64_t>();
  return std::nullopt;
}
inline uint64_t count_or_zero(const nlohmann::json& value) {
  return count(value).value_or(0);
}

inline std::optional<int64_t> integer(const nlohmann::json& value) {
  if (!value.is_number_integer()) return std::nullopt;
  return value.get<int64_t>();
}

inline std::optional<std::string> optional_text(const nlohmann::json& value) {
  if (!value.is_string()) return std::nullopt;
  return value.get<std::string>();
}

inline std::optional<double> number(const nlohmann::json& value) {
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();
}

// The first condition of `type` in a Kubernetes conditions list, or nullptr.
inline const nlohmann::json* find_condition(const nlohmann::json& conditions,
                                            std::string_view type) {
  if (!conditions.is_array()) return nullptr;
  for (const nlohmann::json& condition : conditions) {
    if (text(member(condition, "type")) == type) return &condition;
  }
  return nullptr;
}

}  // namespace kubeload::json_access
