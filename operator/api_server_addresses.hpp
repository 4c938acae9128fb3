#pragma once
// The API server's addresses, which are never a load target (the worker's
// --deny-cidr): its host as this operator reaches it, KUBERNETES_SERVICE_HOST,
// the `kubernetes` Service's cluster IPs, the API server's own endpoints
// (that Service's EndpointSlices) and what kube-public/cluster-info
// publishes. The operator reads the last two at start,
// so neither the chart nor the admin has to know them in advance. Pure: the
// objects come from main.cpp's calls.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kubeload::controller {

// The host of https://HOST:PORT/..., the brackets of an IPv6 literal removed.
std::string api_server_host(std::string_view server);

// spec.clusterIPs (and spec.clusterIP) of the default/kubernetes Service.
std::vector<std::string> kubernetes_service_addresses(const nlohmann::json& service);

// Every endpoint address of an EndpointSliceList (discovery.k8s.io/v1).
std::vector<std::string> endpoint_slice_addresses(const nlohmann::json& slices);

// The hosts of the `server:` URLs in kube-public/cluster-info's kubeconfig
// (what kubeadm and most installers publish: the API server's real address
// or load balancer name, which the `kubernetes` Service hides).
std::vector<std::string> cluster_info_servers(const nlohmann::json& config_map);

// The candidates that are addresses (not host names, not "None" or empty),
// each once, in their first order.
std::vector<std::string> address_deny_entries(const std::vector<std::string>& candidates);

}  // namespace kubeload::controller
