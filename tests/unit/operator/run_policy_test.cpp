// The operator's ceilings and scheduling rules for a LoadTest, table-tested:
// each row is a LoadTest spec and an operator configuration, and the refusal
// (or none) the operator must give before it creates anything.

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/spec.hpp"
#include "operator/config.hpp"
#include "operator/run_policy.hpp"

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;
using namespace std::chrono_literals;

json loadtest(const std::string& spec) {
  json lt = {{"apiVersion", "kubeload.dev/v1alpha1"},
             {"kind", "LoadTest"},
             {"metadata", {{"name", "checkout"}, {"namespace", "shop"}, {"uid", "u-1"}}},
             {"spec", json::parse(spec)}};
  if (!lt["spec"].contains("target")) {
    lt["spec"]["target"] = {{"url", "http://checkout.shop.svc:8080/"}};
  }
  return lt;
}

OperatorConfig ceilings() {
  OperatorConfig config;
  config.max_workers = 10;
  config.max_rate = 1000;
  config.max_connections = 200;
  config.max_duration = 2h;
  return config;
}

struct Row {
  std::string name;
  std::string spec;
  OperatorConfig config;
  std::optional<std::string> refusal;  // a part of the message; nullopt: allowed
};

std::vector<Row> rows() {
  OperatorConfig nothing_allowed = ceilings();
  nothing_allowed.worker_scheduling_overrides.clear();
  OperatorConfig control_plane_allowed = ceilings();
  control_plane_allowed.allow_control_plane_workers = true;
  OperatorConfig other_namespaces = ceilings();
  other_namespaces.allow_other_namespace_services = true;
  OperatorConfig images = ceilings();
  images.loadgen_image = "ghcr.io/kubeload/loadgen:1.2";
  images.allowed_worker_images = {"registry.shop/loadgen:1.2-fips"};
  return {
      {"within every ceiling",
       R"({"workers": 10, "load": {"rate": 1000, "maxConnections": 200, "duration": "2h"}})",
       ceilings(), std::nullopt},
      {"no ceilings configured: anything the spec allows",
       R"({"workers": 500, "load": {"rate": 100000, "maxConnections": 5000, "duration": "100h"}})",
       OperatorConfig{}, std::nullopt},
      {"workers above the ceiling",
       R"({"workers": 11, "load": {"connections": 20, "duration": "1m"}})", ceilings(),
       "spec.workers: 11 is above the operator's ceiling of 10 (--max-workers)"},
      {"rate above the ceiling", R"({"load": {"rate": 1500, "duration": "1m"}})", ceilings(),
       "spec.load.rate: 1500 requests/s is above the operator's ceiling of 1000 (--max-rate)"},
      {"a stage's rate above the ceiling",
       R"({"load": {"stages": [{"duration": "1m", "rate": 100},
                                {"duration": "1m", "rate": 2000}]}})",
       ceilings(),
       "spec.load.stages[1].rate: 2000 requests/s is above the operator's ceiling of 1000"},
      {"connections above the ceiling", R"({"load": {"connections": 201, "duration": "1m"}})",
       ceilings(),
       "spec.load.connections: 201 is above the operator's ceiling of 200 (--max-connections)"},
      {"maxConnections above the ceiling",
       R"({"load": {"rate": 100, "maxConnections": 500, "duration": "1m"}})", ceilings(),
       "spec.load.maxConnections: 500 is above the operator's ceiling of 200"},
      {"a stage's connections above the ceiling",
       R"({"load": {"stages": [{"duration": "1m", "connections": 300}]}})", ceilings(),
       "spec.load.stages[0].connections: 300 is above the operator's ceiling of 200"},
      {"duration above the ceiling", R"({"load": {"duration": "3h"}})", ceilings(),
       "a run of 3h is above the operator's ceiling of 2h (--max-duration)"},
      {"warm-up counts towards the duration", R"({"load": {"duration": "2h", "warmup": "1m"}})",
       ceilings(), "a run of 2h1m is above the operator's ceiling of 2h"},
      {"stages count together",
       R"({"load": {"stages": [{"duration": "1h", "connections": 5}, {"duration": "90m", "connections": 5}]}})",
       ceilings(), "a run of 2h30m is above"},
      {"a run bounded by requests is bounded by its run timeout (default 1h)",
       R"({"load": {"requests": 1000}, "timeouts": {"run": "3h"}})", ceilings(),
       "spec.timeouts.run: a run of 3h is above the operator's ceiling of 2h"},
      {"a run bounded by requests within the ceiling", R"({"load": {"requests": 1000}})",
       ceilings(), std::nullopt},
      {"tolerations allowed by default",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"tolerations": [
           {"key": "dedicated", "operator": "Equal", "value": "load", "effect": "NoSchedule"}]}})",
       ceilings(), std::nullopt},
      {"a toleration of the control-plane taint is refused",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"tolerations": [
           {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]}})",
       ceilings(),
       "spec.workerTemplate.tolerations[0]: tolerates the control-plane taint "
       "node-role.kubernetes.io/control-plane"},
      {"a toleration of every taint is refused (it includes the control plane's)",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"tolerations": [
           {"key": "dedicated", "operator": "Exists"}, {"operator": "Exists"}]}})",
       ceilings(), "spec.workerTemplate.tolerations[1]: tolerates every taint"},
      {"a nodeSelector for control-plane nodes is refused",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"nodeSelector": {
           "node-role.kubernetes.io/master": ""}}})",
       ceilings(),
       "spec.workerTemplate.nodeSelector: selects control-plane nodes "
       "(node-role.kubernetes.io/master)"},
      {"node affinity towards control-plane nodes is refused",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"affinity": {"nodeAffinity": {
           "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
             {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane",
                                    "operator": "Exists"}]}]}}}}})",
       ceilings(), "spec.workerTemplate.affinity: selects control-plane nodes"},
      {"node affinity away from control-plane nodes is fine",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"affinity": {"nodeAffinity": {
           "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
             {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane",
                                    "operator": "DoesNotExist"}]}]}}}}})",
       ceilings(), std::nullopt},
      {"the admin may allow control-plane nodes",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"tolerations": [
           {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]}})",
       control_plane_allowed, std::nullopt},
      {"an override the admin does not allow is refused",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"nodeSelector": {"pool": "load"}}})",
       nothing_allowed,
       "spec.workerTemplate.nodeSelector: the operator does not let LoadTests set it "
       "(--worker-scheduling-overrides allows: none)"},
      {"a Service of the LoadTest's own namespace, named or not",
       R"({"load": {"duration": "1m"}, "target": {"service": {"name": "web", "namespace": "shop"}}})",
       ceilings(), std::nullopt},
      {"a Service of another namespace is refused",
       R"({"load": {"duration": "1m"}, "target": {"service": {"name": "web", "namespace": "kube-system"}}})",
       ceilings(),
       "spec.target.service.namespace: \"kube-system\" is not this LoadTest's namespace \"shop\" "
       "(the operator loads Services of the LoadTest's own namespace only unless it runs with "
       "--allow-other-namespace-services)"},
      {"a Service of another namespace when the admin allows it",
       R"({"load": {"duration": "1m"}, "target": {"service": {"name": "web", "namespace": "kube-system"}}})",
       other_namespaces, std::nullopt},
      {"no image: the operator's loadgen image", R"({"load": {"duration": "1m"}})", images,
       std::nullopt},
      {"the operator's own loadgen image named",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"image": "ghcr.io/kubeload/loadgen:1.2"}})",
       images, std::nullopt},
      {"an image the admin allows",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"image": "registry.shop/loadgen:1.2-fips"}})",
       images, std::nullopt},
      {"any other image is refused, naming it and what is allowed",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"image": "ghcr.io/kubeload/loadgen:1.3"}})",
       images,
       "spec.workerTemplate.image: \"ghcr.io/kubeload/loadgen:1.3\" is not an allowed worker image "
       "(the operator's --loadgen-image and --allowed-worker-images allow: "
       "ghcr.io/kubeload/loadgen:1.2, registry.shop/loadgen:1.2-fips)"},
      {"a tag is not a prefix: the allowed image with another tag is refused",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"image": "registry.shop/loadgen:1.2-fips-debug"}})",
       images, "is not an allowed worker image"},
      {"an empty override is no override",
       R"({"load": {"duration": "1m"}, "workerTemplate": {"nodeSelector": {}, "tolerations": []}})",
       nothing_allowed, std::nullopt},
  };
}

TEST(RunPolicy, Table) {
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.name);
    const json lt = loadtest(row.spec);
    const ParsedLoadTest parsed = parse_loadtest(lt.dump());
    ASSERT_TRUE(parsed.ok()) << parsed.errors.front().to_string();
    const std::optional<std::string> refusal = policy_refusal(lt, parsed.spec, row.config);
    if (!row.refusal) {
      EXPECT_EQ(refusal, std::nullopt);
    } else {
      ASSERT_TRUE(refusal.has_value());
      EXPECT_NE(refusal->find(*row.refusal), std::string::npos) << *refusal;
    }
  }
}

}  // namespace
