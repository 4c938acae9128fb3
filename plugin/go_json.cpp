// JSON and floats as Go writes them, for kubectl's printers and JSONPath.

#include "plugin/go_json.hpp"

#include <charconv>
#include <cmath>

namespace kubeload::plugin {
namespace {

using nlohmann::json;

// encoding/json's float: the shortest digits, exponent form only below 1e-6
// and from 1e21 (1e-07 written 1e-7); integral floats without ".0".
std::string go_json_float(double value) {
  const double magnitude = std::abs(value);
  char buffer[64];
  if (magnitude != 0 && (magnitude < 1e-6 || magnitude >= 1e21)) {
    const auto end =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
    std::string text(buffer, end.ptr);
    const size_t e = text.find('e');
    if (text.size() == e + 4 && text[e + 2] == '0') text.erase(e + 2, 1);  // e-07 -> e-7
    return text;
  }
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed);
  return std::string(buffer, end.ptr);
}

// Go's MarshalIndent(value, "", "    ") or Marshal: keys sorted (json's
// objects are), HTML characters escaped.
void write_go_json(std::string& out, const json& value, bool indented, int depth) {
  const auto newline = [&](int level) {
    if (!indented) return;
    out += '\n';
    out.append(static_cast<size_t>(level) * 4, ' ');
  };
  switch (value.type()) {
    case json::value_t::object: {
      if (value.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += ',';
        first = false;
        newline(depth + 1);
        write_go_json(out, json(key), indented, depth + 1);
        out += indented ? ": " : ":";
        write_go_json(out, item, indented, depth + 1);
      }
      newline(depth);
      out += '}';
      return;
    }
    case json::value_t::array: {
      if (value.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < value.size(); ++i) {
        if (i > 0) out += ',';
        newline(depth + 1);
        write_go_json(out, value[i], indented, depth + 1);
      }
      newline(depth);
      out += ']';
      return;
    }
    case json::value_t::string:
      // <, > and & as Go escapes them; nothing else in a JSON string changes.
      for (const char c : value.dump()) {
        if (c == '<') {
          out += "\\u003c";
        } else if (c == '>') {
          out += "\\u003e";
        } else if (c == '&') {
          out += "\\u0026";
        } else {
          out += c;
        }
      }
      return;
    case json::value_t::number_float:
      out += go_json_float(value.get<double>());
      return;
    default:
      out += value.dump();
      return;
  }
}

}  // namespace

std::string go_json(const json& value, bool indented) {
  std::string out;
  write_go_json(out, value, indented, 0);
  return out;
}

std::string go_float(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  const auto scientific =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const std::string shortest(buffer, scientific.ptr);
  const size_t e = shortest.find('e');
  const int exponent = std::stoi(shortest.substr(e + 1));
  if (exponent < -4 || exponent >= 6) return shortest;  // to_chars writes e+06 as Go does
  const auto fixed = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed);
  return std::string(buffer, fixed.ptr);
}

}  // namespace kubeload::plugin
