// The API server's addresses the operator denies as targets
// (operator/api_server_addresses.hpp), from the objects the API returns.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "operator/api_server_addresses.hpp"

namespace {

using nlohmann::json;
using namespace kubeload::controller;
using Addresses = std::vector<std::string>;

TEST(OperatorApiServerAddresses, TheHostOfTheServerUrl) {
  EXPECT_EQ(api_server_host("https://10.96.0.1:443"), "10.96.0.1");
  EXPECT_EQ(api_server_host("https://[fd00::1]:6443/prefix"), "fd00::1");
  EXPECT_EQ(api_server_host("https://api.example.test"), "api.example.test");
  EXPECT_EQ(api_server_host("127.0.0.1:6443"), "127.0.0.1");
}

TEST(OperatorApiServerAddresses, TheKubernetesServiceGivesEveryClusterIp) {
  const json dual = json::parse(R"({"kind": "Service", "spec": {
      "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1", "fd00:96::1"]}})");
  EXPECT_EQ(address_deny_entries(kubernetes_service_addresses(dual)),
            (Addresses{"10.96.0.1", "fd00:96::1"}));
  const json old = json::parse(R"({"spec": {"clusterIP": "10.0.0.1"}})");
  EXPECT_EQ(kubernetes_service_addresses(old), (Addresses{"10.0.0.1"}));
  EXPECT_TRUE(kubernetes_service_addresses(json::parse(R"({"spec": 3})")).empty());
  EXPECT_TRUE(kubernetes_service_addresses(nullptr).empty());
}

TEST(OperatorApiServerAddresses, TheEndpointSlicesGiveWhereTheApiServerServes) {
  // Two API servers (an HA control plane) in one slice, an IPv6 one in another.
  const json slices = json::parse(R"({"kind": "EndpointSliceList", "items": [
      {"addressType": "IPv4", "endpoints": [
        {"addresses": ["192.168.10.2"]}, {"addresses": ["192.168.10.3"]}]},
      {"addressType": "IPv6", "endpoints": [{"addresses": ["fd00:10::2"]}]},
      {"addressType": "IPv4"},
      {"addressType": "IPv4", "endpoints": [{"conditions": {"ready": true}}]}]})");
  EXPECT_EQ(endpoint_slice_addresses(slices),
            (Addresses{"192.168.10.2", "192.168.10.3", "fd00:10::2"}));
  EXPECT_TRUE(endpoint_slice_addresses(json::parse(R"({"items": []})")).empty());
  EXPECT_TRUE(endpoint_slice_addresses(json::parse(R"({"kind": "Status"})")).empty());
}

TEST(OperatorApiServerAddresses, OnlyAddressesEachOnce) {
  EXPECT_EQ(address_deny_entries({"10.96.0.1", "api.example.test", "", "None", "10.96.0.1",
                                  "192.168.10.2", "fd00::1"}),
            (Addresses{"10.96.0.1", "192.168.10.2", "fd00::1"}));
}

// Issue 26 item 1: the API server's real endpoint, as kubeadm publishes it in
// kube-public/cluster-info, was a valid target under the chart.
TEST(OperatorApiServerAddresses, ClusterInfoServers) {
  const json cluster_info = {
      {"data",
       {{"kubeconfig",
         "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: LS0t\n"
         "    server: https://192.168.10.2:6443\n  name: \"\"\n- cluster:\n"
         "    server: \"https://[fd00:10::2]:6443\"\n  name: v6\n- cluster:\n"
         "    server: https://api.k8s.example.test:443\r\ncontexts: null\n"
         "# server: https://10.0.0.9:6443 is a comment\n"}}}};
  EXPECT_EQ(cluster_info_servers(cluster_info),
            (Addresses{"192.168.10.2", "fd00:10::2", "api.k8s.example.test"}));
  EXPECT_TRUE(cluster_info_servers(json::object()).empty());
  EXPECT_TRUE(cluster_info_servers(json{{"data", {{"kubeconfig", 7}}}}).empty());
  EXPECT_TRUE(cluster_info_servers(json{{"data", {{"kubeconfig", "server: not-a-url"}}}}).empty());
}

}  // namespace
