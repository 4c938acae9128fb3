#include "operator/config_map_refs.hpp"

#include <nlohmann/json.hpp>

namespace kubeload::controller {

std::vector<ConfigMapReference> config_map_references(const LoadTestSpec& spec) {
  std::vector<ConfigMapReference> refs;
  const auto add = [&](const std::optional<ObjectKeyRef>& ref, std::string field) {
    if (ref && ref->kind == ObjectKeyRef::Kind::config_map) {
      refs.push_back({ref->name, ref->key, std::move(field)});
    }
  };
  add(spec.tls.ca_from, "spec.target.tls.caFrom.configMapKeyRef");
  for (std::size_t i = 0; i < spec.data.size(); ++i) {
    add(spec.data[i].from, "spec.data[" + std::to_string(i) + "].configMapKeyRef");
  }
  return refs;
}

std::set<std::string> config_maps_to_read(const LoadTestSpec& spec) {
  std::set<std::string> names;
  for (const ConfigMapReference& ref : config_map_references(spec)) names.insert(ref.name);
  return names;
}

ConfigMapKeysView config_map_keys_view(const nlohmann::json& config_map) {
  ConfigMapKeysView view;
  view.found = true;
  for (const char* part : {"data", "binaryData"}) {
    const auto found = config_map.find(part);
    if (found == config_map.end() || !found->is_object()) continue;
    for (const auto& [key, value] : found->items()) view.keys.insert(key);
  }
  return view;
}

std::optional<std::string> missing_config_map_key(
    const LoadTestSpec& spec, const std::string& namespace_,
    const std::map<std::string, ConfigMapKeysView>& read) {
  for (const ConfigMapReference& ref : config_map_references(spec)) {
    const auto view = read.find(ref.name);
    if (view == read.end() || !view->second.unreadable.empty()) continue;
    const std::string named = "ConfigMap \"" + ref.name + "\"";
    if (!view->second.found) {
      return named + " (" + ref.field + ".name) does not exist in namespace " + namespace_;
    }
    if (!view->second.keys.contains(ref.key)) {
      return named + " has no key \"" + ref.key + "\" (" + ref.field + ".key)";
    }
  }
  return std::nullopt;
}

}  // namespace kubeload::controller
