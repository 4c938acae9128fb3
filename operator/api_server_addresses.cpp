#include "operator/api_server_addresses.hpp"

#include <algorithm>

#include "kubeload/target_policy.hpp"

namespace kubeload::controller {

using nlohmann::json;

std::string api_server_host(std::string_view server) {
  const auto scheme = server.find("://");
  std::string_view rest = server.substr(scheme == std::string_view::npos ? 0 : scheme + 3);
  rest = rest.substr(0, rest.find('/'));
  if (!rest.empty() && rest.front() == '[') return std::string(rest.substr(1, rest.find(']') - 1));
  return std::string(rest.substr(0, rest.rfind(':')));
}

namespace {
void add_strings(const json& list, std::vector<std::string>& out) {
  if (!list.is_array()) return;
  for (const auto& item : list) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
}
}  // namespace

std::vector<std::string> kubernetes_service_addresses(const json& service) {
  std::vector<std::string> out;
  if (!service.is_object() || !service.contains("spec") || !service["spec"].is_object()) return out;
  const json& spec = service["spec"];
  if (spec.contains("clusterIPs")) add_strings(spec["clusterIPs"], out);
  if (spec.contains("clusterIP") && spec["clusterIP"].is_string()) {
    out.push_back(spec["clusterIP"].get<std::string>());
  }
  return out;
}

std::vector<std::string> endpoint_slice_addresses(const json& slices) {
  std::vector<std::string> out;
  if (!slices.is_object() || !slices.contains("items") || !slices["items"].is_array()) return out;
  for (const auto& slice : slices["items"]) {
    if (!slice.is_object() || !slice.contains("endpoints") || !slice["endpoints"].is_array()) {
      continue;
    }
    for (const auto& endpoint : slice["endpoints"]) {
      if (endpoint.is_object() && endpoint.contains("addresses")) {
        add_strings(endpoint["addresses"], out);
      }
    }
  }
  return out;
}

std::vector<std::string> cluster_info_servers(const json& config_map) {
  std::vector<std::string> hosts;
  if (!config_map.is_object() || !config_map.contains("data") || !config_map["data"].is_object()) {
    return hosts;
  }
  const json& kubeconfig = config_map["data"].value("kubeconfig", json());
  if (!kubeconfig.is_string()) return hosts;
  // A line "server: https://HOST:PORT" (quoted or not) of the clusters list;
  // the kubeconfig has nothing else of that key.
  std::string_view rest = kubeconfig.get_ref<const std::string&>();
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    const auto key = line.find("server:");
    if (key == std::string_view::npos || line.find_first_not_of(" \t-") != key) {
      continue;
    }
    std::string_view value = line.substr(key + 7);
    while (!value.empty() &&
           (value.front() == ' ' || value.front() == '"' || value.front() == '\'')) {
      value.remove_prefix(1);
    }
    while (!value.empty() && (value.back() == ' ' || value.back() == '"' || value.back() == '\'' ||
                              value.back() == '\r')) {
      value.remove_suffix(1);
    }
    if (value.find("://") == std::string_view::npos) continue;
    if (std::string host = api_server_host(value); !host.empty()) hosts.push_back(std::move(host));
  }
  return hosts;
}

std::vector<std::string> address_deny_entries(const std::vector<std::string>& candidates) {
  std::vector<std::string> out;
  for (const auto& candidate : candidates) {
    if (!kubeload::Cidr::parse(candidate)) continue;
    if (std::find(out.begin(), out.end(), candidate) == out.end()) out.push_back(candidate);
  }
  return out;
}

}  // namespace kubeload::controller
