#pragma once
// kubectl's printers for -o json|yaml|name|jsonpath=TEMPLATE: the LoadTest
// objects themselves, one object or a List of them, printed the way
// `kubectl get` prints them, so scripts written against kubectl work here.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin/go_json.hpp"

namespace kubeload::plugin {

enum class ObjectFormat { json, yaml, name, jsonpath };

struct ObjectOutput {
  ObjectFormat format = ObjectFormat::json;
  std::string jsonpath;  // the TEMPLATE of jsonpath=TEMPLATE
};

// The -o value as an object format ("json", "yaml", "name", "jsonpath=T"),
// nullopt when it is none of them. Throws JsonPathError for a bad template
// and UsageError for "jsonpath" without a template or kubectl formats this
// plugin does not print (go-template, custom-columns, wide, ...).
std::optional<ObjectOutput> parse_object_output(const std::string& flag, const std::string& value);
// What the usage errors list: "json, yaml, name, jsonpath=TEMPLATE".
inline constexpr std::string_view kObjectFormats = "json, yaml, name, jsonpath=TEMPLATE";

// Prints one object (json: 4-space indented like kubectl; yaml: block YAML;
// name: kind.group/name; jsonpath: the template, no newline added).
void write_object(std::ostream& out, const ObjectOutput& output, const nlohmann::json& object);
// Prints several objects as `kubectl get` prints a list: json, yaml and
// jsonpath see {"apiVersion":"v1","kind":"List","items":[...]}; name prints
// one line per object.
void write_object_list(std::ostream& out, const ObjectOutput& output,
                       const std::vector<nlohmann::json>& objects);

// "loadtest.kubeload.dev/NAME": kubectl's -o name of an object, from its
// apiVersion, kind and metadata.name.
std::string object_name(const nlohmann::json& object);

}  // namespace kubeload::plugin
