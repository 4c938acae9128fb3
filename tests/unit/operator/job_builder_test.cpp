// The worker Job builder, golden-tested the k6-operator way: one default
// LoadTest and one default expected Job (tests/golden/operator/job_default.json);
// each table row mutates both, and the built Job must equal the expectation.
//
// Regenerate the golden after an intended change with
//   KUBELOAD_UPDATE_GOLDEN=1 ./unit_tests --gtest_filter='OperatorJobBuilder*'
// and review the diff before committing it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/data_mount.hpp"
#include "kubeload/spec.hpp"
#include "operator/config.hpp"
#include "operator/job_builder.hpp"
#include "operator/timestamp.hpp"
#include "operator/worker_token.hpp"

#ifndef KUBELOAD_SOURCE_DIR
#error "KUBELOAD_SOURCE_DIR must point at the repository"
#endif

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;

// A Secret's value reaches the builder only if someone copies it into the
// LoadTest outside the spec (an annotation, a status message); a builder that
// copied the object wholesale would pass it on to every pod.
constexpr const char* kSecretValue = "Bearer s3cr3t-t0ken-value";
constexpr const char* kAnnotationSentinel = "annotation-content-must-not-leak";

json default_loadtest() {
  return json::parse(R"({
    "apiVersion": "kubeload.dev/v1alpha1",
    "kind": "LoadTest",
    "metadata": {
      "name": "checkout",
      "namespace": "shop",
      "uid": "6b1f5a52-8d43-4a0e-9d0c-3f1f3e7b2a11",
      "generation": 1,
      "resourceVersion": "4711",
      "creationTimestamp": "2026-11-29T19:00:00Z",
      "labels": {"kubeload.dev/test": "checkout", "team": "payments"},
      "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "annotation-content-must-not-leak"}
    },
    "spec": {
      "target": {"url": "http://checkout.shop.svc:8080/"},
      "load": {"connections": 10, "duration": "30s", "timeout": "30s", "keepAlive": true},
      "workers": 1,
      "cleanup": {"policy": "OnSuccess"},
      "timeouts": {"start": "5m"}
    },
    "status": {"phase": "Pending"}
  })");
}

OperatorConfig default_config() {
  OperatorConfig config;
  config.loadgen_image = "ghcr.io/kubeload/loadgen:0.1.0";
  return config;
}

std::string golden_path(const std::string& file = "job_default.json") {
  return std::string(KUBELOAD_SOURCE_DIR) + "/tests/golden/operator/" + file;
}

bool updating_goldens() {
  const char* update = std::getenv("KUBELOAD_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

// The key under which the expectations (and the golden file) hold, beside
// the Job, the manifest its workers read from the run's spec ConfigMap: the
// two are built together and the rows check both.
constexpr const char* kManifestKey = "x-worker-manifest (the spec ConfigMap's loadtest.json)";

json build(const json& loadtest, const OperatorConfig& config) {
  const ParsedLoadTest parsed = parse_loadtest(loadtest.dump());
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.errors.front().to_string());
  json job = build_worker_job(loadtest, parsed.spec, config);
  const json config_map = build_worker_spec_config_map(loadtest, parsed.spec);
  job[kManifestKey] = json::parse(config_map["data"][kSpecFileName].get<std::string>());
  return job;
}

// Every difference as "path: expected X, got Y", so a failing row says what
// moved instead of printing two whole Jobs.
void diff(const json& expected, const json& actual, const std::string& path,
          std::vector<std::string>& out) {
  if (expected.type() != actual.type()) {
    out.push_back(path + ": expected " + expected.dump() + ", got " + actual.dump());
    return;
  }
  if (expected.is_object()) {
    std::set<std::string> keys;
    for (const auto& [key, value] : expected.items()) keys.insert(key);
    for (const auto& [key, value] : actual.items()) keys.insert(key);
    for (const std::string& key : keys) {
      if (!expected.contains(key)) {
        out.push_back(path + "." + key + ": unexpected " + actual.at(key).dump());
      } else if (!actual.contains(key)) {
        out.push_back(path + "." + key + ": missing, expected " + expected.at(key).dump());
      } else {
        diff(expected.at(key), actual.at(key), path + "." + key, out);
      }
    }
  } else if (expected.is_array()) {
    if (expected.size() != actual.size()) {
      out.push_back(path + ": expected " + std::to_string(expected.size()) + " items, got " +
                    std::to_string(actual.size()) + ": " + actual.dump());
      return;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      diff(expected[i], actual[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else if (expected != actual) {
    out.push_back(path + ": expected " + expected.dump() + ", got " + actual.dump());
  }
}

std::string describe_diff(const json& expected, const json& actual) {
  std::vector<std::string> lines;
  diff(expected, actual, "$", lines);
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

json& container(json& job) {
  return job["spec"]["template"]["spec"]["containers"][0];
}
json& pod_spec(json& job) {
  return job["spec"]["template"]["spec"];
}

// The worker manifest travels in the run's spec ConfigMap; expectations edit
// it beside the Job.
void edit_manifest(json& job, const std::function<void(json&)>& edit) {
  ASSERT_TRUE(job.contains(kManifestKey)) << "no worker manifest in the expectation";
  edit(job[kManifestKey]);
}

void set_arg(json& job, const std::string& flag, const std::string& value) {
  json& args = container(job)["args"];
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) {
      args[i + 1] = value;
      return;
    }
  }
  ADD_FAILURE() << "no " << flag << " in the expected Job's args";
}

void set_labels(json& job, const std::string& key, const std::optional<std::string>& value) {
  for (json* labels :
       {&job["metadata"]["labels"], &job["spec"]["template"]["metadata"]["labels"]}) {
    if (value) {
      (*labels)[key] = *value;
    } else {
      labels->erase(key);
    }
  }
}

json load_golden(const std::string& file = "job_default.json") {
  std::ifstream in(golden_path(file));
  if (!in) return json();
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

struct Row {
  std::string name;
  std::function<void(json& loadtest)> loadtest;
  std::function<void(json& job)> job;
  std::function<void(OperatorConfig&)> config = [](OperatorConfig&) {};
};

std::vector<Row> rows() {
  const json worker_template_fields = json::parse(R"({
    "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1500m", "memory": "512Mi"}},
    "nodeSelector": {"kubeload.dev/pool": "load"},
    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "load", "effect": "NoSchedule"}],
    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
      {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchLabels": {"kubeload.dev/loadtest": "checkout"}}}}]}}
  })");
  const json header_requests = json::parse(R"([
    {"name": "cart", "path": "/api/cart",
     "headers": {"Accept": "application/json"},
     "headersFrom": [{"name": "Authorization", "secretKeyRef": {"name": "api-token", "key": "header"}},
                     {"name": "X-Tenant", "secretKeyRef": {"name": "tenant", "key": "id"}}]},
    {"name": "catalog", "path": "/catalog"},
    {"name": "order", "method": "POST", "path": "/api/orders", "body": "{}",
     "headersFrom": [{"name": "X-Order-Key", "secretKeyRef": {"name": "order-key", "key": "key.txt"}}]}
  ])");
  const std::string long_name =
      "nightly.checkout-regression-against-the-staging-cluster-with-full-request-mix";

  return {
      {"default", [](json&) {}, [](json&) {}},
      {"three workers", [](json& lt) { lt["spec"]["workers"] = 3; },
       [](json& job) {
         job["spec"]["completions"] = 3;
         job["spec"]["parallelism"] = 3;
         set_arg(job, "--workers", "3");
         edit_manifest(job, [](json& m) { m["spec"]["workers"] = 3; });
       }},
      {"service target with namespace and https",
       [](json& lt) {
         lt["spec"]["target"] = {{"service",
                                  {{"name", "checkout"},
                                   {"namespace", "backend"},
                                   {"port", 8443},
                                   {"scheme", "https"}}}};
       },
       [](json& job) {
         set_arg(job, "--target", "https://checkout.backend.svc:8443/");
         edit_manifest(job, [](json& m) {
           m["spec"]["target"] = {{"service",
                                   {{"name", "checkout"},
                                    {"namespace", "backend"},
                                    {"port", 8443},
                                    {"scheme", "https"}}}};
         });
       }},
      {"CA bundle from a Secret, mounted and given as --cacert",
       [](json& lt) {
         lt["spec"]["target"] = {
             {"url", "https://checkout.shop.svc:8443/"},
             {"tls", {{"caFrom", {{"secretKeyRef", {{"name", "shop-ca"}, {"key", "ca.pem"}}}}}}}};
       },
       [](json& job) {
         set_arg(job, "--target", "https://checkout.shop.svc:8443/");
         // Before the threads (-t, from the default CPU limit), where the builder puts it.
         json& args = container(job)["args"];
         args.insert(args.end() - 2, {"--cacert", "/etc/kubeload/target-ca/ca.crt"});
         container(job)["volumeMounts"].push_back(json::parse(
             R"({"name": "target-ca", "mountPath": "/etc/kubeload/target-ca", "readOnly": true})"));
         job["spec"]["template"]["spec"]["volumes"].push_back(json::parse(
             R"({"name": "target-ca", "secret": {"secretName": "shop-ca",
                  "items": [{"key": "ca.pem", "path": "ca.crt"}]}})"));
         edit_manifest(job, [](json& m) {
           m["spec"]["target"] = {
               {"url", "https://checkout.shop.svc:8443/"},
               {"tls", {{"caFrom", {{"secretKeyRef", {{"name", "shop-ca"}, {"key", "ca.pem"}}}}}}}};
         });
       }},
      {"CA bundle from a ConfigMap",
       [](json& lt) {
         lt["spec"]["target"] = {
             {"url", "https://checkout.shop.svc:8443/"},
             {"tls",
              {{"caFrom", {{"configMapKeyRef", {{"name", "trust"}, {"key", "bundle.pem"}}}}}}}};
       },
       [](json& job) {
         set_arg(job, "--target", "https://checkout.shop.svc:8443/");
         // Before the threads (-t, from the default CPU limit), where the builder puts it.
         json& args = container(job)["args"];
         args.insert(args.end() - 2, {"--cacert", "/etc/kubeload/target-ca/ca.crt"});
         container(job)["volumeMounts"].push_back(json::parse(
             R"({"name": "target-ca", "mountPath": "/etc/kubeload/target-ca", "readOnly": true})"));
         job["spec"]["template"]["spec"]["volumes"].push_back(json::parse(
             R"({"name": "target-ca", "configMap": {"name": "trust",
                  "items": [{"key": "bundle.pem", "path": "ca.crt"}]}})"));
         edit_manifest(job, [](json& m) {
           m["spec"]["target"] = {
               {"url", "https://checkout.shop.svc:8443/"},
               {"tls",
                {{"caFrom", {{"configMapKeyRef", {{"name", "trust"}, {"key", "bundle.pem"}}}}}}}};
         });
       }},
      {"insecureSkipVerify travels in the spec only",
       [](json& lt) {
         lt["spec"]["target"] = {{"url", "https://checkout.shop.svc:8443/"},
                                 {"tls", {{"insecureSkipVerify", true}}}};
       },
       [](json& job) {
         set_arg(job, "--target", "https://checkout.shop.svc:8443/");
         edit_manifest(job, [](json& m) {
           m["spec"]["target"] = {{"url", "https://checkout.shop.svc:8443/"},
                                  {"tls", {{"insecureSkipVerify", true}}}};
         });
       }},
      {"service target in the LoadTest's namespace, default port",
       [](json& lt) {
         lt["spec"]["target"] = {{"service", {{"name", "checkout"}}}};
       },
       [](json& job) {
         set_arg(job, "--target", "http://checkout.shop.svc:80/");
         edit_manifest(job, [](json& m) {
           m["spec"]["target"] = {{"service", {{"name", "checkout"}}}};
         });
       }},
      {"custom image",
       [](json& lt) {
         lt["spec"]["workerTemplate"] = {{"image", "registry.example/loadgen:dev"}};
       },
       [](json& job) {
         container(job)["image"] = "registry.example/loadgen:dev";
         edit_manifest(job, [](json& m) {
           m["spec"]["workerTemplate"] = {{"image", "registry.example/loadgen:dev"}};
         });
       }},
      {"resources, nodeSelector, tolerations and affinity",
       [worker_template_fields](json& lt) {
         lt["spec"]["workerTemplate"] = worker_template_fields;
       },
       [worker_template_fields](json& job) {
         container(job)["resources"] = worker_template_fields["resources"];
         // Two CPUs of limit: two event-loop threads.
         set_arg(job, "-t", "2");
         pod_spec(job)["nodeSelector"] = worker_template_fields["nodeSelector"];
         pod_spec(job)["tolerations"] = worker_template_fields["tolerations"];
         pod_spec(job)["affinity"] = worker_template_fields["affinity"];
         edit_manifest(job, [&](json& m) { m["spec"]["workerTemplate"] = worker_template_fields; });
       }},
      {"empty workerTemplate fields change nothing",
       [](json& lt) {
         lt["spec"]["workerTemplate"] = {{"image", ""},
                                         {"resources", json::object()},
                                         {"nodeSelector", json::object()},
                                         {"tolerations", json::array()},
                                         {"affinity", json::object()}};
       },
       [](json& job) {
         edit_manifest(job, [](json& m) {
           m["spec"]["workerTemplate"] = {{"image", ""},
                                          {"resources", json::object()},
                                          {"nodeSelector", json::object()},
                                          {"tolerations", json::array()},
                                          {"affinity", json::object()}};
         });
       }},
      {"headersFrom become secretKeyRef env vars",
       [header_requests](json& lt) {
         lt["spec"]["requests"] = header_requests;
         // To a plain-http target only with the author's explicit opt-in.
         lt["spec"]["target"]["allowInsecureSecretHeaders"] = true;
       },
       [header_requests](json& job) {
         json& env = container(job)["env"];
         env.push_back(json::parse(
             R"({"name": "KUBELOAD_HEADER_0", "valueFrom": {"secretKeyRef": {"name": "api-token", "key": "header"}}})"));
         env.push_back(json::parse(
             R"({"name": "KUBELOAD_HEADER_1", "valueFrom": {"secretKeyRef": {"name": "tenant", "key": "id"}}})"));
         env.push_back(json::parse(
             R"({"name": "KUBELOAD_HEADER_2", "valueFrom": {"secretKeyRef": {"name": "order-key", "key": "key.txt"}}})"));
         edit_manifest(job, [&](json& m) {
           m["spec"]["requests"] = header_requests;
           m["spec"]["target"]["allowInsecureSecretHeaders"] = true;
         });
       }},
      {"long name with a dot", [long_name](json& lt) { lt["metadata"]["name"] = long_name; },
       [long_name](json& job) {
         const std::string job_name = worker_job_name(long_name);
         const std::string label = loadtest_label_value(long_name);
         job["metadata"]["name"] = job_name;
         job["metadata"]["ownerReferences"][0]["name"] = long_name;
         container(job)["env"][0]["valueFrom"]["secretKeyRef"]["name"] =
             worker_token_secret_name(long_name, "6b1f5a52-8d43-4a0e-9d0c-3f1f3e7b2a11");
         job["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] =
             worker_spec_config_map_name(long_name, "6b1f5a52-8d43-4a0e-9d0c-3f1f3e7b2a11");
         set_labels(job, "kubeload.dev/loadtest", label);
         edit_manifest(job, [&](json& m) { m["metadata"]["name"] = long_name; });
       }},
      {"no labels on the LoadTest", [](json& lt) { lt["metadata"].erase("labels"); },
       [](json& job) {
         set_labels(job, "kubeload.dev/test", std::nullopt);
         edit_manifest(job, [](json& m) { m["metadata"].erase("labels"); });
       }},
      {"operator config: service account, pull policy, port, threads", [](json&) {},
       [](json& job) {
         pod_spec(job)["serviceAccountName"] = "kubeload-worker";
         container(job)["imagePullPolicy"] = "Always";
         container(job)["ports"][0]["containerPort"] = 9090;
         set_arg(job, "--listen", "0.0.0.0:9090");
         set_arg(job, "-t", "4");
       },
       [](OperatorConfig& config) {
         config.service_account = "kubeload-worker";
         config.image_pull_policy = "Always";
         config.worker_port = 9090;
         config.worker_threads = 4;
       }},
  };
}

// `actual` against tests/golden/operator/`file` (rewritten instead with
// KUBELOAD_UPDATE_GOLDEN=1).
void expect_golden(const std::string& file, const json& actual) {
  if (updating_goldens()) {
    std::ofstream out(golden_path(file), std::ios::trunc);
    ASSERT_TRUE(out) << "cannot write " << golden_path(file);
    out << actual.dump(2) << "\n";
    GTEST_SKIP() << "rewrote " << golden_path(file);
  }
  const json expected = load_golden(file);
  ASSERT_FALSE(expected.is_null())
      << golden_path(file) << " is missing; run with KUBELOAD_UPDATE_GOLDEN=1 to create it";
  EXPECT_TRUE(expected == actual) << describe_diff(expected, actual);
}

TEST(OperatorJobBuilderGolden, DefaultJobMatchesGoldenFile) {
  const json actual = build(default_loadtest(), default_config());
  expect_golden("job_default.json", actual);
}

TEST(OperatorJobBuilderGolden, TheRunsNetworkPolicyMatchesGoldenFile) {
  const std::string file = "networkpolicy_default.json";
  OperatorConfig config = default_config();
  config.worker_ingress_from = json::parse(R"([
    {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kubeload-system"}},
     "podSelector": {"matchLabels": {"app.kubernetes.io/name": "kubeload",
                                     "app.kubernetes.io/instance": "kubeload"}}},
    {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}])");
  const json loadtest = default_loadtest();
  const json actual =
      build_worker_network_policy(loadtest, parse_loadtest(loadtest.dump()).spec, config);
  expect_golden(file, actual);
}

// With --worker-egress-dns-to the run's NetworkPolicy limits where its
// workers send: DNS, the target Service's pods (by selector in its
// namespace; what its selector did not choose by address), and outside the
// cluster's ranges what the deny and allow lists allow.
TEST(OperatorJobBuilderGolden, TheRunsEgressNetworkPolicyMatchesGoldenFile) {
  const std::string file = "networkpolicy_egress.json";
  OperatorConfig config = default_config();
  config.worker_egress_dns_to = json::parse(R"([
    {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
     "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}])");
  config.cluster_cidrs = {"10.244.0.0/16", "10.245.0.9/16", "fd00:10::/64"};
  config.target_deny_cidrs = {"192.0.2.0/24", "10.244.0.7"};
  const json loadtest = default_loadtest();
  const ClusterHost host{ClusterHost::Kind::Service, "shop", "checkout", true};
  const TargetServiceView target = target_service_view(
      host,
      json::parse(R"({"spec": {"clusterIP": "10.245.0.20", "selector": {"app": "checkout"}}})"),
      json::parse(R"({"items": [
        {"metadata": {"labels": {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}},
         "endpoints": [{"addresses": ["10.244.0.6"]}], "ports": [{"port": 8080}]},
        {"metadata": {"labels": {"endpointslice.kubernetes.io/managed-by": "staff"}},
         "endpoints": [{"addresses": ["198.51.100.4"]}], "ports": [{"port": 8080}]}]})"));
  const json actual =
      build_worker_network_policy(loadtest, parse_loadtest(loadtest.dump()).spec, config, &target);
  expect_golden(file, actual);
}

TEST(OperatorJobBuilderGolden, EachRowChangesExactlyWhatItShould) {
  const json golden = load_golden();
  ASSERT_FALSE(golden.is_null()) << golden_path() << " is missing";
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.name);
    json loadtest = default_loadtest();
    row.loadtest(loadtest);
    OperatorConfig config = default_config();
    row.config(config);
    json expected = golden;
    row.job(expected);
    const json actual = build(loadtest, config);
    EXPECT_TRUE(expected == actual) << describe_diff(expected, actual);
  }
}

// spec.data is parsed elsewhere: the sources are set on the parsed spec, and
// the Job is the golden one with their volumes and mounts.
TEST(OperatorJobBuilderGolden, EachDataSourceFromAKeyIsMountedReadOnlyInItsOwnDirectory) {
  const json loadtest = default_loadtest();
  ParsedLoadTest parsed = parse_loadtest(loadtest.dump());
  ASSERT_TRUE(parsed.ok());
  DataSourceSpec users;
  users.name = "users";
  users.from = ObjectKeyRef{ObjectKeyRef::Kind::config_map, "shop-users", "users.csv"};
  DataSourceSpec local;  // loadgen run's file: nothing to mount
  local.name = "local";
  local.file = "cards.csv";
  DataSourceSpec cards;
  cards.name = "Cards_2";
  cards.format = DataSourceSpec::Format::jsonl;
  cards.from = ObjectKeyRef{ObjectKeyRef::Kind::secret, "shop-cards", "cards.jsonl"};
  parsed.spec.data = {users, local, cards};
  json job = build_worker_job(loadtest, parsed.spec, default_config());

  json expected = load_golden();
  ASSERT_FALSE(expected.is_null()) << "no golden file " << golden_path();
  expected.erase(kManifestKey);
  container(expected)["volumeMounts"].push_back(json::parse(
      R"({"name": "data-0", "mountPath": "/var/run/kubeload/data/users", "readOnly": true})"));
  container(expected)["volumeMounts"].push_back(json::parse(
      R"({"name": "data-2", "mountPath": "/var/run/kubeload/data/Cards_2", "readOnly": true})"));
  pod_spec(expected)["volumes"].push_back(json::parse(
      R"({"name": "data-0", "configMap": {"name": "shop-users",
           "items": [{"key": "users.csv", "path": "rows"}]}})"));
  pod_spec(expected)["volumes"].push_back(json::parse(
      R"({"name": "data-2", "secret": {"secretName": "shop-cards",
           "items": [{"key": "cards.jsonl", "path": "rows"}]}})"));
  EXPECT_EQ(job, expected) << describe_diff(expected, job);
  // Where the worker reads them: the mount's directory and the item's path.
  EXPECT_EQ(data_mount_file("users"), "/var/run/kubeload/data/users/rows");
}

TEST(OperatorJobBuilder, DefaultJobHasTheShapeTheOperatorRelieson) {
  // The golden file is reviewed once; these pin the facts it must keep.
  json job = build(default_loadtest(), default_config());
  EXPECT_EQ(job["metadata"]["name"], "checkout-workers");
  EXPECT_EQ(job["metadata"]["namespace"], "shop");
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["backoffLimit"], 0);
  // A Job the cleanup policy keeps (a failed run's) goes after a day; the
  // operator deletes the others itself (docs/lifecycle.md).
  EXPECT_EQ(job["spec"]["ttlSecondsAfterFinished"], 24 * 3600);
  EXPECT_EQ(job["spec"]["activeDeadlineSeconds"], 692);
  const json& owner = job["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["uid"], "6b1f5a52-8d43-4a0e-9d0c-3f1f3e7b2a11");
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(owner["blockOwnerDeletion"], true);
  EXPECT_EQ(owner["kind"], "LoadTest");
  EXPECT_EQ(owner["apiVersion"], "kubeload.dev/v1alpha1");
  EXPECT_EQ(job["metadata"]["labels"], job["spec"]["template"]["metadata"]["labels"]);
  EXPECT_EQ(job["metadata"]["labels"]["kubeload.dev/loadtest"], "checkout");
  EXPECT_EQ(job["metadata"]["labels"]["kubeload.dev/test"], "checkout");
  EXPECT_FALSE(job["metadata"]["labels"].contains("team"));  // only our labels select pods
  EXPECT_EQ(pod_spec(job)["restartPolicy"], "Never");
  EXPECT_EQ(pod_spec(job)["automountServiceAccountToken"], false);
  EXPECT_EQ(container(job)["args"],
            json({"worker", "--spec", "/etc/kubeload/spec/loadtest.json", "--workers", "1",
                  "--listen", "0.0.0.0:8080", "--target", "http://checkout.shop.svc:8080/",
                  "--guard-targets", "-t", "1"}));
  EXPECT_EQ(container(job)["readinessProbe"]["httpGet"]["path"], "/healthz");
  // Only the file the worker writes: never a log tail (FallbackToLogsOnError).
  EXPECT_EQ(container(job)["terminationMessagePolicy"], "File");
}

TEST(OperatorJobBuilder, TheRunsTokenTravelsInItsOwnSecret) {
  const json loadtest = default_loadtest();
  const ParsedLoadTest parsed = parse_loadtest(loadtest.dump());
  ASSERT_TRUE(parsed.ok());
  const std::string token = worker_token("operator key of 32 bytes or so..", "uid-1");
  const json secret = build_worker_token_secret(loadtest, parsed.spec, token);
  EXPECT_EQ(secret["kind"], "Secret");
  // The uid's prefix: a recreated LoadTest never meets the old run's token.
  EXPECT_EQ(secret["metadata"]["name"], "checkout-workers-token-6b1f5a52");
  EXPECT_EQ(secret["metadata"]["labels"]["kubeload.dev/loadtest-uid"],
            "6b1f5a52-8d43-4a0e-9d0c-3f1f3e7b2a11");
  EXPECT_EQ(secret["metadata"]["namespace"], "shop");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["uid"],
            "6b1f5a52-8d43-4a0e-9d0c-3f1f3e7b2a11");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["kind"], "LoadTest");
  EXPECT_EQ(secret["stringData"]["token"], token);
  EXPECT_EQ(secret["immutable"], true);

  // The Job refers to it; the value is never in the Job.
  json job = build(loadtest, default_config());
  EXPECT_EQ(job.dump().find(token), std::string::npos);
  const json& env = container(job)["env"];
  ASSERT_GE(env.size(), 2u);
  EXPECT_EQ(env[0]["name"], kWorkerTokenEnv);
  EXPECT_EQ(env[0]["valueFrom"]["secretKeyRef"]["name"], "checkout-workers-token-6b1f5a52");
  EXPECT_EQ(env[0]["valueFrom"]["secretKeyRef"]["key"], "token");
}

TEST(OperatorJobBuilder, TheAdminsTargetPolicyReachesEveryWorker) {
  OperatorConfig config = default_config();
  config.target_deny_cidrs = {"10.96.0.1", "192.0.2.0/24"};
  config.target_allow_cidrs = {"10.0.0.0/8"};
  config.target_deny_hosts = {"metadata.google.internal"};
  json job = build(default_loadtest(), config);
  const json& args = container(job)["args"];
  std::vector<std::string> tail;
  // Before the threads (-t 1, from the default CPU limit).
  for (size_t i = args.size() - 11; i < args.size() - 2; ++i) {
    tail.push_back(args[i].get<std::string>());
  }
  EXPECT_EQ(tail, (std::vector<std::string>{
                      "--guard-targets", "--deny-cidr", "10.96.0.1", "--deny-cidr", "192.0.2.0/24",
                      "--allow-cidr", "10.0.0.0/8", "--deny-host", "metadata.google.internal"}));
}

TEST(OperatorWorkerToken, DerivedPerLoadTestAndKey) {
  const std::string key = "0123456789abcdef0123456789abcdef";
  const std::string token = worker_token(key, "uid-1");
  EXPECT_EQ(token.size(), 64u);  // hex of HMAC-SHA256
  EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(worker_token(key, "uid-1"), token);        // a restarted operator derives the same
  EXPECT_NE(worker_token(key, "uid-2"), token);        // another run gets another
  EXPECT_NE(worker_token(key + "x", "uid-1"), token);  // another operator key, another
  // RFC 4231 test case 2: HMAC-SHA256("Jefe", "what do ya want for nothing?").
  EXPECT_EQ(worker_token("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_THROW(worker_token("", "uid-1"), std::invalid_argument);
  EXPECT_THROW(worker_token(key, ""), std::invalid_argument);
}

TEST(OperatorJobBuilder, WorkerCanParseTheManifestItIsGiven) {
  json loadtest = default_loadtest();
  loadtest["spec"]["workers"] = 3;
  loadtest["spec"]["target"]["url"] = "https://checkout.shop.svc:8443/";
  loadtest["spec"]["requests"] = json::parse(R"([{"name": "cart", "path": "/api/cart",
      "headersFrom": [{"name": "Authorization", "secretKeyRef": {"name": "api-token", "key": "header"}}]}])");
  loadtest["spec"]["thresholds"] = {"p99 < 200ms", "cart.errorRate < 1%"};
  const ParsedLoadTest given = parse_loadtest(loadtest.dump());
  ASSERT_TRUE(given.ok());
  const json config_map = build_worker_spec_config_map(loadtest, given.spec);
  EXPECT_EQ(config_map["metadata"]["name"], "checkout-workers-spec-6b1f5a52");
  EXPECT_EQ(config_map["immutable"], true);
  EXPECT_EQ(config_map["metadata"]["ownerReferences"][0]["uid"], loadtest["metadata"]["uid"]);
  const std::string text = config_map["data"]["loadtest.json"];
  // The worker reads it from the file the Job mounts.
  json job = build(loadtest, default_config());
  const json& args = container(job)["args"];
  ASSERT_GE(args.size(), 3u);
  EXPECT_EQ(args[1], "--spec");
  EXPECT_EQ(args[2], "/etc/kubeload/spec/loadtest.json");
  EXPECT_EQ(pod_spec(job)["volumes"][0]["configMap"]["name"], config_map["metadata"]["name"]);
  const ParsedLoadTest parsed = parse_loadtest(text);
  // Status and annotations stay out of the worker's copy.
  const json manifest = json::parse(text);
  EXPECT_FALSE(manifest.contains("status"));
  EXPECT_EQ(manifest["metadata"].size(), 3u) << manifest["metadata"].dump();
}

TEST(OperatorJobBuilder, SecretsAndAnnotationsNeverReachTheJob) {
  json loadtest = default_loadtest();
  loadtest["spec"]["target"]["url"] = "https://checkout.shop.svc:8443/";
  loadtest["spec"]["requests"] = json::parse(R"([{"name": "cart",
      "headersFrom": [{"name": "Authorization", "secretKeyRef": {"name": "api-token", "key": "header"}}]}])");
  loadtest["metadata"]["annotations"]["example.com/debug-authorization"] = kSecretValue;
  loadtest["status"]["message"] = std::string("last header: ") + kSecretValue;
  const json job = build(loadtest, default_config());
  const std::string text = job.dump();
  EXPECT_EQ(text.find(kSecretValue), std::string::npos);
  EXPECT_EQ(text.find(kAnnotationSentinel), std::string::npos);
  EXPECT_EQ(text.find("last-applied-configuration"), std::string::npos);
  // A header from a Secret is a reference resolved by the kubelet, never a value.
  bool found = false;
  for (const json& env : job["spec"]["template"]["spec"]["containers"][0]["env"]) {
    if (env["name"] == "KUBELOAD_LOADTEST_UID" || env["name"] == kWorkerTokenEnv) {
      continue;
    }
    EXPECT_FALSE(env.contains("value")) << env.dump();
    EXPECT_EQ(env["valueFrom"]["secretKeyRef"]["name"], "api-token");
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(OperatorJobBuilder, RefusesALoadTestWithoutUid) {
  json loadtest = default_loadtest();
  loadtest["metadata"].erase("uid");
  const ParsedLoadTest parsed = parse_loadtest(loadtest.dump());
  ASSERT_TRUE(parsed.ok());
  EXPECT_THROW(build_worker_job(loadtest, parsed.spec, default_config()), std::invalid_argument);
}

TEST(OperatorJobBuilder, WithoutResourcesTheOperatorsDefaultsApply) {
  // A worker without requests is scheduled anywhere and evicted first; one
  // without limits can take a node's every core and all its memory.
  const json defaults = {{"requests", {{"cpu", "250m"}, {"memory", "128Mi"}}},
                         {"limits", {{"cpu", "1"}, {"memory", "512Mi"}}}};
  json job = build(default_loadtest(), default_config());
  EXPECT_EQ(container(job)["resources"], defaults);
  const json& args = container(job)["args"];
  const auto t = std::find(args.begin(), args.end(), "-t");
  ASSERT_NE(t, args.end());  // the threads follow the default CPU limit
  EXPECT_EQ(*(t + 1), "1");

  // The admin's defaults (--worker-default-requests/--worker-default-limits).
  OperatorConfig config = default_config();
  config.worker_default_requests = {{"cpu", "2"}};
  config.worker_default_limits = {{"cpu", "2"}, {"memory", "2Gi"}};
  job = build(default_loadtest(), config);
  EXPECT_EQ(container(job)["resources"],
            json({{"requests", {{"cpu", "2"}}}, {"limits", {{"cpu", "2"}, {"memory", "2Gi"}}}}));

  // An empty resources map means none: the defaults apply.
  json loadtest = default_loadtest();
  loadtest["spec"]["workerTemplate"] = {{"resources", json::object()}};
  job = build(loadtest, default_config());
  EXPECT_EQ(container(job)["resources"], defaults);

  // The spec's own resources are used as they are, not mixed with the defaults.
  loadtest["spec"]["workerTemplate"] = {{"resources", {{"requests", {{"memory", "1Gi"}}}}}};
  job = build(loadtest, default_config());
  EXPECT_EQ(container(job)["resources"], json({{"requests", {{"memory", "1Gi"}}}}));

  // No defaults configured: no resources at all.
  config.worker_default_requests.clear();
  config.worker_default_limits.clear();
  job = build(default_loadtest(), config);
  EXPECT_FALSE(container(job).contains("resources"));
}

TEST(OperatorJobBuilder, CpuQuantitiesSizeTheThreads) {
  const std::vector<std::pair<json, std::optional<std::string>>> cases = {
      {json{{"limits", {{"cpu", "500m"}}}}, "1"},
      {json{{"limits", {{"cpu", "2500m"}}}}, "3"},
      {json{{"limits", {{"cpu", 4}}}}, "4"},
      {json{{"requests", {{"cpu", "1.5"}}}}, "2"},
      // The limit wins over the request: it is what throttling enforces.
      {json{{"limits", {{"cpu", "1"}}}, {"requests", {{"cpu", "8"}}}}, "1"},
      {json{{"limits", {{"memory", "1Gi"}}}}, std::nullopt},
      {json{{"limits", {{"cpu", "1k"}}}}, std::nullopt},
  };
  for (const auto& [resources, threads] : cases) {
    SCOPED_TRACE(resources.dump());
    json loadtest = default_loadtest();
    loadtest["spec"]["workerTemplate"] = {{"resources", resources}};
    json job = build(loadtest, default_config());
    const json& args = container(job)["args"];
    const auto t = std::find(args.begin(), args.end(), "-t");
    if (threads) {
      ASSERT_NE(t, args.end());
      EXPECT_EQ(*(t + 1), *threads);
    } else {
      EXPECT_EQ(t, args.end());
    }
  }
}

bool is_dns_label(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

TEST(OperatorJobBuilder, JobNamesAreShortDeterministicAndDistinct) {
  EXPECT_EQ(worker_job_name("checkout"), "checkout-workers");
  const std::string fifty_one(51, 'a');  // 51 + "-workers" = 59: still plain
  EXPECT_EQ(worker_job_name(fifty_one), fifty_one + "-workers");
  const std::vector<std::string> names = {
      std::string(52, 'a'),
      std::string(52, 'a') + "b",
      std::string(253, 'x'),
      "a.b",
      "a-b",
      "checkout.v2",
      "nightly.checkout-regression-against-the-staging-cluster-with-full-request-mix"};
  std::set<std::string> seen;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string job = worker_job_name(name);
    EXPECT_LE(job.size(), 59u);
    EXPECT_TRUE(is_dns_label(job)) << job;
    EXPECT_TRUE(job.ends_with("-workers")) << job;
    EXPECT_EQ(job, worker_job_name(name));
    EXPECT_TRUE(seen.insert(job).second) << job << " is not unique";
  }
  // Pinned: a name built by one release must be found by the next.
  EXPECT_EQ(worker_job_name("a.b"), "a-b-e27bcb35-workers");
  EXPECT_EQ(worker_job_name(
                "nightly.checkout-regression-against-the-staging-cluster-with-full-request-mix"),
            "nightly-checkout-regression-against-the-st-022a21a2-workers");
}

TEST(OperatorJobBuilder, LabelValuesFitAndStayDistinct) {
  EXPECT_EQ(loadtest_label_value("checkout.v2"), "checkout.v2");
  const std::string sixty_three(63, 'a');
  EXPECT_EQ(loadtest_label_value(sixty_three), sixty_three);
  // The cut falls right after a dot, which must not end up before the hash.
  const std::string a = loadtest_label_value(std::string(53, 'a') + "." + std::string(20, 'b'));
  const std::string b = loadtest_label_value(std::string(53, 'a') + "." + std::string(21, 'b'));
  EXPECT_LE(a.size(), 63u);
  EXPECT_NE(a, b);
  EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(a.back())));
  EXPECT_EQ(a.find(".-"), std::string::npos);
}

TEST(OperatorJobBuilder, HeaderEnvNamesFollowDocumentOrder) {
  EXPECT_EQ(header_env_name(0), "KUBELOAD_HEADER_0");
  EXPECT_EQ(header_env_name(12), "KUBELOAD_HEADER_12");
}

// ---- the LoadTest a LoadTestSchedule creates (build_scheduled_loadtest)

kubeload::api::LoadTestSchedule default_schedule() {
  kubeload::api::LoadTestSchedule schedule;
  schedule.metadata.name = "nightly";
  schedule.metadata.namespace_ = "shop";
  schedule.metadata.uid = "5c5c5c5c-0000-4000-8000-000000000001";
  schedule.spec.schedule = "0 2 * * *";
  schedule.spec.template_.labels = {{"team", "checkout"}};
  schedule.spec.template_.annotations = {{"owner", "perf@example.com"}};
  schedule.spec.template_.spec = json::parse(R"({
    "target": {"service": {"name": "checkout", "port": 8080}},
    "load": {"connections": 20, "duration": "60s"},
    "thresholds": ["p99 < 250ms"]
  })");
  return schedule;
}

kubeload::api::Time tick() {
  return *parse_time("2026-06-02T02:00:00Z");
}

TEST(OperatorScheduledRunBuilderGolden, DefaultRunMatchesGoldenFile) {
  expect_golden("scheduled_run_default.json", build_scheduled_loadtest(default_schedule(), tick()));
}

TEST(OperatorScheduledRunBuilder, TheTemplatesTestLabelWins) {
  kubeload::api::LoadTestSchedule schedule = default_schedule();
  schedule.spec.template_.labels["kubeload.dev/test"] = "checkout";
  const json run = build_scheduled_loadtest(schedule, tick());
  EXPECT_EQ(run["metadata"]["labels"]["kubeload.dev/test"], "checkout");
  EXPECT_EQ(run["metadata"]["labels"]["kubeload.dev/schedule"], "nightly");
}

TEST(OperatorScheduledRunBuilder, TheScheduledAtIsTheTickInWholeSeconds) {
  const json run =
      build_scheduled_loadtest(default_schedule(), tick() + std::chrono::milliseconds(250));
  EXPECT_EQ(run["metadata"]["annotations"]["kubeload.dev/scheduled-at"], "2026-06-02T02:00:00Z");
}

TEST(OperatorScheduledRunBuilder, ALongScheduleNameIsShortenedInItsLabels) {
  kubeload::api::LoadTestSchedule schedule = default_schedule();
  schedule.metadata.name = std::string(80, 'n');
  const json run = build_scheduled_loadtest(schedule, tick());
  EXPECT_EQ(run["metadata"]["labels"]["kubeload.dev/schedule"],
            loadtest_label_value(schedule.metadata.name));
  EXPECT_LE(run["metadata"]["labels"]["kubeload.dev/schedule"].get<std::string>().size(), 63u);
  EXPECT_EQ(run["metadata"]["generateName"], schedule.metadata.name + "-");
}

TEST(OperatorScheduledRunBuilder, RefusesAScheduleWithoutUid) {
  kubeload::api::LoadTestSchedule schedule = default_schedule();
  schedule.metadata.uid.clear();
  EXPECT_THROW(build_scheduled_loadtest(schedule, tick()), std::invalid_argument);
}

TEST(OperatorScheduledRunBuilder, TheRunIsAValidLoadTest) {
  const kubeload::ParsedLoadTest parsed =
      kubeload::parse_loadtest(build_scheduled_loadtest(default_schedule(), tick()).dump());
  EXPECT_TRUE(parsed.ok()) << (parsed.errors.empty() ? "" : parsed.errors[0].to_string());
}

// ---- the LoadTests an experiment creates (build_round_loadtest)

kubeload::api::LoadTest experiment_loadtest() {
  kubeload::api::LoadTest experiment;
  experiment.metadata.name = "nginx-ab";
  experiment.metadata.namespace_ = "shop";
  experiment.metadata.uid = "e4e4e4e4-0000-4000-8000-000000000001";
  experiment.metadata.labels = {{"kubeload.dev/test", "nginx-ab"}, {"team", "web"}};
  experiment.metadata.annotations = {{"kubeload.dev/revision", "abc123"},
                                     {"kubectl.kubernetes.io/last-applied-configuration", "{}"}};
  experiment.spec = json::parse(R"({
    "target": {"protocol": "http1"},
    "variants": [
      {"name": "stable", "target": {"service": {"name": "web-stable", "port": 80}}},
      {"name": "canary", "target": {"url": "http://web.shop.svc:8080/",
                                    "podSelector": {"matchLabels": {"app": "web"}}},
       "headers": {"X-Canary": "always"}}
    ],
    "experiment": {"rounds": 4, "comparisons": ["canary.p99 <= stable.p99 * 1.05"]},
    "requests": [{"name": "home", "path": "/", "headers": {"Accept": "text/html"}},
                 {"name": "api", "path": "/api"}],
    "load": {"connections": 10, "duration": "20s", "warmup": "5s"},
    "thresholds": ["errorRate < 1%"],
    "ttlSecondsAfterFinished": 600
  })");
  return experiment;
}

TEST(OperatorRoundBuilderGolden, ARoundMatchesGoldenFile) {
  expect_golden("experiment_round.json", build_round_loadtest(experiment_loadtest(), 1, 2));
}

TEST(OperatorRoundBuilder, TheVariantsTargetReplacesTheExperimentsAndKeepsHowRequestsTravel) {
  const json round = build_round_loadtest(experiment_loadtest(), 0, 1);
  EXPECT_EQ(round["spec"]["target"],
            json::parse(R"({"protocol": "http1", "service": {"name": "web-stable", "port": 80}})"));
  EXPECT_EQ(round["metadata"]["name"], "nginx-ab-stable-1");
  EXPECT_EQ(round["metadata"]["labels"]["kubeload.dev/test"], "nginx-ab-stable");
  EXPECT_EQ(round["metadata"]["labels"]["kubeload.dev/experiment"], "nginx-ab");
  EXPECT_EQ(round["metadata"]["labels"]["kubeload.dev/variant"], "stable");
  EXPECT_EQ(round["metadata"]["labels"]["kubeload.dev/round"], "1");
  EXPECT_EQ(round["metadata"]["ownerReferences"][0]["uid"], experiment_loadtest().metadata.uid);
  EXPECT_EQ(round["metadata"]["ownerReferences"][0]["controller"], true);
  // Without headers of its own, a variant's requests are the experiment's.
  EXPECT_EQ(round["spec"]["requests"], experiment_loadtest().spec["requests"]);
}

TEST(OperatorRoundBuilder, TheExperimentsOwnFieldsStayWithIt) {
  const json round = build_round_loadtest(experiment_loadtest(), 1, 1);
  for (const char* field : {"variants", "experiment", "thresholds", "ttlSecondsAfterFinished"}) {
    EXPECT_FALSE(round["spec"].contains(field)) << field;
  }
  EXPECT_EQ(round["spec"]["load"], experiment_loadtest().spec["load"]);
  EXPECT_EQ(round["metadata"]["annotations"],
            json::parse(R"({"kubeload.dev/revision": "abc123"})"));
}

TEST(OperatorRoundBuilder, TheVariantsHeadersGoOnEveryRequestEvenTheImplicitOne) {
  const json round = build_round_loadtest(experiment_loadtest(), 1, 1);
  EXPECT_EQ(round["spec"]["requests"][0]["headers"],
            json::parse(R"({"Accept": "text/html", "X-Canary": "always"})"));
  EXPECT_EQ(round["spec"]["requests"][1]["headers"], json::parse(R"({"X-Canary": "always"})"));
  kubeload::api::LoadTest implicit = experiment_loadtest();
  implicit.spec.erase("requests");
  const json alone = build_round_loadtest(implicit, 1, 1);
  EXPECT_EQ(alone["spec"]["requests"],
            json::parse(R"([{"name": "default", "headers": {"X-Canary": "always"}}])"));
}

TEST(OperatorRoundBuilder, EveryRoundIsAValidLoadTestThatIsNotAnExperiment) {
  for (std::size_t variant = 0; variant < 2; ++variant) {
    const kubeload::ParsedLoadTest parsed =
        kubeload::parse_loadtest(build_round_loadtest(experiment_loadtest(), variant, 3).dump());
    EXPECT_TRUE(parsed.ok()) << (parsed.errors.empty() ? "" : parsed.errors[0].to_string());
    EXPECT_TRUE(parsed.spec.variants.empty());
  }
}

TEST(OperatorRoundBuilder, ALongNameIsShortenedButKeepsVariantAndRound) {
  const std::string name = round_loadtest_name(std::string(250, 'x'), "canary", 12);
  EXPECT_LE(name.size(), kubeload::kMaxObjectName);
  EXPECT_TRUE(name.ends_with("-canary-12")) << name;
  EXPECT_NE(name, round_loadtest_name(std::string(251, 'x'), "canary", 12));
}

TEST(OperatorRoundBuilder, RefusesAVariantNotInTheSpec) {
  EXPECT_THROW(build_round_loadtest(experiment_loadtest(), 2, 1), std::invalid_argument);
}

// ---- the LoadTests a capacity search creates (build_step_loadtest)

kubeload::api::LoadTest search_loadtest(const char* over = "rate") {
  kubeload::api::LoadTest search;
  search.metadata.name = "nginx-capacity";
  search.metadata.namespace_ = "shop";
  search.metadata.uid = "5e5e5e5e-0000-4000-8000-000000000001";
  search.metadata.labels = {{"team", "web"}};
  search.metadata.annotations = {{"kubeload.dev/revision", "abc123"},
                                 {"kubectl.kubernetes.io/last-applied-configuration", "{}"}};
  search.spec = json::parse(R"({
    "target": {"service": {"name": "nginx-slow", "port": 80}},
    "load": {"duration": "5s", "warmup": "1s"},
    "thresholds": ["p99 < 100ms", "errorRate < 1%"],
    "ttlSecondsAfterFinished": 600
  })");
  search.spec["search"][over] = {{"start", 25}, {"factor", 2}, {"precision", "10%"}};
  return search;
}

TEST(OperatorStepBuilderGolden, AStepMatchesGoldenFile) {
  expect_golden("search_step.json", build_step_loadtest(search_loadtest(), 3, 87.5));
}

TEST(OperatorStepBuilder, AStepRunsTheSearchsSpecAtItsValueAndKeepsTheThresholds) {
  const json step = build_step_loadtest(search_loadtest(), 2, 50);
  EXPECT_EQ(step["metadata"]["name"], "nginx-capacity-step-2");
  EXPECT_EQ(step["metadata"]["labels"]["kubeload.dev/test"], "nginx-capacity-search");
  EXPECT_EQ(step["metadata"]["labels"]["kubeload.dev/search"], "nginx-capacity");
  EXPECT_EQ(step["metadata"]["labels"]["kubeload.dev/step"], "2");
  EXPECT_EQ(step["metadata"]["labels"]["team"], "web");
  EXPECT_EQ(step["metadata"]["ownerReferences"][0]["uid"], search_loadtest().metadata.uid);
  EXPECT_EQ(step["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(step["spec"]["load"],
            json::parse(R"({"duration": "5s", "warmup": "1s", "rate": 50.0})"));
  EXPECT_EQ(step["spec"]["thresholds"], search_loadtest().spec["thresholds"]);
  for (const char* field : {"search", "ttlSecondsAfterFinished"}) {
    EXPECT_FALSE(step["spec"].contains(field)) << field;
  }
  const json closed = build_step_loadtest(search_loadtest("connections"), 1, 25);
  EXPECT_EQ(closed["spec"]["load"]["connections"], 25);
  EXPECT_FALSE(closed["spec"]["load"].contains("rate"));
}

TEST(OperatorStepBuilder, EveryStepIsAValidLoadTestThatIsNotASearch) {
  for (const char* over : {"rate", "connections"}) {
    const kubeload::ParsedLoadTest parsed =
        kubeload::parse_loadtest(build_step_loadtest(search_loadtest(over), 4, 40).dump());
    EXPECT_TRUE(parsed.ok()) << (parsed.errors.empty() ? "" : parsed.errors[0].to_string());
    EXPECT_FALSE(parsed.spec.search);
    EXPECT_EQ(parsed.spec.thresholds.size(), 2u);
  }
}

TEST(OperatorStepBuilder, RefusesALoadTestWithoutASearch) {
  EXPECT_THROW(build_step_loadtest(experiment_loadtest(), 1, 10), std::invalid_argument);
}

}  // namespace
