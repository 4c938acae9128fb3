#include "operator/target_destinations.hpp"

#include <algorithm>
#include <variant>

#include "kubeload/json_access.hpp"
#include "kubeload/text.hpp"
#include "kubeload/url.hpp"

namespace kubeload::controller {

using json_access::count;
using json_access::member;
using json_access::text;

namespace {

std::vector<std::string> dns_labels(std::string_view name) {
  std::vector<std::string> labels;
  while (true) {
    const auto dot = name.find('.');
    labels.emplace_back(name.substr(0, dot));
    if (dot == std::string_view::npos) break;
    name.remove_prefix(dot + 1);
  }
  return labels;
}

std::string service_name(const ClusterHost& host) {
  return host.namespace_ + "/" + host.name;
}

bool in_any(const std::vector<Cidr>& ranges, const IpAddress& address) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [&](const Cidr& range) { return range.contains(address); });
}

}  // namespace

std::optional<ClusterHost> cluster_host(std::string_view host, std::string_view own_namespace,
                                        std::string_view cluster_domain) {
  std::string name = lowercase(host);
  if (!name.empty() && name.back() == '.') name.pop_back();
  if (name.empty() || !is_host_name(name) || IpAddress::parse(name)) return std::nullopt;
  std::vector<std::string> labels = dns_labels(name);
  if (std::any_of(labels.begin(), labels.end(), [](const std::string& l) { return l.empty(); })) {
    return std::nullopt;
  }
  const std::string domain = lowercase(cluster_domain);
  const std::size_t domain_labels = domain.empty() ? 0 : dns_labels(domain).size();
  const bool in_domain =
      !domain.empty() && name.size() > domain.size() + 1 && name.ends_with("." + domain);
  if (in_domain) labels.resize(labels.size() - domain_labels);
  if (labels.size() >= 3 && (labels.back() == "svc" || labels.back() == "pod")) {
    ClusterHost found;
    found.namespace_ = labels[labels.size() - 2];
    if (labels.back() == "svc") {
      // name.ns.svc, or a headless Service's pod: hostname.name.ns.svc
      found.name = labels[labels.size() - 3];
    } else {
      found.kind = ClusterHost::Kind::Pod;
    }
    return found;
  }
  if (in_domain) return std::nullopt;
  // The pods' search path (ns.svc.<domain>, svc.<domain>, <domain>) makes
  // "name" a Service of their own namespace and "name.ns" one of ns, when
  // those Services exist.
  if (labels.size() == 1)
    return ClusterHost{ClusterHost::Kind::Service, std::string(own_namespace), labels[0], false};
  if (labels.size() == 2)
    return ClusterHost{ClusterHost::Kind::Service, labels[1], labels[0], false};
  return std::nullopt;
}

std::optional<ClusterHost> target_cluster_host(const LoadTestSpec& spec,
                                               std::string_view own_namespace,
                                               std::string_view cluster_domain) {
  if (spec.service) {
    const ServiceRef& service = *spec.service;
    return ClusterHost{ClusterHost::Kind::Service,
                       service.namespace_.empty() ? std::string(own_namespace) : service.namespace_,
                       service.name, true};
  }
  if (!spec.url) return std::nullopt;
  const auto parsed = parse_http_url(*spec.url);
  const auto* url = std::get_if<HttpUrl>(&parsed);
  if (url == nullptr) return std::nullopt;
  return cluster_host(url->host, own_namespace, cluster_domain);
}

TargetServiceView target_service_view(const ClusterHost& host,
                                      const std::optional<nlohmann::json>& service,
                                      const nlohmann::json& endpoint_slices) {
  TargetServiceView view;
  view.host = host;
  if (!service) return view;
  view.found = true;
  const nlohmann::json& spec = member(*service, "spec");
  view.type = text(member(spec, "type"));
  if (view.type.empty()) view.type = "ClusterIP";
  std::vector<std::string> ips;
  for (const auto& ip : member(spec, "clusterIPs")) ips.push_back(text(ip));
  ips.push_back(text(member(spec, "clusterIP")));
  for (std::string& ip : ips) {
    if (ip.empty() || ip == "None") continue;
    if (std::find(view.cluster_ips.begin(), view.cluster_ips.end(), ip) == view.cluster_ips.end()) {
      view.cluster_ips.push_back(std::move(ip));
    }
  }
  for (const auto& [key, value] : member(spec, "selector").items()) {
    if (value.is_string()) view.selector[key] = value.get<std::string>();
  }
  for (const auto& slice : member(endpoint_slices, "items")) {
    const bool by_selector =
        text(member(member(member(slice, "metadata"), "labels"),
                    "endpointslice.kubernetes.io/managed-by")) == kEndpointSliceController;
    for (const auto& endpoint : member(slice, "endpoints")) {
      for (const auto& address : member(endpoint, "addresses")) {
        const std::string value = text(address);
        if (value.empty()) continue;
        const auto same =
            std::find_if(view.endpoints.begin(), view.endpoints.end(),
                         [&](const ServiceEndpoint& e) { return e.address == value; });
        if (same == view.endpoints.end()) {
          view.endpoints.push_back({value, by_selector});
        } else {
          // Listed by a slice of another manager as well: not only the selector's.
          same->chosen_by_selector = same->chosen_by_selector && by_selector;
        }
      }
    }
    for (const auto& port : member(slice, "ports")) {
      if (const auto number = count(member(port, "port")); number && *number <= 65535) {
        view.ports.insert(static_cast<uint16_t>(*number));
      }
    }
  }
  return view;
}

TargetPolicy target_policy_of(const OperatorConfig& config) {
  TargetPolicy policy;
  for (const std::string& text : config.target_deny_cidrs) {
    if (const auto cidr = Cidr::parse(text)) policy.deny.push_back(*cidr);
  }
  for (const std::string& text : config.target_allow_cidrs) {
    if (const auto cidr = Cidr::parse(text)) policy.allow.push_back(*cidr);
  }
  for (const std::string& text : config.cluster_cidrs) {
    if (const auto cidr = Cidr::parse(text)) policy.cluster_ranges.push_back(*cidr);
  }
  policy.deny_hosts = config.target_deny_hosts;
  return policy;
}

std::optional<std::string> target_refusal(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                          const std::optional<TargetServiceView>& target,
                                          const OperatorConfig& config) {
  const std::string& own = loadtest.metadata.namespace_;
  const std::optional<ClusterHost> host = target_cluster_host(spec, own, config.cluster_domain);
  if (!host) return std::nullopt;
  const bool found = target && target->found;
  const std::string field = spec.service ? "spec.target.service" : "spec.target.url";
  // ---- the namespace rule, whichever way the target names the other namespace
  if (!config.allow_other_namespace_services && !own.empty() && host->namespace_ != own &&
      (host->by_form || found)) {
    if (spec.service) {
      return "spec.target.service.namespace: \"" + host->namespace_ +
             "\" is not this LoadTest's namespace \"" + own +
             "\" (the operator loads Services of the LoadTest's own namespace only unless it "
             "runs with --allow-other-namespace-services)";
    }
    const std::string what = host->kind == ClusterHost::Kind::Pod
                                 ? "a pod of the namespace \"" + host->namespace_ + "\""
                                 : "the Service " + service_name(*host);
    return field + ": the host names " + what + ", not one of this LoadTest's namespace \"" + own +
           "\" (the operator loads its own namespace only unless it runs with "
           "--allow-other-namespace-services)";
  }
  if (host->kind != ClusterHost::Kind::Service) return std::nullopt;
  if (target && !target->found && !target->unreadable.empty() && host->by_form) {
    return field + ": the operator cannot read the Service " + service_name(*host) +
           " to decide where its traffic goes (" + target->unreadable +
           "; it needs get on services and list on endpointslices)";
  }
  if (!found) return std::nullopt;
  // ---- where kube-proxy sends the Service's traffic
  TargetPolicy lists = target_policy_of(config);
  const std::vector<Cidr> cluster_ranges = std::move(lists.cluster_ranges);
  lists.cluster_ranges.clear();
  const std::string service = "the Service " + service_name(*host);
  for (const uint16_t port : target->ports) {
    if (lists.deny_ports.contains(port)) {
      return field + ": " + service + " sends to port " + std::to_string(port) +
             " of its endpoints, a control-plane port (kubelet, etcd, controller manager or "
             "scheduler) that is never a target";
    }
  }
  for (const ServiceEndpoint& endpoint : target->endpoints) {
    const auto address = IpAddress::parse(endpoint.address);
    if (!address) continue;  // an FQDN endpoint: its address is the worker's to decide
    if (const TargetDecision decision = decide_target(lists, *address); !decision.allowed) {
      return field + ": " + service + " sends to its endpoint " + endpoint.address +
             ", which is refused: " + decision.reason;
    }
    if (!endpoint.chosen_by_selector && !config.allow_other_namespace_services &&
        in_any(cluster_ranges, *address)) {
      return field + ": " + service + " sends to " + endpoint.address +
             ", a cluster address its selector did not choose (an EndpointSlice not made by " +
             std::string(kEndpointSliceController) +
             "), which may be another namespace's pod (allowed only with "
             "--allow-other-namespace-services)";
    }
  }
  return std::nullopt;
}

std::vector<DecidedDestination> decided_destinations(const TargetServiceView& target) {
  std::vector<DecidedDestination> decided;
  if (!target.found || target.type == "ExternalName") return decided;
  std::vector<IpAddress> endpoints;
  for (const ServiceEndpoint& endpoint : target.endpoints) {
    if (const auto address = IpAddress::parse(endpoint.address)) endpoints.push_back(*address);
  }
  for (const std::string& ip : target.cluster_ips) {
    if (const auto address = IpAddress::parse(ip)) decided.push_back({*address, endpoints});
  }
  for (const IpAddress& endpoint : endpoints) decided.push_back({endpoint, {}});
  return decided;
}

}  // namespace kubeload::controller
