#pragma once
// Reading the fields of our own documents strictly (the result encoding,
// the worker protocol, the kept results): a missing or null field reads as
// its default, one of another type throws std::invalid_argument naming it
// ("<path>: <why>"). kubeload/json_access.hpp reads Kubernetes objects
// leniently instead (a field of another type reads as unset).

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kubeload::fields {

[[noreturn]] inline void bad_field(const std::string& path, const std::string& why) {
  throw std::invalid_argument(path + ": " + why);
}

// A value as an error message shows it: its JSON, cut short.
inline std::string shown(const nlohmann::json& value) {
  constexpr std::size_t kMax = 64;
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

// "<path>.<key>", or "<key>" at the top level (path "").
inline std::string at(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

inline void require_object(const nlohmann::json& in, const std::string& what) {
  if (!in.is_object()) bad_field(what, "must be a JSON object, got " + shown(in));
}

// The field, or nullptr when it is missing or null.
inline const nlohmann::json* find(const nlohmann::json& in, std::string_view key) {
  if (!in.is_object()) return nullptr;
  const auto it = in.find(key);
  return it == in.end() || it->is_null() ? nullptr : &*it;
}

inline std::optional<uint64_t> count(const nlohmann::json& in, std::string_view key,
                                     const std::string& path) {
  const nlohmann::json* v = find(in, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0)) {
    bad_field(at(path, key), "must be a non-negative integer, got " + shown(*v));
  }
  return v->get<uint64_t>();
}

inline std::optional<uint32_t> index(const nlohmann::json& in, std::string_view key,
                                     const std::string& path) {
  const std::optional<uint64_t> v = count(in, key, path);
  if (v && *v > std::numeric_limits<uint32_t>::max()) {
    bad_field(at(path, key), "must be a worker index (at most " +
                                 std::to_string(std::numeric_limits<uint32_t>::max()) + "), got " +
                                 std::to_string(*v));
  }
  return v ? std::optional<uint32_t>(static_cast<uint32_t>(*v)) : std::nullopt;
}

inline std::optional<int64_t> integer(const nlohmann::json& in, std::string_view key,
                                      const std::string& path) {
  const nlohmann::json* v = find(in, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number_unsigned() &&
      v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    bad_field(at(path, key), "must be an integer of 64 bits, got " + shown(*v));
  }
  if (!v->is_number_integer()) bad_field(at(path, key), "must be an integer, got " + shown(*v));
  return v->get<int64_t>();
}

inline std::optional<double> number(const nlohmann::json& in, std::string_view key,
                                    const std::string& path) {
  const nlohmann::json* v = find(in, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) bad_field(at(path, key), "must be a number, got " + shown(*v));
  return v->get<double>();
}

inline std::optional<bool> boolean(const nlohmann::json& in, std::string_view key,
                                   const std::string& path) {
  const nlohmann::json* v = find(in, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) bad_field(at(path, key), "must be true or false, got " + shown(*v));
  return v->get<bool>();
}

inline std::optional<std::string> text(const nlohmann::json& in, std::string_view key,
                                       const std::string& path) {
  const nlohmann::json* v = find(in, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) bad_field(at(path, key), "must be a string, got " + shown(*v));
  return v->get<std::string>();
}

}  // namespace kubeload::fields
