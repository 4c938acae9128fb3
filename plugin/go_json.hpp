#pragma once
// JSON and numbers as Go writes them, so the plugin's output matches
// kubectl's byte for byte (printers.cpp, jsonpath.cpp).

#include <string>

#include <nlohmann/json.hpp>

namespace kubeload::plugin {

// JSON as Go's encoding/json writes it: keys sorted, <, > and & escaped as
// \u003c, \u003e, \u0026; compact, or indented by 4 spaces.
std::string go_json(const nlohmann::json& value, bool indented);
// A float as Go's fmt %v and strconv 'g' -1 write it: the shortest digits,
// exponent form (1.2345678e+06) below 1e-4 and from 1e21.
std::string go_float(double value);

}  // namespace kubeload::plugin
