// Where a run's packets go (issue 26): which host names are Services or pods
// of which namespace, the refusals for a target whose Service leads to a
// denied address or to another namespace, and what the worker is told.
// Each row is a way a tenant could try to reach what the policy denies.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/spec.hpp"
#include "operator/config.hpp"
#include "operator/run_policy.hpp"
#include "operator/target_destinations.hpp"

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;

struct HostRow {
  std::string host;
  std::string domain = "cluster.local";
  std::optional<std::string> expected;  // "Service ns/name", "Pod ns", "+" when by its form
};

std::string describe(const std::optional<ClusterHost>& host) {
  if (!host) return "none";
  std::string out = host->kind == ClusterHost::Kind::Pod
                        ? "Pod " + host->namespace_
                        : "Service " + host->namespace_ + "/" + host->name;
  return host->by_form ? out + " +" : out;
}

TEST(TargetDestinations, ClusterHostNamesEveryFormTheClusterDnsAnswers) {
  const std::vector<HostRow> rows = {
      {"checkout", "cluster.local", "Service shop/checkout"},
      {"vault.team-b", "cluster.local", "Service team-b/vault"},
      {"vault2.other-ns.svc.cluster.local", "cluster.local", "Service other-ns/vault2 +"},
      {"VAULT2.Other-NS.SVC.Cluster.Local.", "cluster.local", "Service other-ns/vault2 +"},
      {"vault2.other-ns.svc", "cluster.local", "Service other-ns/vault2 +"},
      {"vault2.other-ns.svc.", "cluster.local", "Service other-ns/vault2 +"},
      {"web-0.web.team-b.svc.cluster.local", "cluster.local", "Service team-b/web +"},
      {"10-244-0-7.team-b.pod.cluster.local", "cluster.local", "Pod team-b +"},
      {"10-244-0-7.team-b.pod", "cluster.local", "Pod team-b +"},
      {"web.shop.svc.corp.internal", "corp.internal", "Service shop/web +"},
      {"api.example.com", "cluster.local", std::nullopt},
      {"a.b.c.cluster.local", "cluster.local", std::nullopt},
      {"10.244.0.7", "cluster.local", std::nullopt},
      {"::1", "cluster.local", std::nullopt},
      {"", "cluster.local", std::nullopt},
      {"bad..name.svc", "cluster.local", std::nullopt},
  };
  for (const HostRow& row : rows) {
    SCOPED_TRACE(row.host);
    EXPECT_EQ(describe(cluster_host(row.host, "shop", row.domain)), row.expected.value_or("none"));
  }
}

json loadtest(const std::string& target) {
  json lt = {{"apiVersion", "kubeload.dev/v1alpha1"},
             {"kind", "LoadTest"},
             {"metadata", {{"name", "checkout"}, {"namespace", "shop"}, {"uid", "u-1"}}},
             {"spec", {{"load", {{"duration", "1m"}}}, {"target", json::parse(target)}}}};
  return lt;
}

// A Service of `ns`/`name` and its EndpointSlices, as the API server holds
// them: ClusterIP 10.245.0.20 in front of 10.244.0.6 and 10.244.0.7, chosen
// by its selector, on port 8080.
struct ServiceShape {
  std::string type = "ClusterIP";
  bool selector = true;
  std::string managed_by = "endpointslice-controller.k8s.io";
  std::vector<std::string> addresses = {"10.244.0.6", "10.244.0.7"};
  int port = 8080;
};
json service_json(const ServiceShape& shape) {
  json service = {{"spec", {{"type", shape.type}}}};
  if (shape.type == "ExternalName") {
    service["spec"]["externalName"] = "vault.team-b.svc.cluster.local";
  } else {
    service["spec"]["clusterIP"] = "10.245.0.20";
    service["spec"]["clusterIPs"] = {"10.245.0.20"};
  }
  if (shape.selector) service["spec"]["selector"] = {{"app", "checkout"}};
  return service;
}
json slices_json(const ServiceShape& shape) {
  json endpoints = json::array();
  for (const std::string& address : shape.addresses) {
    endpoints.push_back({{"addresses", {address}}});
  }
  return {
      {"items",
       {{{"metadata", {{"labels", {{"endpointslice.kubernetes.io/managed-by", shape.managed_by}}}}},
         {"endpoints", endpoints},
         {"ports", {{{"port", shape.port}}}}}}}};
}

// What observe() would read for this target: the Service when it is `found`.
std::optional<TargetServiceView> observed(const LoadTestSpec& spec, const OperatorConfig& config,
                                          bool found, const ServiceShape& shape,
                                          const std::string& unreadable = "") {
  const auto host = target_cluster_host(spec, "shop", config.cluster_domain);
  if (!host || host->kind != ClusterHost::Kind::Service) return std::nullopt;
  TargetServiceView view = target_service_view(
      *host, found && unreadable.empty() ? std::optional<json>(service_json(shape)) : std::nullopt,
      slices_json(shape));
  view.unreadable = unreadable;
  return view;
}

struct RefusalRow {
  std::string name;
  std::string target;  // spec.target
  OperatorConfig config;
  bool found = true;  // the target Service exists
  ServiceShape shape = {};
  std::optional<std::string> refusal;  // a part of the message; nullopt: allowed
  std::string unreadable = "";
};

OperatorConfig deny_pod() {
  OperatorConfig config;
  config.target_deny_cidrs = {"10.244.0.7/32"};
  config.cluster_cidrs = {"10.244.0.0/16", "10.245.0.0/16"};
  return config;
}

std::vector<RefusalRow> refusal_rows() {
  OperatorConfig others = deny_pod();
  others.allow_other_namespace_services = true;
  OperatorConfig plain;
  ServiceShape only_allowed;
  only_allowed.addresses = {"10.244.0.6"};
  ServiceShape selectorless;
  selectorless.selector = false;
  selectorless.managed_by = "user";
  selectorless.addresses = {"10.244.3.9"};
  ServiceShape outside_selectorless = selectorless;
  outside_selectorless.addresses = {"192.0.2.10"};
  ServiceShape kubelet = only_allowed;
  kubelet.port = 10250;
  ServiceShape external_name;
  external_name.type = "ExternalName";
  external_name.addresses = {};
  return {
      {"a denied pod behind an allowed Service, by service:",
       R"({"service": {"name": "checkout", "port": 8080}})",
       deny_pod(),
       true,
       {},
       "the Service shop/checkout sends to its endpoint 10.244.0.7, which is refused"},
      {"... by the Service's FQDN in the url",
       R"({"url": "http://checkout.shop.svc.cluster.local:8080/"})",
       deny_pod(),
       true,
       {},
       "spec.target.url: the Service shop/checkout sends to its endpoint 10.244.0.7"},
      {"... by its short name in the url",
       R"({"url": "http://checkout:8080/"})",
       deny_pod(),
       true,
       {},
       "10.244.0.7"},
      {"... by name.namespace in the url",
       R"({"url": "http://CHECKOUT.shop:8080/"})",
       deny_pod(),
       true,
       {},
       "10.244.0.7"},
      {"the same Service without the denied pod",
       R"({"service": {"name": "checkout", "port": 8080}})", deny_pod(), true, only_allowed,
       std::nullopt},
      {"a name that is no Service is the worker's to resolve",
       R"({"url": "http://checkout:8080/"})",
       deny_pod(),
       false,
       {},
       std::nullopt},
      {"another namespace's Service by url",
       R"({"url": "http://vault2.other-ns.svc.cluster.local/"})",
       deny_pod(),
       false,
       {},
       "spec.target.url: the host names the Service other-ns/vault2, not one of this LoadTest's "
       "namespace \"shop\""},
      {"... with a final dot and upper case",
       R"({"url": "http://Vault2.OTHER-NS.svc.cluster.local./"})",
       deny_pod(),
       false,
       {},
       "the Service other-ns/vault2"},
      {"... by name.namespace when that Service exists", R"({"url": "http://vault2.other-ns/"})",
       deny_pod(), true, only_allowed, "the Service other-ns/vault2"},
      {"... a headless Service's pod by name",
       R"({"url": "http://vault-0.vault.other-ns.svc:8200/"})", deny_pod(), true, only_allowed,
       "the Service other-ns/vault"},
      {"... a pod of another namespace by its DNS name",
       R"({"url": "http://10-244-3-9.other-ns.pod/"})",
       deny_pod(),
       false,
       {},
       "a pod of the namespace \"other-ns\""},
      {"... by service: with a namespace",
       R"({"service": {"name": "vault2", "namespace": "other-ns", "port": 80}})", deny_pod(), true,
       only_allowed, "spec.target.service.namespace: \"other-ns\""},
      {"another namespace's Service when the admin allows it",
       R"({"url": "http://vault2.other-ns.svc/"})", others, true, only_allowed, std::nullopt},
      {"a selector-less Service in front of a cluster address it did not choose",
       R"({"service": {"name": "checkout", "port": 8080}})", deny_pod(), true, selectorless,
       "sends to 10.244.3.9, a cluster address its selector did not choose"},
      {"... allowed when the admin allows other namespaces",
       R"({"service": {"name": "checkout", "port": 8080}})", others, true, selectorless,
       std::nullopt},
      {"a selector-less Service in front of an outside address the lists allow",
       R"({"service": {"name": "checkout", "port": 8080}})", deny_pod(), true, outside_selectorless,
       std::nullopt},
      {"... and the lists deny it (the cloud metadata addresses by default)",
       R"({"service": {"name": "checkout", "port": 8080}})", plain, true,
       ServiceShape{"ClusterIP", false, "user", {"169.254.169.254"}, 80}, "169.254.169.254"},
      {"a Service in front of the kubelet port",
       R"({"service": {"name": "checkout", "port": 8080}})", deny_pod(), true, kubelet,
       "sends to port 10250 of its endpoints, a control-plane port"},
      {"an ExternalName Service: its name is the worker's to resolve",
       R"({"service": {"name": "checkout", "port": 8080}})", deny_pod(), true, external_name,
       std::nullopt},
      {"a Service the operator may not read, named by its form",
       R"({"url": "http://checkout.shop.svc:8080/"})",
       deny_pod(),
       true,
       {},
       "cannot read the Service shop/checkout",
       "403 Forbidden"},
      {"no cluster host: nothing to look up",
       R"({"url": "http://127.0.0.1:8080/"})",
       deny_pod(),
       false,
       {},
       std::nullopt},
  };
}

TEST(TargetDestinations, RefusalsWhereverTheTargetLeads) {
  for (const RefusalRow& row : refusal_rows()) {
    SCOPED_TRACE(row.name);
    const json lt = loadtest(row.target);
    const ParsedLoadTest parsed = parse_loadtest(lt.dump());
    ASSERT_TRUE(parsed.ok()) << parsed.errors.front().to_string();
    const auto target = observed(parsed.spec, row.config, row.found, row.shape, row.unreadable);
    // Through the one entry plan() uses, so the rule cannot be skipped there.
    const std::optional<std::string> refusal = policy_refusal(lt, parsed.spec, row.config, target);
    if (!row.refusal) {
      EXPECT_EQ(refusal, std::nullopt);
    } else {
      ASSERT_TRUE(refusal.has_value());
      EXPECT_NE(refusal->find(*row.refusal), std::string::npos) << *refusal;
    }
  }
}

TEST(TargetDestinations, TheWorkerIsToldEachClusterIpWithWhatIsBehindItAndEachEndpoint) {
  const ClusterHost host{ClusterHost::Kind::Service, "shop", "checkout", true};
  const TargetServiceView view = target_service_view(host, service_json({}), slices_json({}));
  std::vector<std::string> told;
  for (const DecidedDestination& d : decided_destinations(view)) {
    told.push_back(format_decided_destination(d));
  }
  EXPECT_EQ(told, (std::vector<std::string>{"10.245.0.20=10.244.0.6,10.244.0.7",
                                            "10.244.0.6=", "10.244.0.7="}));
  ServiceShape external_name;
  external_name.type = "ExternalName";
  EXPECT_TRUE(
      decided_destinations(target_service_view(host, service_json(external_name), json::object()))
          .empty());
  EXPECT_TRUE(
      decided_destinations(target_service_view(host, std::nullopt, json::object())).empty());
}

TEST(TargetDestinations, AnAddressListedByTwoManagersIsNotOnlyTheSelectors) {
  const ClusterHost host{ClusterHost::Kind::Service, "shop", "checkout", true};
  json slices = slices_json({});
  json mirrored = slices_json(ServiceShape{
      "ClusterIP", true, "endpointslicemirroring-controller.k8s.io", {"10.244.0.7"}, 8080});
  slices["items"].push_back(mirrored["items"][0]);
  const TargetServiceView view = target_service_view(host, service_json({}), slices);
  ASSERT_EQ(view.endpoints.size(), 2u);
  EXPECT_TRUE(view.endpoints[0].chosen_by_selector);
  EXPECT_FALSE(view.endpoints[1].chosen_by_selector);
}

}  // namespace
