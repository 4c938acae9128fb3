// kubectl's object printers: JSON and YAML of the objects, their names, and
// JSONPath templates over them (jsonpath.cpp).

#include "plugin/printers.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>

#include <yaml-cpp/yaml.h>

#include "kubeload/json_access.hpp"
#include "kubeload/text.hpp"
#include "plugin/jsonpath.hpp"
#include "plugin/usage_error.hpp"

namespace kubeload::plugin {
namespace {

using json_access::member;
using json_access::text;
using nlohmann::json;

json list_of(const std::vector<json>& objects) {
  return {{"apiVersion", "v1"},
          {"kind", "List"},
          {"items", objects},
          {"metadata", {{"resourceVersion", ""}}}};
}

// Whether a plain YAML scalar with this text would be read back as something
// other than a string (YAML 1.1 as go-yaml and kubectl read it): such strings
// are quoted, as kubectl quotes creationTimestamp.
bool reads_as_non_string(const std::string& value) {
  static const std::regex kNonString(
      R"(^(|~|null|Null|NULL|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$)"
      R"(|^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$)"
      R"(|^[-+]?0[xob]?[0-9a-fA-F_]+$|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$)"
      R"(|^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2})");
  return std::regex_search(value, kNonString);
}

void emit_yaml(YAML::Emitter& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      if (value.empty()) out << YAML::Flow;  // {} on the key's line, as kubectl prints it
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key;
        if (reads_as_non_string(key)) out << YAML::DoubleQuoted;
        out << key << YAML::Value;
        emit_yaml(out, item);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      if (value.empty()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const json& item : value) emit_yaml(out, item);
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      if (reads_as_non_string(s)) out << YAML::DoubleQuoted;
      out << s;
      break;
    }
    case json::value_t::number_float:
      out << go_float(value.get<double>());
      break;
    case json::value_t::null:
      out << YAML::Null;
      break;
    default:  // integers and bools
      out << value.dump();
      break;
  }
}

}  // namespace

std::optional<ObjectOutput> parse_object_output(const std::string& flag, const std::string& value) {
  if (value == "json") return ObjectOutput{ObjectFormat::json, {}};
  if (value == "yaml") return ObjectOutput{ObjectFormat::yaml, {}};
  if (value == "name") return ObjectOutput{ObjectFormat::name, {}};
  if (value.rfind("jsonpath=", 0) == 0) {
    std::string template_text = value.substr(std::string_view("jsonpath=").size());
    if (template_text.empty()) throw UsageError(flag + ": jsonpath= needs a template");
    try {
      JsonPath{template_text};
    } catch (const JsonPathError& e) {
      throw UsageError(flag + ": jsonpath template \"" + template_text + "\": " + e.what());
    }
    return ObjectOutput{ObjectFormat::jsonpath, std::move(template_text)};
  }
  if (value == "jsonpath") {
    throw UsageError(flag + ": jsonpath needs a template: -o jsonpath='{.metadata.name}'");
  }
  for (const char* kubectl_only :
       {"jsonpath-file", "jsonpath-as-json", "go-template", "go-template-file", "template",
        "templatefile", "custom-columns", "custom-columns-file", "wide"}) {
    const std::string prefix(kubectl_only);
    if (value == prefix || value.rfind(prefix + "=", 0) == 0) {
      throw UsageError(flag + ": \"" + value +
                       "\" is a kubectl format this plugin does not print (" +
                       std::string(kObjectFormats) + " are)");
    }
  }
  return std::nullopt;
}

std::string object_name(const json& object) {
  const std::string api_version = text(member(object, "apiVersion"));
  const std::string kind = lowercase(text(member(object, "kind")));
  const size_t slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  return kind + (group.empty() ? "" : "." + group) + "/" +
         text(member(member(object, "metadata"), "name"));
}

void write_object(std::ostream& out, const ObjectOutput& output, const json& object) {
  switch (output.format) {
    case ObjectFormat::json:
      out << go_json(object, true) << "\n";
      break;
    case ObjectFormat::yaml: {
      YAML::Emitter emitter;
      emit_yaml(emitter, object);
      out << emitter.c_str() << "\n";
      break;
    }
    case ObjectFormat::name:
      out << object_name(object) << "\n";
      break;
    case ObjectFormat::jsonpath:
      JsonPath(output.jsonpath).execute(out, object);
      break;
  }
}

void write_object_list(std::ostream& out, const ObjectOutput& output,
                       const std::vector<json>& objects) {
  if (output.format == ObjectFormat::name) {
    for (const json& object : objects) out << object_name(object) << "\n";
    return;
  }
  write_object(out, output, list_of(objects));
}

}  // namespace kubeload::plugin
