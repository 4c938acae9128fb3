#pragma once
// Reading Kubernetes objects and our own documents as JSON without throwing:
// a missing member, or one of another type, reads as null or "".

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
