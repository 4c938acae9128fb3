#pragma once
// Where a run's packets really go (issue 26): the worker decides the address
// it connects to, but behind a Service's cluster IP kube-proxy sends them to
// the Service's endpoints, and a cluster DNS name says whose namespace they
// are in. The operator reads the target Service and its EndpointSlices, and
// from them (pure functions here) refuses a run whose target leads to a
// denied address or to another namespace, tells the worker which cluster
// addresses it may use and what is behind each (--decided-destination), and
// lets the run's NetworkPolicy allow egress to those pods and nowhere else in
// the cluster.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/spec.hpp"
#include "kubeload/target_policy.hpp"
#include "operator/config.hpp"

namespace kubeload::controller {

// A host name that the cluster's DNS answers: a Service (name.ns.svc, with or
// without the cluster domain; a headless Service's pod, host.name.ns.svc) or
// a pod (a-b-c-d.ns.pod). `by_form` when the name's own form says so; a name
// of one or two labels ("nginx", "vault.team-b") reaches a Service through the
// pods' DNS search path only when that Service exists, so it is one only if
// the lookup finds it.
struct ClusterHost {
  enum class Kind { Service, Pod };
  Kind kind = Kind::Service;
  std::string namespace_;
  std::string name;  // the Service's; empty for a pod
  bool by_form = true;
};
std::optional<ClusterHost> cluster_host(std::string_view host, std::string_view own_namespace,
                                        std::string_view cluster_domain);

// The Service a run's target may be: spec.target.service, or the url's host
// when it is a Service name (cluster_host). What observe() looks up before
// the Job is created.
std::optional<ClusterHost> target_cluster_host(const LoadTestSpec& spec,
                                               std::string_view own_namespace,
                                               std::string_view cluster_domain);

// kubernetes.io/service-name's EndpointSlices are made by this controller
// from the Service's selector, which picks pods of the Service's namespace
// only; any other manager's (a user's, the mirroring of hand-written
// Endpoints) can list any address.
inline constexpr std::string_view kEndpointSliceController = "endpointslice-controller.k8s.io";

struct ServiceEndpoint {
  std::string address;
  bool chosen_by_selector = false;  // from kEndpointSliceController's slices
};

// The target Service as observe() read it.
struct TargetServiceView {
  ClusterHost host;
  bool found = false;
  std::string unreadable;  // the API server's answer when it could not be read (403, ...)
  std::string type;        // ClusterIP, NodePort, LoadBalancer, ExternalName
  std::vector<std::string> cluster_ips;  // "None" and empty left out: a headless Service has none
  std::map<std::string, std::string> selector;
  std::vector<ServiceEndpoint> endpoints;  // every slice's, each address once
  std::set<uint16_t> ports;                // the endpoints' ports (the Service's targetPorts)
};
// From the Service (unset: not found) and its EndpointSliceList.
TargetServiceView target_service_view(const ClusterHost& host,
                                      const std::optional<nlohmann::json>& service,
                                      const nlohmann::json& endpoint_slices);

// The admin's policy as the workers get it (config.hpp's target fields; the
// cluster ranges are --cluster-cidr's).
TargetPolicy target_policy_of(const OperatorConfig& config);

// Why the target may not be loaded, naming the field, the host or Service,
// the address and the rule; nullopt when it may. `target` is what observe()
// read for target_cluster_host (unset when there is none).
std::optional<std::string> target_refusal(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                          const std::optional<TargetServiceView>& target,
                                          const OperatorConfig& config);

// What the worker is told (--decided-destination): each cluster IP with the
// endpoints behind it, and each endpoint as itself (a headless Service's DNS
// answers with them).
std::vector<DecidedDestination> decided_destinations(const TargetServiceView& target);

}  // namespace kubeload::controller
