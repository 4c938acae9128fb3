#pragma once
// Lenient reading of a Kubernetes object's members for the api/ types
// (loadtest.cpp, loadtest_schedule.cpp): a member that is missing or of
// another type reads as unset, as the API server has checked the types.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/json_access.hpp"

namespace kubeload::api::lenient {

// An RFC 3339 time, to the whole second metav1.Time keeps (loadtest.cpp).
std::optional<std::chrono::system_clock::time_point> time_of(const nlohmann::json& value);
using json_access::integer;
using json_access::optional_text;
inline bool flag(const nlohmann::json& value) {
  return value.is_boolean() && value.get<bool>();
}
inline std::map<std::string, std::string> string_map(const nlohmann::json& value) {
  std::map<std::string, std::string> out;
  if (!value.is_object()) return out;
  for (const auto& [key, item] : value.items()) {
    if (item.is_string()) out.emplace(key, item.get<std::string>());
  }
  return out;
}
// The objects of an array, each read by `read`; other items are skipped.
template <typename T, typename Read>
std::vector<T> list_of(const nlohmann::json& value, Read read) {
  std::vector<T> out;
  if (!value.is_array()) return out;
  for (const nlohmann::json& item : value) {
    if (item.is_object()) out.push_back(read(item));
  }
  return out;
}

}  // namespace kubeload::api::lenient
