#include "kubeload/spec.hpp"
#include "kubeload/comparison.hpp"
#include "kubeload/spec_yaml.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

// The examples are read from the source tree. CMake passes absolute source
// paths, so without the definition the tree is found from this file's path.
#ifndef KUBELOAD_SOURCE_DIR
#define KUBELOAD_SOURCE_DIR ""
#endif

namespace kubeload {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> messages(const ParsedLoadTest& parsed) {
  std::vector<std::string> out;
  for (const FieldError& error : parsed.errors) out.push_back(error.to_string());
  return out;
}

// A manifest around a spec body written at zero indentation.
std::string with_spec(const std::string& spec_body,
                      const std::string& metadata = "{name: t, labels: {kubeload.dev/test: t}}") {
  std::string indented;
  std::istringstream lines(spec_body);
  for (std::string line; std::getline(lines, line);) indented += "  " + line + "\n";
  return "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: " + metadata + "\nspec:\n" +
         indented;
}

const std::string kTarget = "target: {url: 'http://127.0.0.1:8080/'}\n";
const std::string kHttpsTarget = "target: {url: 'https://127.0.0.1:8443/'}\n";

// ---- valid manifests -----------------------------------------------------------

// Every field api.md names, with values that differ from the defaults.
const char* const kEveryField = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata:
  name: checkout-2026-11-29
  namespace: shop
  labels:
    kubeload.dev/test: checkout
    team: payments
spec:
  target:
    url: http://checkout.shop.svc:8080/
    allowInsecureSecretHeaders: true
  requests:
  - name: cart
    method: GET
    path: /api/cart?full=1
    headers: {Accept: application/json, X-Trace: "on"}
    headersFrom:
    - name: Authorization
      secretKeyRef: {name: api-token, key: header}
    body: '{"sku": 1}'
    weight: 3
    expect:
      status: [200, 204]
      bodyLength: 16599
  - name: home
    path: /
  load:
    maxConnections: 1000
    requests: 100000
    warmupRequests: 1000
    stages:
    - {duration: 30s, rate: 1000}
    - {duration: 1m30s, rate: 2500.5}
    timeout: 5s
    keepAlive: false
    engine: io_uring
  workers: 4
  workerTemplate:
    image: registry.local/loadgen:1.2
    resources: {limits: {cpu: "2", memory: 1Gi}}
    nodeSelector: {disktype: ssd}
    tolerations: [{key: load, operator: Exists, effect: NoSchedule}]
    affinity: {nodeAffinity: {}}
  thresholds:
  - "p99 < 200ms"
  - "errorRate < 1%"
  - "rps >= 4800"
  - cart.p95 < 100ms
  baseline:
    loadTestName: checkout-2026-11-28
    maxRegression: {p99: 10%, rps: 5%, errorRate: 12.5%}
  cleanup:
    policy: Never
  timeouts:
    start: 2m
status:
  phase: Succeeded
)";

TEST(SpecParse, ReadsEveryFieldOfTheApi) {
  const ParsedLoadTest parsed = parse_loadtest(kEveryField);
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  const LoadTestSpec& spec = parsed.spec;
  EXPECT_EQ(spec.name, "checkout-2026-11-29");
  EXPECT_EQ(spec.namespace_, "shop");
  EXPECT_EQ(spec.labels, (std::map<std::string, std::string>{{"kubeload.dev/test", "checkout"},
                                                             {"team", "payments"}}));
  EXPECT_EQ(spec.url, "http://checkout.shop.svc:8080/");
  EXPECT_TRUE(spec.allow_insecure_secret_headers);
  EXPECT_FALSE(spec.service.has_value());

  ASSERT_EQ(spec.requests.size(), 2u);
  const RequestSpec& cart = spec.requests[0];
  EXPECT_EQ(cart.name, "cart");
  EXPECT_EQ(cart.method, "GET");
  EXPECT_EQ(cart.path, "/api/cart?full=1");
  EXPECT_EQ(cart.headers, (std::vector<std::pair<std::string, std::string>>{
                              {"Accept", "application/json"}, {"X-Trace", "on"}}));
  ASSERT_EQ(cart.headers_from.size(), 1u);
  EXPECT_EQ(cart.headers_from[0].name, "Authorization");
  EXPECT_EQ(cart.headers_from[0].secret_key_ref.name, "api-token");
  EXPECT_EQ(cart.headers_from[0].secret_key_ref.key, "header");
  EXPECT_EQ(cart.body, R"({"sku": 1})");
  EXPECT_EQ(cart.weight, 3u);
  EXPECT_EQ(cart.expect.status, (std::vector<int>{200, 204}));
  EXPECT_EQ(cart.expect.body_length, 16599u);
  const RequestSpec& home = spec.requests[1];
  EXPECT_EQ(home.name, "home");
  EXPECT_EQ(home.method, "GET");
  EXPECT_EQ(home.path, "/");
  EXPECT_EQ(home.weight, 1u);
  EXPECT_TRUE(home.expect.status.empty());
  EXPECT_FALSE(home.expect.body_length.has_value());

  const LoadSpec& load = spec.load;
  EXPECT_TRUE(load.open_model()) << "stages with a rate are the open model";
  EXPECT_FALSE(load.rate.has_value()) << "the stages give the rates";
  EXPECT_FALSE(load.connections.has_value());
  EXPECT_EQ(load.max_connections, 1000u);
  EXPECT_FALSE(load.duration.has_value()) << "stages define the duration";
  EXPECT_EQ(load.requests, 100000u);
  EXPECT_EQ(load.warmup_requests, 1000u);
  EXPECT_FALSE(load.warmup.has_value());
  ASSERT_EQ(load.stages.size(), 2u);
  EXPECT_EQ(load.stages[0].duration, 30s);
  EXPECT_EQ(load.stages[0].rate, 1000.0);
  EXPECT_EQ(load.stages[1].duration, 90s);
  EXPECT_EQ(load.stages[1].rate, 2500.5);
  EXPECT_FALSE(load.stages[1].connections.has_value());
  EXPECT_EQ(load.timeout, 5s);
  EXPECT_FALSE(load.keep_alive);
  EXPECT_EQ(load.engine, EngineRequest::io_uring);

  EXPECT_EQ(spec.workers, 4u);
  EXPECT_EQ(spec.worker_template.image, "registry.local/loadgen:1.2");
  EXPECT_EQ(spec.worker_template.node_selector,
            (std::map<std::string, std::string>{{"disktype", "ssd"}}));
  EXPECT_EQ(spec.worker_template.tolerations, (std::vector<SchedulingTerm>{{"load", "Exists"}}));
  EXPECT_TRUE(spec.worker_template.affinity_set);
  EXPECT_TRUE(spec.worker_template.affinity_requirements.empty());
  // resources, nodeSelector, tolerations and affinity are accepted (parsed.ok()
  // above); the Job builder passes them to the pods as written
  // (operator/job_builder_test, case "resources, nodeSelector, tolerations and affinity").

  ASSERT_EQ(spec.thresholds.size(), 4u);
  EXPECT_EQ(spec.thresholds[0].expression, "p99 < 200ms");
  EXPECT_EQ(spec.thresholds[1].metric, ThresholdMetric::errorRate);
  EXPECT_DOUBLE_EQ(spec.thresholds[1].value, 0.01);
  EXPECT_EQ(spec.thresholds[2].op, ThresholdOp::ge);
  EXPECT_EQ(spec.thresholds[3].request, "cart");

  ASSERT_TRUE(spec.baseline.has_value());
  EXPECT_EQ(spec.baseline->load_test_name, "checkout-2026-11-28");
  EXPECT_FALSE(spec.baseline->last_passed);
  EXPECT_EQ(spec.baseline->max_regression_percent,
            (std::map<std::string, double>{{"p99", 10}, {"rps", 5}, {"errorRate", 12.5}}));
  EXPECT_EQ(spec.cleanup, CleanupPolicy::Never);
  EXPECT_EQ(spec.start_timeout, 2min);
}

// What the operator's scheduling rules read of an affinity: every
// requirement, however deeply nested, node and pod affinity alike.
TEST(SpecParse, AffinityRequirementsAreFoundWhereverTheyAre) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(kTarget + R"(load: {duration: 10s}
workerTemplate:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: node-role.kubernetes.io/control-plane, operator: DoesNotExist}
          matchFields:
          - {key: metadata.name, operator: In, values: [a]}
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector: {matchExpressions: [{key: app, operator: Exists}]}
  tolerations: [{operator: Exists}, {key: gpu, operator: Equal, value: "1"}]
)"));
  ASSERT_TRUE(parsed.ok()) << testing::PrintToString(messages(parsed));
  const WorkerTemplate& worker = parsed.spec.worker_template;
  EXPECT_EQ(worker.affinity_requirements,
            (std::vector<SchedulingTerm>{{"node-role.kubernetes.io/control-plane", "DoesNotExist"},
                                         {"metadata.name", "In"},
                                         {"app", "Exists"}}));
  EXPECT_EQ(worker.tolerations, (std::vector<SchedulingTerm>{{"", "Exists"}, {"gpu", "Equal"}}));
}

TEST(SpecParse, ClosedModelWithServiceTargetAndStages) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(R"(
target: {service: {name: checkout, namespace: shop, port: 8443, scheme: https}}
load:
  warmup: 10s
  stages:
  - {duration: 30s, connections: 10}
  - {duration: 30s, connections: 20}
workers: 2
baseline: {lastPassed: true, maxRegression: {p50: 0%}}
cleanup: {policy: Always}
)"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  const LoadTestSpec& spec = parsed.spec;
  ASSERT_TRUE(spec.service.has_value());
  EXPECT_EQ(spec.service->name, "checkout");
  EXPECT_EQ(spec.service->namespace_, "shop");
  EXPECT_EQ(spec.service->port, 8443);
  EXPECT_EQ(spec.service->scheme, "https");
  EXPECT_FALSE(spec.url.has_value());
  EXPECT_FALSE(spec.load.open_model());
  EXPECT_FALSE(spec.load.connections.has_value()) << "stages give the connections";
  ASSERT_EQ(spec.load.stages.size(), 2u);
  EXPECT_EQ(spec.load.stages[1].connections, 20u);
  EXPECT_EQ(spec.load.warmup, 10s);
  ASSERT_TRUE(spec.baseline.has_value());
  EXPECT_TRUE(spec.baseline->last_passed);
  EXPECT_EQ(spec.cleanup, CleanupPolicy::Always);
}

// The stages set the model, as on the command line (--stages 10s:100/s): rates
// make the open model, whose connections maxConnections caps.
TEST(SpecParse, OpenModelStagesGiveTheirOwnRates) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(kTarget + R"(load:
  maxConnections: 4
  requests: 500
  stages:
  - {duration: 1s, rate: 100}
  - {duration: 2s, rate: 250.5}
workers: 2)"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  const LoadSpec& load = parsed.spec.load;
  EXPECT_TRUE(load.open_model());
  EXPECT_FALSE(load.rate.has_value());
  EXPECT_FALSE(load.connections.has_value());
  EXPECT_EQ(load.max_connections, 4u);
  ASSERT_EQ(load.stages.size(), 2u);
  EXPECT_EQ(load.stages[1].rate, 250.5);
}

// One default, shared with loadgen's command line (-c).
TEST(SpecParse, DefaultConnectionsAreTheSharedDefault) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(kTarget + "load: {duration: 10s}"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  EXPECT_EQ(parsed.spec.load.connections, kDefaultConnections);
  EXPECT_EQ(kDefaultConnections, 10u);
}

TEST(SpecParse, JsonFormGivesTheSameSpec) {
  const char* const json = R"({
    "apiVersion": "kubeload.dev/v1alpha1", "kind": "LoadTest",
    "metadata": {"name": "checkout", "namespace": "shop", "uid": "0f3c", "resourceVersion": "812",
                 "generation": 3, "creationTimestamp": "2026-11-29T10:00:00Z",
                 "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
                 "labels": {"kubeload.dev/test": "checkout"}},
    "spec": {
      "target": {"service": {"name": "checkout", "port": 8080}},
      "requests": [{"name": "cart", "method": "POST", "path": "/api/cart",
                    "headers": {"Content-Type": "application/json"},
                    "body": "{\"sku\": 1}", "weight": 2,
                    "expect": {"status": [201], "bodyLength": 0}}],
      "load": {"connections": 40, "duration": "2m", "warmup": "0s", "timeout": "1.5s",
               "keepAlive": true},
      "workers": 4,
      "thresholds": ["cart.p99 < 100ms", "failures == 0"],
      "cleanup": {"policy": "OnSuccess"},
      "timeouts": {"start": "90s"}
    },
    "status": {"phase": "Running", "result": {"requests": 5}}
  })";
  const ParsedLoadTest parsed = parse_loadtest(json);
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  const LoadTestSpec& spec = parsed.spec;
  EXPECT_EQ(spec.name, "checkout");
  EXPECT_EQ(spec.service->port, 8080);
  ASSERT_EQ(spec.requests.size(), 1u);
  EXPECT_EQ(spec.requests[0].method, "POST");
  EXPECT_EQ(spec.requests[0].body, R"({"sku": 1})");
  EXPECT_EQ(spec.requests[0].expect.body_length, 0u);
  EXPECT_EQ(spec.load.connections, 40u);
  EXPECT_EQ(spec.load.duration, 2min);
  EXPECT_EQ(spec.load.warmup, 0s);
  EXPECT_EQ(spec.load.timeout, 1500ms);
  EXPECT_EQ(spec.workers, 4u);
  EXPECT_EQ(spec.thresholds.size(), 2u);
  EXPECT_EQ(spec.start_timeout, 90s);
}

TEST(SpecParse, NodeOverloadReadsABuiltDocument) {
  YAML::Node manifest;
  manifest["apiVersion"] = "kubeload.dev/v1alpha1";
  manifest["kind"] = "LoadTest";
  manifest["metadata"]["name"] = "built";
  manifest["spec"]["target"]["url"] = "http://127.0.0.1:8080/x";
  manifest["spec"]["load"]["requests"] = 500;
  manifest["spec"]["load"]["connections"] = 5;
  const ParsedLoadTest parsed = parse_loadtest(manifest);
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  EXPECT_EQ(parsed.spec.load.requests, 500u);
  EXPECT_EQ(parsed.spec.load.connections, 5u);
}

TEST(SpecParse, AppliesTheDefaultsOfTheApi) {
  const ParsedLoadTest parsed =
      parse_loadtest(with_spec(kTarget + "load: {duration: 10s}", "{name: t}"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  const LoadTestSpec& spec = parsed.spec;
  ASSERT_EQ(spec.requests.size(), 1u);
  EXPECT_EQ(spec.requests[0].name, "default");
  EXPECT_EQ(spec.requests[0].method, "GET");
  EXPECT_EQ(spec.requests[0].path, "") << "the target URL's own path";
  EXPECT_EQ(spec.requests[0].weight, 1u);
  EXPECT_TRUE(spec.requests[0].headers.empty());
  EXPECT_TRUE(spec.requests[0].expect.status.empty()) << "2xx and 3xx succeed";
  EXPECT_FALSE(spec.load.open_model());
  EXPECT_EQ(spec.load.connections, 10u);
  EXPECT_EQ(spec.load.duration, 10s);
  EXPECT_FALSE(spec.load.requests.has_value());
  EXPECT_EQ(spec.load.timeout, 30s);
  EXPECT_TRUE(spec.load.keep_alive);
  EXPECT_EQ(spec.workers, 1u);
  EXPECT_EQ(spec.cleanup, CleanupPolicy::OnSuccess);
  EXPECT_EQ(spec.start_timeout, 5min);
  EXPECT_TRUE(spec.thresholds.empty());
  EXPECT_FALSE(spec.baseline.has_value());
  EXPECT_TRUE(spec.namespace_.empty());
  EXPECT_TRUE(spec.worker_template.image.empty());
}

// A manifest made for `kubectl create` (a new run each time) has only a
// generateName: valid, and named after that prefix for `loadgen run`.
TEST(SpecParse, AGenerateNameStandsForTheName) {
  const ParsedLoadTest parsed =
      parse_loadtest(with_spec(kTarget + "load: {duration: 10s}", "{generateName: gate-}"));
  ASSERT_TRUE(parsed.ok()) << messages(parsed).front();
  EXPECT_EQ(parsed.spec.name, "gate");
  EXPECT_EQ(parsed.spec.generate_name, "gate-");
  EXPECT_FALSE(parse_loadtest(with_spec(kTarget + "load: {duration: 10s}",
                                        "{generateName: " + std::string(249, 'a') + "}"))
                   .ok());
}

TEST(SpecParse, DefaultsThatDependOnOtherFields) {
  // An explicit empty request list is the same as none, as in Kubernetes.
  ParsedLoadTest parsed = parse_loadtest(with_spec(kTarget + "requests: []\nload: {requests: 5}"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  ASSERT_EQ(parsed.spec.requests.size(), 1u);
  EXPECT_EQ(parsed.spec.requests[0].name, "default");

  // The open model has no connection count to default.
  parsed = parse_loadtest(with_spec(kTarget + "load: {rate: 10, duration: 1s}"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  EXPECT_FALSE(parsed.spec.load.connections.has_value());

  // A service port follows the scheme unless given.
  parsed = parse_loadtest(
      with_spec("target: {service: {name: web, scheme: https}}\nload: {requests: 1}"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  EXPECT_EQ(parsed.spec.service->port, 443);
  parsed = parse_loadtest(with_spec("target: {service: {name: web}}\nload: {requests: 1}"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  EXPECT_EQ(parsed.spec.service->port, 80);
  EXPECT_EQ(parsed.spec.service->scheme, "http");
}

TEST(SpecParse, NullMeansAbsentAndAliasesAreResolved) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(R"(
target: {url: 'http://[::1]:8080/', service: null}
requests:
- {name: a, headers: &common {Accept: application/json, X-Run: nightly}}
- {name: b, headers: *common, body: ~}
load: {duration: 10s, warmup: null}
thresholds: ~
)"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  EXPECT_FALSE(parsed.spec.service.has_value());
  EXPECT_FALSE(parsed.spec.load.warmup.has_value());
  ASSERT_EQ(parsed.spec.requests.size(), 2u);
  EXPECT_EQ(parsed.spec.requests[1].headers, parsed.spec.requests[0].headers);
  EXPECT_EQ(parsed.spec.requests[1].headers.size(), 2u);
}

std::filesystem::path source_dir() {
  const std::string configured = KUBELOAD_SOURCE_DIR;
  if (!configured.empty()) return configured;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path();
}

TEST(SpecParse, EveryExampleManifestIsValid) {
  const std::filesystem::path examples = source_dir() / "examples";
  ASSERT_TRUE(std::filesystem::is_directory(examples)) << examples;
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(examples)) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream file(entry.path());
    std::stringstream text;
    text << file.rdbuf();
    const ParsedLoadTest parsed = parse_loadtest(text.str());
    EXPECT_TRUE(parsed.ok()) << entry.path() << ": " << ::testing::PrintToString(messages(parsed));
    EXPECT_FALSE(parsed.spec.name.empty()) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 4) << "examples/ should hold the four example LoadTests";
}

// ---- validation: one row per rule, with the exact message ----------------------

struct InvalidSpec {
  const char* rule;
  std::string spec_body;
  std::vector<std::string> errors;
};

// gtest would print the parameter as bytes; its rule says which row failed.
void PrintTo(const InvalidSpec& row, std::ostream* out) {
  *out << row.rule;
}

class SpecValidation : public ::testing::TestWithParam<InvalidSpec> {};

TEST_P(SpecValidation, ReportsExactlyTheseErrors) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(GetParam().spec_body));
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(messages(parsed), GetParam().errors);
}

const std::string kLoad = "load: {duration: 10s}\n";

std::string PrintRule(const ::testing::TestParamInfo<InvalidSpec>& info) {
  std::string name = info.param.rule;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Target, SpecValidation,
    ::testing::Values(
        InvalidSpec{"no_target", kLoad, {"spec.target: exactly one of url or service is required"}},
        InvalidSpec{"empty_target",
                    "target: {}\n" + kLoad,
                    {"spec.target: exactly one of url or service is required"}},
        InvalidSpec{"url_and_service",
                    "target: {url: 'http://a/', service: {name: web}}\n" + kLoad,
                    {"spec.target: exactly one of url or service is required"}},
        InvalidSpec{"url_scheme",
                    "target: {url: 'ftp://a/'}\n" + kLoad,
                    {"spec.target.url: must be an http:// or https:// URL with a host, got "
                     "\"ftp://a/\""}},
        InvalidSpec{"url_no_scheme",
                    "target: {url: 'example.com/'}\n" + kLoad,
                    {"spec.target.url: must be an http:// or https:// URL with a host, got "
                     "\"example.com/\""}},
        InvalidSpec{"url_no_host",
                    "target: {url: 'http:///x'}\n" + kLoad,
                    {"spec.target.url: must be an http:// or https:// URL with a host, got "
                     "\"http:///x\""}},
        InvalidSpec{"url_port_range",
                    "target: {url: 'http://a:99999/'}\n" + kLoad,
                    {"spec.target.url: invalid port \"99999\" in \"http://a:99999/\""}},
        InvalidSpec{"url_empty_port",
                    "target: {url: 'http://a:/'}\n" + kLoad,
                    {"spec.target.url: invalid port \"\" in \"http://a:/\""}},
        InvalidSpec{"url_space",
                    "target: {url: 'http://a/b c'}\n" + kLoad,
                    {"spec.target.url: must not contain spaces or control characters"}},
        InvalidSpec{"url_credentials_not_echoed",
                    "target: {url: 'http://user:hunter2@a/'}\n" + kLoad,
                    {"spec.target.url: must not contain credentials (user:password@); use "
                     "headersFrom"}},
        InvalidSpec{"service_name_required",
                    "target: {service: {port: 80}}\n" + kLoad,
                    {"spec.target.service.name: required"}},
        InvalidSpec{"service_name_form",
                    "target: {service: {name: 9web}}\n" + kLoad,
                    {"spec.target.service.name: invalid service name \"9web\": must be a "
                     "lowercase RFC 1035 label (a-z, 0-9 and '-', starting with a letter, at "
                     "most 63 characters)"}},
        InvalidSpec{"service_port_zero",
                    "target: {service: {name: web, port: 0}}\n" + kLoad,
                    {"spec.target.service.port: must be between 1 and 65535, got 0"}},
        InvalidSpec{"service_port_high",
                    "target: {service: {name: web, port: 65536}}\n" + kLoad,
                    {"spec.target.service.port: must be between 1 and 65535, got 65536"}},
        InvalidSpec{"service_scheme",
                    "target: {service: {name: web, scheme: ftp}}\n" + kLoad,
                    {"spec.target.service.scheme: must be one of http, https, got \"ftp\""}},
        InvalidSpec{"service_namespace",
                    "target: {service: {name: web, namespace: Shop}}\n" + kLoad,
                    {"spec.target.service.namespace: invalid namespace \"Shop\": must be a "
                     "lowercase RFC 1123 label (a-z, 0-9 and '-', at most 63 characters)"}}),
    PrintRule);

INSTANTIATE_TEST_SUITE_P(
    Requests, SpecValidation,
    ::testing::Values(
        InvalidSpec{"method_lowercase",
                    kTarget + kLoad + "requests: [{name: a}, {name: b, method: get}]",
                    {"spec.requests[1].method: invalid method \"get\": must be an upper-case "
                     "HTTP token such as GET or POST"}},
        InvalidSpec{"method_space",
                    kTarget + kLoad + "requests: [{name: a, method: 'GE T'}]",
                    {"spec.requests[0].method: invalid method \"GE T\": must be an upper-case "
                     "HTTP token such as GET or POST"}},
        InvalidSpec{"path_slash",
                    kTarget + kLoad + "requests: [{name: a, path: api}]",
                    {"spec.requests[0].path: must start with '/', got \"api\""}},
        InvalidSpec{"path_space",
                    kTarget + kLoad + "requests: [{name: a, path: '/a b'}]",
                    {"spec.requests[0].path: must not contain spaces or control characters, got "
                     "\"/a b\""}},
        InvalidSpec{"header_name",
                    kTarget + kLoad + "requests: [{name: a, headers: {'Bad Header': x}}]",
                    {"spec.requests[0].headers: invalid header name \"Bad Header\""}},
        InvalidSpec{"header_injection",
                    kTarget + kLoad + "requests: [{name: a, headers: {X-A: \"1\\r\\nX-B: 2\"}}]",
                    {"spec.requests[0].headers.X-A: must not contain CR, LF or NUL"}},
        InvalidSpec{"header_duplicate",
                    kTarget + kLoad + "requests: [{name: a, headers: {Accept: a, accept: b}}]",
                    {"spec.requests[0].headers: duplicate header \"accept\""}},
        InvalidSpec{"header_framing",
                    kTarget + kLoad + "requests: [{name: a, headers: {Content-Length: '5'}}]",
                    {"spec.requests[0].headers: header \"Content-Length\" is set by loadgen from "
                     "the body"}},
        InvalidSpec{"weight_zero",
                    kTarget + kLoad + "requests: [{name: a, weight: 0}]",
                    {"spec.requests[0].weight: must be between 1 and 1000000, got 0"}},
        InvalidSpec{"name_required",
                    kTarget + kLoad + "requests: [{path: /}]",
                    {"spec.requests[0].name: required"}},
        InvalidSpec{"name_form",
                    kTarget + kLoad + "requests: [{name: Cart}]",
                    {"spec.requests[0].name: invalid name \"Cart\": must match "
                     "[a-z0-9]([-a-z0-9_]*[a-z0-9])? (names become metric labels)"}},
        InvalidSpec{"name_trailing_dash",
                    kTarget + kLoad + "requests: [{name: cart-}]",
                    {"spec.requests[0].name: invalid name \"cart-\": must match "
                     "[a-z0-9]([-a-z0-9_]*[a-z0-9])? (names become metric labels)"}},
        InvalidSpec{"name_unique",
                    kTarget + kLoad + "requests: [{name: cart}, {name: home}, {name: cart}]",
                    {"spec.requests[2].name: duplicate name \"cart\""}},
        InvalidSpec{"name_unique_after_bad_item",
                    kTarget + kLoad + "requests: [GET, {name: cart}, {name: cart}]",
                    {"spec.requests[0]: must be a map, got \"GET\"",
                     "spec.requests[2].name: duplicate name \"cart\""}},
        InvalidSpec{"headers_from_required",
                    kHttpsTarget + kLoad + "requests: [{name: a, headersFrom: [{}]}]",
                    {"spec.requests[0].headersFrom[0].name: required",
                     "spec.requests[0].headersFrom[0].secretKeyRef: required"}},
        InvalidSpec{"headers_from_ref_required",
                    kHttpsTarget + kLoad +
                        "requests: [{name: a, headersFrom: [{name: X-Key, secretKeyRef: {}}]}]",
                    {"spec.requests[0].headersFrom[0].secretKeyRef.name: required",
                     "spec.requests[0].headersFrom[0].secretKeyRef.key: required"}},
        InvalidSpec{"headers_from_twice",
                    kHttpsTarget + kLoad +
                        "requests: [{name: a, headers: {authorization: x}, headersFrom: [{name: "
                        "Authorization, secretKeyRef: {name: s, key: k}}]}]",
                    {"spec.requests[0].headersFrom[0].name: header \"Authorization\" is set "
                     "twice"}},
        InvalidSpec{"headers_from_twice_from_secrets",
                    kHttpsTarget + kLoad +
                        "requests: [{name: a, headersFrom: [x, {name: X-Key, secretKeyRef: {name: "
                        "s, key: k}}, {name: x-key, secretKeyRef: {name: t, key: k}}]}]",
                    {"spec.requests[0].headersFrom[0]: must be a map, got \"x\"",
                     "spec.requests[0].headersFrom[2].name: header \"x-key\" is set twice"}},
        InvalidSpec{"headers_from_over_plain_http",
                    kTarget + kLoad +
                        "requests: [{name: a, headersFrom: [{name: X-Key, secretKeyRef: {name: "
                        "s, key: k}}]}]",
                    {"spec.requests[0].headersFrom: a Secret's value would be sent over plain "
                     "http: use an https target, or set spec.target.allowInsecureSecretHeaders: "
                     "true"}},
        InvalidSpec{"headers_from_over_unverified_https",
                    "target: {url: 'https://127.0.0.1:8443/', tls: {insecureSkipVerify: true}}\n" +
                        kLoad +
                        "requests: [{name: a, headersFrom: [{name: X-Key, secretKeyRef: {name: "
                        "s, key: k}}]}]",
                    {"spec.requests[0].headersFrom: a Secret's value would be sent to a server "
                     "whose certificate is not verified (spec.target.tls.insecureSkipVerify): "
                     "verify it (spec.target.tls.caFrom), or set "
                     "spec.target.allowInsecureSecretHeaders: true"}},
        InvalidSpec{"expect_status_range",
                    kTarget + kLoad + "requests: [{name: a, expect: {status: [200, 600, 99]}}]",
                    {"spec.requests[0].expect.status[1]: must be between 100 and 599, got 600",
                     "spec.requests[0].expect.status[2]: must be between 100 and 599, got 99"}},
        InvalidSpec{"expect_body_length",
                    kTarget + kLoad + "requests: [{name: a, expect: {bodyLength: -1}}]",
                    {"spec.requests[0].expect.bodyLength: must be >= 0, got -1"}}),
    PrintRule);

INSTANTIATE_TEST_SUITE_P(
    Load, SpecValidation,
    ::testing::Values(
        InvalidSpec{"rate_negative",
                    kTarget + "load: {rate: -5, duration: 10s}",
                    {"spec.load.rate: must be > 0, got -5"}},
        InvalidSpec{"rate_zero",
                    kTarget + "load: {rate: 0, duration: 10s}",
                    {"spec.load.rate: must be > 0, got 0"}},
        InvalidSpec{"connections_zero",
                    kTarget + "load: {connections: 0, duration: 10s}",
                    {"spec.load.connections: must be >= 1, got 0"}},
        InvalidSpec{"max_connections_zero",
                    kTarget + "load: {rate: 5, maxConnections: 0, duration: 10s}",
                    {"spec.load.maxConnections: must be >= 1, got 0"}},
        InvalidSpec{"max_connections_closed",
                    kTarget + "load: {maxConnections: 5, duration: 10s}",
                    {"spec.load.maxConnections: only valid with rate (open model)"}},
        InvalidSpec{"connections_open",
                    kTarget + "load: {rate: 5, connections: 5, duration: 10s}",
                    {"spec.load.connections: not valid with rate (open model); use "
                     "maxConnections to cap connections"}},
        InvalidSpec{"duration_unit",
                    kTarget + "load: {duration: 10x}",
                    {"spec.load.duration: invalid duration \"10x\""}},
        InvalidSpec{"duration_unitless",
                    kTarget + "load: {duration: 60}",
                    {"spec.load.duration: invalid duration \"60\" (a unit is required, e.g. "
                     "\"60s\")"}},
        InvalidSpec{"duration_negative",
                    kTarget + "load: {duration: -5s}",
                    {"spec.load.duration: invalid duration \"-5s\" (must not be negative)"}},
        InvalidSpec{"duration_zero",
                    kTarget + "load: {duration: 0s}",
                    {"spec.load.duration: must be > 0, got \"0s\""}},
        InvalidSpec{"duration_or_requests",
                    kTarget + "load: {connections: 5}",
                    {"spec.load: one of duration or requests is required"}},
        InvalidSpec{"no_load", kTarget, {"spec.load: one of duration or requests is required"}},
        InvalidSpec{"requests_zero",
                    kTarget + "load: {requests: 0}",
                    {"spec.load.requests: must be >= 1, got 0"}},
        InvalidSpec{"warmup_exclusive",
                    kTarget + "load: {duration: 10s, warmup: 5s, warmupRequests: 100}",
                    {"spec.load: warmup and warmupRequests are mutually exclusive"}},
        InvalidSpec{"warmup_requests_negative",
                    kTarget + "load: {duration: 10s, warmupRequests: -1}",
                    {"spec.load.warmupRequests: must be >= 0, got -1"}},
        InvalidSpec{"timeout_zero",
                    kTarget + "load: {duration: 10s, timeout: 0}",
                    {"spec.load.timeout: must be > 0, got \"0\""}},
        InvalidSpec{"keep_alive_bool",
                    kTarget + "load: {duration: 10s, keepAlive: yes}",
                    {"spec.load.keepAlive: must be true or false, got yes"}},
        InvalidSpec{"engine_word",
                    kTarget + "load: {duration: 10s, engine: uring}",
                    {"spec.load.engine: must be one of auto, io_uring, epoll, got \"uring\""}},
        InvalidSpec{"stage_duration_required",
                    kTarget + "load: {stages: [{connections: 5}]}",
                    {"spec.load.stages[0].duration: required"}},
        InvalidSpec{"stage_duration_zero",
                    kTarget + "load: {stages: [{duration: 0s, connections: 5}]}",
                    {"spec.load.stages[0].duration: must be > 0, got \"0s\""}},
        InvalidSpec{"stage_connections_closed",
                    kTarget + "load: {stages: [{duration: 1s, connections: 5}, {duration: 1s}]}",
                    {"spec.load.stages[1].connections: required in the closed model"}},
        InvalidSpec{"stage_connections_open",
                    kTarget + "load: {stages: [{duration: 1s, rate: 5}, {duration: 1s, "
                              "connections: 5}]}",
                    {"spec.load.stages[1].connections: not valid in the open model "
                     "(spec.load.stages[0] gives a rate); every stage gives a rate, or every "
                     "stage connections"}},
        InvalidSpec{"stage_rate_closed",
                    kTarget + "load: {stages: [{duration: 1s, connections: 5}, {duration: 1s, "
                              "rate: 5}]}",
                    {"spec.load.stages[1].rate: not valid in the closed model "
                     "(spec.load.stages[0] gives connections); every stage gives a rate, or "
                     "every stage connections"}},
        InvalidSpec{"stage_rate_required",
                    kTarget + "load: {stages: [{duration: 1s, rate: 5}, {duration: 1s}]}",
                    {"spec.load.stages[1].rate: required in the open model"}},
        InvalidSpec{"stage_load_required",
                    kTarget + "load: {stages: [{duration: 1s}]}",
                    {"spec.load.stages[0]: connections (closed model) or rate (open model) is "
                     "required"}},
        InvalidSpec{"stage_both_models",
                    kTarget + "load: {stages: [{duration: 1s, connections: 5, rate: 5}]}",
                    {"spec.load.stages[0]: exactly one of connections (closed model) or rate "
                     "(open model), got both"}},
        InvalidSpec{"stage_rate_value",
                    kTarget + "load: {stages: [{duration: 1s, rate: 0}]}",
                    {"spec.load.stages[0].rate: must be > 0, got 0"}},
        // The stages set the load: a rate or connections beside them would be
        // ignored (the command line refuses -r and -c with --stages alike).
        InvalidSpec{"rate_with_stages",
                    kTarget + "load: {rate: 5000, stages: [{duration: 1s, rate: 100}]}",
                    {"spec.load.rate: not valid with stages, got 5000 (each stage sets its own "
                     "rate, e.g. {duration: 10s, rate: 5000})"}},
        InvalidSpec{"rate_with_closed_stages",
                    kTarget + "load: {rate: 5, stages: [{duration: 1s, connections: 5}]}",
                    {"spec.load.rate: not valid with stages, got 5 (each stage sets its own "
                     "rate, e.g. {duration: 10s, rate: 5})"}},
        InvalidSpec{"invalid_rate_with_stages",
                    kTarget + "load: {rate: 0, stages: [{duration: 1s, rate: 100}]}",
                    {"spec.load.rate: must be > 0, got 0",
                     "spec.load.rate: not valid with stages, got 0 (each stage sets its own "
                     "rate, e.g. {duration: 10s, rate: 0})"}},
        InvalidSpec{"connections_with_stages",
                    kTarget + "load: {connections: 7, stages: [{duration: 1s, connections: 5}]}",
                    {"spec.load.connections: not valid with stages, got 7 (each stage sets its "
                     "own connections, e.g. {duration: 10s, connections: 7})"}},
        InvalidSpec{"max_connections_closed_stages",
                    kTarget + "load: {maxConnections: 5, stages: [{duration: 1s, connections: "
                              "5}]}",
                    {"spec.load.maxConnections: only valid with rate (open model)"}},
        InvalidSpec{"stages_and_duration",
                    kTarget + "load: {duration: 10s, stages: [{duration: 1s, connections: 5}]}",
                    {"spec.load.duration: not valid with stages (the stages define the "
                     "duration)"}},
        InvalidSpec{"stage_unknown_field",
                    kTarget + "load: {stages: [{duration: 1s, connections: 5, threads: 2}]}",
                    {"spec.load.stages[0].threads: unknown field"}}),
    PrintRule);

// Durations and rates that would overflow 64-bit nanoseconds somewhere downstream
// (a clock reading plus the run, stages summed, requests / rate) are refused
// with the field path instead of wrapping.
INSTANTIATE_TEST_SUITE_P(
    Overflow, SpecValidation,
    ::testing::Values(
        InvalidSpec{"duration_beyond_int64_nanoseconds",
                    kTarget + "load: {duration: 2562048h}",
                    {"spec.load.duration: invalid duration \"2562048h\""}},
        InvalidSpec{"duration_at_int64_nanoseconds",
                    kTarget + "load: {duration: 2562047h}",
                    {"spec.load.duration: must be at most 8760h, got \"2562047h\""}},
        InvalidSpec{"timeout_too_long",
                    kTarget + "load: {duration: 10s, timeout: 8761h}",
                    {"spec.load.timeout: must be at most 8760h, got \"8761h\""}},
        InvalidSpec{"warmup_plus_duration",
                    kTarget + "load: {duration: 5000h, warmup: 5000h}",
                    {"spec.load.duration: the run would last longer than 8760h (warmup, duration "
                     "and stages)"}},
        InvalidSpec{"stages_summed",
                    kTarget +
                        "load: {stages: [{duration: 8000h, connections: 5}, {duration: 8000h, "
                        "connections: 5}, {duration: 8000h, connections: 5}]}",
                    {"spec.load.stages[1].duration: the run would last longer than 8760h "
                     "(warmup, duration and stages)"}},
        InvalidSpec{"rate_too_high",
                    kTarget + "load: {rate: 1e10, duration: 10s}",
                    {"spec.load.rate: must be between one request per 8760h and 1000000000 "
                     "requests per second, got 1e10"}},
        InvalidSpec{"rate_too_low",
                    kTarget + "load: {rate: 1e-300, duration: 10s}",
                    {"spec.load.rate: must be between one request per 8760h and 1000000000 "
                     "requests per second, got 1e-300"}},
        InvalidSpec{"stage_rate_too_high",
                    kTarget + "load: {stages: [{duration: 1s, rate: 2e9}]}",
                    {"spec.load.stages[0].rate: must be between one request per 8760h and "
                     "1000000000 requests per second, got 2e9"}},
        InvalidSpec{"requests_at_rate_too_long",
                    kTarget + "load: {rate: 0.5, requests: 9000000000000000000}",
                    {"spec.load.requests: at spec.load.rate 0.5/s, 9000000000000000000 requests "
                     "take longer than 8760h"}}),
    PrintRule);

TEST(SpecValidation, LongestAllowedRunIsAccepted) {
  const ParsedLoadTest parsed =
      parse_loadtest(with_spec(kTarget + "load: {duration: 8759h, warmup: 1h, timeout: 8760h}"));
  EXPECT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  const ParsedLoadTest at_rate =
      parse_loadtest(with_spec(kTarget + "load: {rate: 1000000000, requests: 1000000}"));
  EXPECT_TRUE(at_rate.ok()) << ::testing::PrintToString(messages(at_rate));
}

INSTANTIATE_TEST_SUITE_P(
    Workers, SpecValidation,
    ::testing::Values(
        InvalidSpec{"workers_zero",
                    kTarget + kLoad + "workers: 0",
                    {"spec.workers: must be between 1 and 1000, got 0"}},
        InvalidSpec{"workers_many",
                    kTarget + "load: {duration: 1s, connections: 5000}\nworkers: 1001",
                    {"spec.workers: must be between 1 and 1000, got 1001"}},
        InvalidSpec{"connections_per_worker",
                    kTarget + "load: {duration: 1s, connections: 2}\nworkers: 4",
                    {"spec.load.connections: must be >= spec.workers (4), got 2: each worker "
                     "needs at least one connection"}},
        InvalidSpec{"default_connections_per_worker",
                    kTarget + kLoad + "workers: 20",
                    {"spec.load.connections: must be >= spec.workers (20), got 10 (the "
                     "default): each worker needs at least one connection"}},
        InvalidSpec{"stage_connections_per_worker",
                    kTarget + "load: {stages: [{duration: 1s, connections: 3}, {duration: 1s, "
                              "connections: 2}]}\nworkers: 3",
                    {"spec.load.stages[1].connections: must be >= spec.workers (3), got 2: each "
                     "worker needs at least one connection"}},
        InvalidSpec{"max_connections_per_worker",
                    kTarget + "load: {rate: 100, maxConnections: 1, duration: 1s}\nworkers: 2",
                    {"spec.load.maxConnections: must be >= spec.workers (2), got 1: each worker "
                     "needs at least one connection"}},
        InvalidSpec{"worker_template_shapes",
                    kTarget + kLoad +
                        "workerTemplate: {image: [x], resources: [], nodeSelector: {disk: {a: "
                        "b}}, tolerations: {}, affinity: x, replicas: 2}",
                    {"spec.workerTemplate.image: must be a string, got list",
                     "spec.workerTemplate.resources: must be a map, got list",
                     "spec.workerTemplate.nodeSelector.disk: must be a string, got map",
                     "spec.workerTemplate.tolerations: must be a list, got map",
                     "spec.workerTemplate.affinity: must be a map, got \"x\"",
                     "spec.workerTemplate.replicas: unknown field"}},
        InvalidSpec{"cleanup_policy",
                    kTarget + kLoad + "cleanup: {policy: Sometimes}",
                    {"spec.cleanup.policy: must be one of Always, OnSuccess, Never, got "
                     "\"Sometimes\""}},
        InvalidSpec{
            "start_timeout",
            kTarget + kLoad + "timeouts: {start: 0s, stop: 1m}",
            {"spec.timeouts.start: must be > 0, got \"0s\"", "spec.timeouts.stop: unknown field"}}),
    PrintRule);

INSTANTIATE_TEST_SUITE_P(
    Gates, SpecValidation,
    ::testing::Values(
        InvalidSpec{"threshold_metric",
                    kTarget + kLoad + "thresholds: ['p99 < 1s', 'rps > 1', 'p98 < 10ms']",
                    {"spec.thresholds[2]: unknown metric \"p98\" in \"p98 < 10ms\""}},
        InvalidSpec{"threshold_not_string",
                    kTarget + kLoad + "thresholds: [{p99: 1s}]",
                    {"spec.thresholds[0]: must be a string, got map"}},
        InvalidSpec{"thresholds_not_list",
                    kTarget + kLoad + "thresholds: 'p99 < 1s'",
                    {"spec.thresholds: must be a list, got \"p99 < 1s\""}},
        InvalidSpec{"threshold_unknown_request",
                    kTarget + kLoad + "requests: [{name: home}]\nthresholds: ['cart.p99 < 5ms']",
                    {"spec.thresholds[0]: unknown request \"cart\" in \"cart.p99 < 5ms\""}},
        InvalidSpec{
            "baseline_neither",
            kTarget + kLoad + "baseline: {maxRegression: {p99: 5%}}",
            {"spec.baseline: exactly one of loadTestName, resultName or lastPassed: true is "
             "required"}},
        InvalidSpec{
            "baseline_both",
            kTarget + kLoad +
                "baseline: {loadTestName: old, lastPassed: true, maxRegression: {p99: 5%}}",
            {"spec.baseline: exactly one of loadTestName, resultName or lastPassed: true is "
             "required"}},
        InvalidSpec{
            "baseline_last_passed_false",
            kTarget + kLoad + "baseline: {lastPassed: false, maxRegression: {p99: 5%}}",
            {"spec.baseline: exactly one of loadTestName, resultName or lastPassed: true is "
             "required"}},
        InvalidSpec{
            "baseline_result_and_last_passed",
            kTarget + kLoad +
                "baseline: {resultName: old-1, lastPassed: true, maxRegression: {p99: 5%}}",
            {"spec.baseline: exactly one of loadTestName, resultName or lastPassed: true is "
             "required"}},
        InvalidSpec{
            "baseline_window_of_a_named_record",
            kTarget + kLoad + "baseline: {resultName: old-1, window: 3, maxRegression: {p99: 5%}}",
            {"spec.baseline.window: is for lastPassed: true (a named baseline is one "
             "record)"}},
        InvalidSpec{
            "baseline_window_too_large",
            kTarget + kLoad + "baseline: {lastPassed: true, window: 21, maxRegression: {p99: 5%}}",
            {"spec.baseline.window: must be between 1 and 20, got 21"}},
        InvalidSpec{"history_keep_zero",
                    kTarget + kLoad + "history: {keep: 0}",
                    {"spec.history.keep: must be between 1 and 10000, got 0"}},
        InvalidSpec{"baseline_name",
                    kTarget + kLoad + "baseline: {loadTestName: Old_Run, maxRegression: {p99: 5%}}",
                    {"spec.baseline.loadTestName: invalid name \"Old_Run\": must be a lowercase "
                     "RFC 1123 subdomain"}},
        InvalidSpec{"max_regression_keys",
                    kTarget + kLoad +
                        "baseline: {loadTestName: old, maxRegression: {p98: 5%, p99: 10, rps: "
                        "-5%, max: 'x%'}}",
                    {"spec.baseline.maxRegression.p98: unknown metric \"p98\" (one of p50, p90, "
                     "p95, p99, p999, mean, max, rps, errorRate)",
                     "spec.baseline.maxRegression.p99: must be a percentage like \"10%\", got 10",
                     "spec.baseline.maxRegression.rps: must be a percentage like \"10%\", got -5%",
                     "spec.baseline.maxRegression.max: must be a percentage like \"10%\", got "
                     "string \"x%\""}},
        InvalidSpec{"max_regression_required",
                    kTarget + kLoad + "baseline: {loadTestName: old}",
                    {"spec.baseline.maxRegression: required"}},
        InvalidSpec{"max_regression_empty",
                    kTarget + kLoad + "baseline: {loadTestName: old, maxRegression: {}}",
                    {"spec.baseline.maxRegression: at least one metric is required"}}),
    PrintRule);

INSTANTIATE_TEST_SUITE_P(
    Strictness, SpecValidation,
    ::testing::Values(
        InvalidSpec{
            "unknown_spec_field",
            kTarget + "laod: {duration: 10s}",
            {"spec.laod: unknown field", "spec.load: one of duration or requests is required"}},
        InvalidSpec{"unknown_nested_field",
                    kTarget + "load: {duration: 10s, rps: 5}",
                    {"spec.load.rps: unknown field"}},
        InvalidSpec{"unknown_request_field",
                    kTarget + kLoad + "requests: [{name: a, url: 'http://b/'}]",
                    {"spec.requests[0].url: unknown field"}},
        InvalidSpec{"duplicate_field",
                    kTarget + "load: {duration: 10s, duration: 20s}",
                    {"spec.load.duration: duplicate field"}},
        InvalidSpec{"map_for_integer",
                    kTarget + "load: {duration: 10s, connections: {a: 1}}",
                    {"spec.load.connections: must be an integer, got map"}},
        InvalidSpec{"quoted_integer",
                    kTarget + "load: {duration: 10s, connections: '10'}",
                    {"spec.load.connections: must be an integer, got string \"10\""}},
        InvalidSpec{"fraction_for_integer",
                    kTarget + "load: {duration: 10s, connections: 1.5}",
                    {"spec.load.connections: must be an integer, got 1.5"}},
        InvalidSpec{"huge_integer",
                    kTarget + "load: {duration: 10s, connections: 99999999999999999999}",
                    {"spec.load.connections: out of range, got 99999999999999999999"}},
        InvalidSpec{"word_for_number",
                    kTarget + "load: {duration: 10s, rate: fast}",
                    {"spec.load.rate: must be a number, got fast"}},
        InvalidSpec{"infinite_rate",
                    kTarget + "load: {duration: 10s, rate: .inf}",
                    {"spec.load.rate: must be a number, got .inf"}},
        InvalidSpec{"list_for_duration",
                    kTarget + "load: {duration: [10s]}",
                    {"spec.load.duration: must be a duration like \"30s\", got list"}},
        InvalidSpec{"list_for_map",
                    kTarget + "load: [duration, 10s]",
                    {"spec.load: must be a map, got list"}},
        InvalidSpec{"scalar_for_target",
                    "target: http://a/\n" + kLoad,
                    {"spec.target: must be a map, got \"http://a/\""}},
        InvalidSpec{"map_for_list",
                    kTarget + kLoad + "requests: {name: a}",
                    {"spec.requests: must be a list, got map"}},
        InvalidSpec{"list_item_not_map",
                    kTarget + kLoad + "requests: [GET /]",
                    {"spec.requests[0]: must be a map, got \"GET /\""}},
        InvalidSpec{"map_as_key",
                    kTarget + kLoad + "? {a: 1}\n: x",
                    {"spec: field names must be strings, got map"}}),
    PrintRule);

// ---- the document around the spec --------------------------------------------------

struct InvalidManifest {
  const char* rule;
  std::string text;
  std::vector<std::string> errors;
};

void PrintTo(const InvalidManifest& row, std::ostream* out) {
  *out << row.rule;
}

class ManifestValidation : public ::testing::TestWithParam<InvalidManifest> {};

TEST_P(ManifestValidation, ReportsExactlyTheseErrors) {
  const ParsedLoadTest parsed = parse_loadtest(GetParam().text);
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(messages(parsed), GetParam().errors);
}

const std::string kValidSpec = "spec: {target: {url: 'http://a/'}, load: {duration: 1s}}\n";

std::string PrintManifestRule(const ::testing::TestParamInfo<InvalidManifest>& info) {
  return info.param.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Document, ManifestValidation,
    ::testing::Values(
        InvalidManifest{
            "wrong_api_version",
            "apiVersion: kubeload.dev/v1\nkind: LoadTest\nmetadata: {name: t}\n" + kValidSpec,
            {"apiVersion: must be \"kubeload.dev/v1alpha1\", got \"kubeload.dev/v1\""}},
        InvalidManifest{"missing_api_version_and_kind",
                        "metadata: {name: t}\n" + kValidSpec,
                        {"apiVersion: required", "kind: required"}},
        InvalidManifest{
            "wrong_kind",
            "apiVersion: kubeload.dev/v1alpha1\nkind: Job\nmetadata: {name: t}\n" + kValidSpec,
            {"kind: must be \"LoadTest\", got \"Job\""}},
        InvalidManifest{
            "missing_name",
            "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {}\n" + kValidSpec,
            {"metadata.name: required (or metadata.generateName, for `kubectl create`)"}},
        InvalidManifest{"bad_generate_name",
                        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: "
                        "{generateName: Gate_}\n" +
                            kValidSpec,
                        {"metadata.generateName: invalid generateName \"Gate_\": must be a "
                         "lowercase RFC 1123 subdomain, which may end in '-', of at most 248 "
                         "characters (the API server adds 5)"}},
        InvalidManifest{"missing_metadata",
                        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\n" + kValidSpec,
                        {"metadata.name: required (or metadata.generateName, for `kubectl "
                         "create`)"}},
        InvalidManifest{
            "bad_name",
            "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: Load_Test}\n" +
                kValidSpec,
            {"metadata.name: invalid name \"Load_Test\": must be a lowercase RFC 1123 subdomain "
             "(a-z, 0-9, '-' and '.', starting and ending with a letter or digit, at most 253 "
             "characters)"}},
        InvalidManifest{"name_dot_dash",
                        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: "
                        "a.-b}\n" +
                            kValidSpec,
                        {"metadata.name: invalid name \"a.-b\": must be a lowercase RFC 1123 "
                         "subdomain (a-z, 0-9, '-' and '.', starting and ending with a letter or "
                         "digit, at most 253 characters)"}},
        InvalidManifest{"name_too_long",
                        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: " +
                            std::string(254, 'a') + "}\n" + kValidSpec,
                        {"metadata.name: invalid name \"" + std::string(100, 'a') +
                         "\"... (254 bytes): must be a lowercase RFC 1123 subdomain (a-z, 0-9, "
                         "'-' and '.', starting and ending with a letter or digit, at most 253 "
                         "characters)"}},
        InvalidManifest{"bad_namespace",
                        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: t, "
                        "namespace: a.b}\n" +
                            kValidSpec,
                        {"metadata.namespace: invalid namespace \"a.b\": must be a lowercase RFC "
                         "1123 label (a-z, 0-9 and '-', at most 63 characters)"}},
        InvalidManifest{"bad_labels",
                        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: t, "
                        "labels: {'bad key!': x, ok: 'bad value!', n: 5}}\n" +
                            kValidSpec,
                        {"metadata.labels: invalid label key \"bad key!\"",
                         "metadata.labels.ok: invalid label value \"bad value!\": at most 63 "
                         "letters, digits, '-', '_' and '.', starting and ending with a letter "
                         "or digit"}},
        InvalidManifest{"missing_spec",
                        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: t}\n",
                        {"spec: required"}},
        InvalidManifest{"spec_not_map",
                        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: "
                        "t}\nspec: [1]\n",
                        {"spec: must be a map, got list"}},
        InvalidManifest{"unknown_top_level",
                        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: "
                        "t}\nextra: 1\n" +
                            kValidSpec,
                        {"extra: unknown field"}},
        InvalidManifest{"last_passed_needs_label",
                        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: "
                        "t}\nspec: {target: {url: 'http://a/'}, load: {duration: 1s}, baseline: "
                        "{lastPassed: true, maxRegression: {p99: 5%}}}\n",
                        {"spec.baseline.lastPassed: needs the label kubeload.dev/test in "
                         "metadata.labels (it names the test)"}}),
    PrintManifestRule);

// ---- experiments: spec.variants and spec.experiment ------------------------------

const std::string kTwoVariants =
    "variants:\n"
    "- {name: a, target: {service: {name: web-a}}}\n"
    "- {name: b, target: {url: 'http://web-b.shop.svc/'}, headers: {X-Canary: always}}\n";

INSTANTIATE_TEST_SUITE_P(
    Experiment, SpecValidation,
    ::testing::Values(
        InvalidSpec{"one_variant",
                    "variants: [{name: a, target: {service: {name: web}}}]\n" + kLoad,
                    {"spec.variants: at least two variants to compare, got 1"}},
        InvalidSpec{"variant_name_twice",
                    "variants:\n- {name: a, target: {service: {name: x}}}\n"
                    "- {name: a, target: {service: {name: y}}}\n" +
                        kLoad,
                    {"spec.variants[1].name: variant \"a\" is named twice"}},
        InvalidSpec{"variant_name_form",
                    "variants:\n- {name: A, target: {service: {name: x}}}\n"
                    "- {name: b, target: {service: {name: y}}}\n" +
                        kLoad,
                    {"spec.variants[0].name: invalid variant name \"A\": must be a lowercase "
                     "RFC 1123 label (a-z, 0-9 and '-')"}},
        InvalidSpec{"variant_without_target",
                    "variants:\n- {name: a}\n- {name: b, target: {service: {name: y}}}\n" + kLoad,
                    {"spec.variants[0].target: required"}},
        InvalidSpec{"variant_url_and_service",
                    "variants:\n- {name: a, target: {url: 'http://x/', service: {name: x}}}\n"
                    "- {name: b, target: {service: {name: y}}}\n" +
                        kLoad,
                    {"spec.variants[0].target: exactly one of url or service is required"}},
        InvalidSpec{"variant_protocol_is_shared",
                    "variants:\n- {name: a, target: {service: {name: x}, protocol: h2c}}\n"
                    "- {name: b, target: {service: {name: y}}}\n" +
                        kLoad,
                    {"spec.variants[0].target.protocol: is the same for every variant: set it "
                     "in spec.target"}},
        InvalidSpec{"target_url_with_variants",
                    "target: {url: 'http://x/'}\n" + kTwoVariants + kLoad,
                    {"spec.target.url: is each variant's own with spec.variants: set it in "
                     "spec.variants[].target"}},
        InvalidSpec{"experiment_without_variants",
                    "target: {url: 'http://x/'}\nexperiment: {rounds: 4}\n" + kLoad,
                    {"spec.experiment: is for spec.variants (the setups it compares)"}},
        InvalidSpec{"one_round",
                    kTwoVariants + "experiment: {rounds: 1}\n" + kLoad,
                    {"spec.experiment.rounds: must be between 2 and 50, got 1"}},
        InvalidSpec{"baseline_with_variants",
                    kTwoVariants + "baseline: {resultName: r, maxRegression: {p99: 5%}}\n" + kLoad,
                    {"spec.baseline: not with spec.variants: an experiment compares its variants "
                     "with each other (spec.experiment.comparisons)"}},
        InvalidSpec{
            "request_threshold_with_variants",
            kTwoVariants + "requests: [{name: home}]\nthresholds: ['home.p99 < 5ms']\n" + kLoad,
            {"spec.thresholds[0]: a threshold on one request is not for spec.variants: "
             "the rounds' request rows keep no histograms to merge, got \"home.p99 < "
             "5ms\""}},
        InvalidSpec{"comparison_unknown_variant",
                    kTwoVariants + "experiment: {comparisons: ['c.p99 <= a.p99']}\n" + kLoad,
                    {"spec.experiment.comparisons[0]: unknown variant \"c\" in \"c.p99 <= "
                     "a.p99\""}},
        InvalidSpec{"comparison_grammar",
                    kTwoVariants + "experiment: {comparisons: ['b.p99 == a.p99']}\n" + kLoad,
                    {"spec.experiment.comparisons[0]: " +
                     std::get<std::string>(parse_comparison("b.p99 == a.p99"))}},
        InvalidSpec{"https_rules_hold_per_variant",
                    "target: {protocol: http2}\n" + kTwoVariants + kLoad,
                    {"spec.target.protocol: http2 needs an https target (ALPN h2); use h2c for "
                     "cleartext HTTP/2",
                     "spec.target.protocol: http2 needs an https target (ALPN h2); use h2c for "
                     "cleartext HTTP/2"}}),
    PrintRule);

TEST(SpecParse, ReadsAnExperiment) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(
      kTwoVariants + "experiment: {rounds: 8, comparisons: ['b.p99 <= a.p99 * 1.05']}\n" + kLoad));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  const LoadTestSpec& spec = parsed.spec;
  ASSERT_EQ(spec.variants.size(), 2u);
  EXPECT_EQ(spec.variants[0].name, "a");
  EXPECT_EQ(spec.variants[0].service->name, "web-a");
  EXPECT_EQ(spec.variants[0].service->port, 80);
  EXPECT_EQ(spec.variants[1].url, "http://web-b.shop.svc/");
  EXPECT_EQ(spec.variants[1].headers,
            (std::vector<std::pair<std::string, std::string>>{{"X-Canary", "always"}}));
  EXPECT_EQ(spec.experiment.rounds, 8u);
  EXPECT_EQ(spec.experiment.comparisons, std::vector<std::string>{"b.p99 <= a.p99 * 1.05"});
  EXPECT_FALSE(spec.url);
  EXPECT_FALSE(spec.service);
}

TEST(SpecParse, AnExperimentRunsSixRoundsByDefault) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(kTwoVariants + kLoad));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  EXPECT_EQ(parsed.spec.experiment.rounds, 6u);
}

// ---- capacity search: spec.search --------------------------------------------------

const std::string kSearchTarget =
    "target: {service: {name: nginx-slow}}\nthresholds: ['p99 < 100ms']\n";

INSTANTIATE_TEST_SUITE_P(
    Search, SpecValidation,
    ::testing::Values(
        InvalidSpec{"search_neither_rate_nor_connections",
                    kSearchTarget + "search: {}\n" + kLoad,
                    {"spec.search: exactly one of rate (open model) or connections (closed "
                     "model)"}},
        InvalidSpec{
            "search_rate_and_connections",
            kSearchTarget + "search: {rate: {start: 10}, connections: {start: 2}}\n" + kLoad,
            {"spec.search: exactly one of rate (open model) or connections (closed "
             "model)"}},
        InvalidSpec{"search_without_start",
                    kSearchTarget + "search: {rate: {factor: 2}}\n" + kLoad,
                    {"spec.search.rate.start: required (the first step's rate)"}},
        InvalidSpec{"search_max_below_start",
                    kSearchTarget + "search: {rate: {start: 50, max: 10}}\n" + kLoad,
                    {"spec.search.rate.max: must be >= start (50), got 10"}},
        InvalidSpec{"search_factor_one",
                    kSearchTarget + "search: {rate: {start: 50, factor: 1}}\n" + kLoad,
                    {"spec.search.rate.factor: must be above 1 and at most 10, got 1"}},
        InvalidSpec{"search_precision_percent",
                    kSearchTarget + "search: {rate: {start: 50, precision: 150%}}\n" + kLoad,
                    {"spec.search.rate.precision: must be a percent in (0%, 100%) like \"10%\", "
                     "or a number, got \"150%\""}},
        InvalidSpec{"search_connections_whole",
                    kSearchTarget + "search: {connections: {start: 2.5}}\n" + kLoad,
                    {"spec.search.connections.start: must be an integer, got 2.5"}},
        InvalidSpec{"search_connections_per_worker",
                    kSearchTarget + "workers: 4\nsearch: {connections: {start: 2}}\n" + kLoad,
                    {"spec.search.connections.start: must be >= spec.workers (4), got 2: each "
                     "worker needs at least one connection"}},
        InvalidSpec{"search_needs_thresholds",
                    "target: {service: {name: nginx-slow}}\nsearch: {rate: {start: 10}}\n" + kLoad,
                    {"spec.thresholds: required with spec.search: they decide whether a step "
                     "passes (e.g. \"p99 < 100ms\")"}},
        InvalidSpec{"search_sets_the_rate",
                    kSearchTarget + "search: {rate: {start: 10}}\nload: {duration: 5s, rate: 10}\n",
                    {"spec.load.rate: not with spec.search: each step sets its own rate and lasts "
                     "spec.load.duration"}},
        InvalidSpec{"search_without_stages",
                    kSearchTarget +
                        "search: {rate: {start: 10}}\nload: {stages: [{duration: 5s, rate: 1}]}\n",
                    {"spec.load.stages: not with spec.search: each step sets its own rate and "
                     "lasts spec.load.duration",
                     "spec.load.duration: required with spec.search (each step's length)"}},
        InvalidSpec{"search_with_baseline",
                    kSearchTarget +
                        "search: {rate: {start: 10}}\nbaseline: {resultName: r, maxRegression: "
                        "{p99: 5%}}\n" +
                        kLoad,
                    {"spec.baseline: not with spec.search: each step is judged by "
                     "spec.thresholds"}},
        InvalidSpec{
            "search_with_variants",
            kTwoVariants + "thresholds: ['p99 < 100ms']\nsearch: {rate: {start: 10}}\n" + kLoad,
            {"spec.search: not with spec.variants: a search runs one target"}}),
    PrintRule);

TEST(SpecParse, ReadsACapacitySearch) {
  const ParsedLoadTest parsed = parse_loadtest(
      with_spec(kSearchTarget +
                "search: {rate: {start: 25, max: 400, factor: 1.5, precision: 5}}\n" + kLoad));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  const SearchSpec& search = *parsed.spec.search;
  EXPECT_EQ(search.over, SearchOver::rate);
  EXPECT_EQ(search.start, 25);
  EXPECT_EQ(search.max, 400);
  EXPECT_EQ(search.factor, 1.5);
  EXPECT_EQ(search.precision, 5);
  EXPECT_FALSE(search.precision_percent);
}

TEST(SpecParse, ACapacitySearchDoublesToTenPercentByDefault) {
  for (const char* precision : {"", ", precision: 10%", ", precision: '10%'"}) {
    const ParsedLoadTest parsed = parse_loadtest(
        with_spec(kSearchTarget + "search: {connections: {start: 4" + precision + "}}\n" + kLoad));
    ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
    const SearchSpec& search = *parsed.spec.search;
    EXPECT_EQ(search.over, SearchOver::connections);
    EXPECT_EQ(search.start, 4);
    EXPECT_FALSE(search.max);
    EXPECT_EQ(search.factor, 2);
    EXPECT_EQ(search.precision, 10);
    EXPECT_TRUE(search.precision_percent);
  }
}

TEST(SpecValidation, ReportsEveryProblemAtOnce) {
  const ParsedLoadTest parsed = parse_loadtest(R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: Bad_Name}
spec:
  target: {url: 'ftp://x/'}
  requests:
  - {name: a, method: get}
  - {name: a, path: nope, weight: 0}
  load: {rate: -5, duration: 10x, warmup: 1s, warmupRequests: 5}
  workers: 0
  thresholds: ['p99 < 1s', 'rps > 1', 'p98 < 10ms']
  cleanup: {policy: Sometimes}
)");
  EXPECT_EQ(messages(parsed),
            (std::vector<std::string>{
                "metadata.name: invalid name \"Bad_Name\": must be a lowercase RFC 1123 subdomain "
                "(a-z, 0-9, '-' and '.', starting and ending with a letter or digit, at most 253 "
                "characters)",
                "spec.target.url: must be an http:// or https:// URL with a host, got \"ftp://x/\"",
                "spec.requests[0].method: invalid method \"get\": must be an upper-case HTTP token "
                "such as GET or POST",
                "spec.requests[1].path: must start with '/', got \"nope\"",
                "spec.requests[1].weight: must be between 1 and 1000000, got 0",
                "spec.load.rate: must be > 0, got -5",
                "spec.load.duration: invalid duration \"10x\"",
                "spec.workers: must be between 1 and 1000, got 0",
                "spec.thresholds[2]: unknown metric \"p98\" in \"p98 < 10ms\"",
                "spec.cleanup.policy: must be one of Always, OnSuccess, Never, got \"Sometimes\"",
                "spec.requests[1].name: duplicate name \"a\"",
                "spec.load: warmup and warmupRequests are mutually exclusive",
            }));
  ASSERT_FALSE(parsed.errors.empty());
  EXPECT_EQ(parsed.errors.front().path, "metadata.name");
}

TEST(SpecValidation, CredentialsInTheUrlNeverReachTheMessage) {
  const ParsedLoadTest parsed =
      parse_loadtest(with_spec("target: {url: 'https://admin:hunter2@a/'}\n" + kLoad));
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].message.find("hunter2"), std::string::npos);
}

TEST(SpecValidation, AcceptsUrlForms) {
  for (const char* url :
       {"http://127.0.0.1:8080/", "HTTPS://Example.COM", "http://a", "http://[::1]:8080/x?y=1#z",
        "http://svc.ns.svc.cluster.local:80/p", "https://a:443?q"}) {
    const ParsedLoadTest parsed =
        parse_loadtest(with_spec(std::string("target: {url: '") + url + "'}\n" + kLoad));
    EXPECT_TRUE(parsed.ok()) << url << ": " << ::testing::PrintToString(messages(parsed));
  }
}

TEST(SpecValidation, AcceptsMethodsThatAreTokens) {
  for (const char* method :
       {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "PROPFIND", "M-SEARCH"}) {
    const ParsedLoadTest parsed = parse_loadtest(
        with_spec(kTarget + kLoad + "requests: [{name: a, method: '" + method + "'}]"));
    EXPECT_TRUE(parsed.ok()) << method << ": " << ::testing::PrintToString(messages(parsed));
  }
}

// ---- hostile input: an error, never an exception, never unbounded work -----------

// Messages go to terminals, logs and the LoadTest's status (JSON).
void expect_printable(const std::string& message) {
  for (char c : message) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << message;
  }
  EXPECT_NO_THROW(static_cast<void>(nlohmann::json(message).dump())) << message;
}

void expect_single_document_error(const ParsedLoadTest& parsed, const std::string& message) {
  ASSERT_EQ(parsed.errors.size(), 1u) << ::testing::PrintToString(messages(parsed));
  EXPECT_EQ(parsed.errors[0].path, "");
  EXPECT_EQ(parsed.errors[0].message, message);
}

TEST(SpecHostileInput, EmptyAndNonMapDocuments) {
  expect_single_document_error(parse_loadtest(""), "empty document, expected a LoadTest manifest");
  expect_single_document_error(parse_loadtest("   \n# only a comment\n"),
                               "empty document, expected a LoadTest manifest");
  expect_single_document_error(parse_loadtest("---\n...\n"),
                               "empty document, expected a LoadTest manifest");
  expect_single_document_error(parse_loadtest("- a\n- b\n"),
                               "expected a LoadTest manifest (a map), got list");
  expect_single_document_error(parse_loadtest("[]"),
                               "expected a LoadTest manifest (a map), got list");
  expect_single_document_error(parse_loadtest("just text"),
                               "expected a LoadTest manifest (a map), got \"just text\"");
  expect_single_document_error(parse_loadtest(YAML::Node()),
                               "empty document, expected a LoadTest manifest");
}

TEST(SpecHostileInput, SyntaxErrorsCarryLineAndColumn) {
  const ParsedLoadTest parsed = parse_loadtest("apiVersion: x\nkind: [LoadTest\nspec: {}\n");
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].path, "");
  EXPECT_TRUE(parsed.errors[0].message.starts_with("line ")) << parsed.errors[0].message;
  EXPECT_NE(parsed.errors[0].message.find(", column "), std::string::npos);

  const ParsedLoadTest tabs = parse_loadtest("a: 1\n  b: 2\n");
  ASSERT_EQ(tabs.errors.size(), 1u);
  EXPECT_TRUE(tabs.errors[0].message.starts_with("line 2, column ")) << tabs.errors[0].message;

  const ParsedLoadTest json = parse_loadtest(R"({"apiVersion": "kubeload.dev/v1alpha1",)");
  ASSERT_EQ(json.errors.size(), 1u);
  EXPECT_TRUE(json.errors[0].message.starts_with("line 1, column ")) << json.errors[0].message;
}

TEST(SpecHostileInput, MoreThanOneDocumentIsRefused) {
  const std::string one = with_spec(kTarget + kLoad);
  expect_single_document_error(parse_loadtest(one + "---\n" + one),
                               "expected one LoadTest document, found 2");
  // A trailing separator is not a second document.
  EXPECT_TRUE(parse_loadtest("---\n" + one + "---\n").ok());
}

TEST(SpecHostileInput, AliasBombIsRefusedWithoutExpanding) {
  // Nine levels of nine aliases: 9^9 (387 million) strings once expanded.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level <= 9; ++level) {
    const std::string previous = "*a" + std::to_string(level - 1);
    bomb += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) bomb += (i ? ", " : "") + previous;
    bomb += "]\n";
  }
  const std::string manifest = with_spec(kTarget + kLoad + "workerTemplate:\n  affinity:\n" + [&] {
    std::string indented;
    std::istringstream lines(bomb);
    for (std::string l; std::getline(lines, l);) indented += "    " + l + "\n";
    return indented;
  }());
  const auto start = std::chrono::steady_clock::now();
  const ParsedLoadTest parsed = parse_loadtest(manifest);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  expect_single_document_error(parsed,
                               "document too large: more than 50000 nodes with aliases expanded");
}

TEST(SpecHostileInput, SelfReferenceIsRefused) {
  // yaml-cpp registers an anchor before its node is complete, so this is a
  // cycle, not an error.
  const ParsedLoadTest parsed =
      parse_loadtest(with_spec(kTarget + kLoad + "workerTemplate: {tolerations: &loop [*loop]}"));
  EXPECT_FALSE(parsed.ok());
}

TEST(SpecHostileInput, BuiltDocumentWithSharedNodesIsBounded) {
  YAML::Node leaf;
  for (int i = 0; i < 1000; ++i) leaf.push_back("x");
  YAML::Node wide;
  for (int i = 0; i < 1000; ++i) wide.push_back(leaf);  // shares `leaf` 1000 times
  YAML::Node manifest = YAML::Load(with_spec(kTarget + kLoad));
  manifest["spec"]["workerTemplate"]["tolerations"] = wide;
  expect_single_document_error(parse_loadtest(manifest),
                               "document too large: more than 50000 nodes with aliases expanded");
}

TEST(SpecHostileInput, DeepNestingIsAnErrorNotACrash) {
  const std::string flow = std::string(100000, '[') + std::string(100000, ']');
  const ParsedLoadTest parsed = parse_loadtest(flow);
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].path, "");
  EXPECT_TRUE(parsed.errors[0].message.ends_with(": nested too deeply"))
      << parsed.errors[0].message;

  std::string block;
  for (int depth = 0; depth < 5000; ++depth) block += std::string(depth, ' ') + "a:\n";
  EXPECT_FALSE(parse_loadtest(block).ok());

  // Within yaml-cpp's depth limit, but deep: still just a wrong field.
  const std::string nested =
      with_spec(kTarget + kLoad + "workerTemplate: {affinity: " + std::string(200, '[') +
                std::string(200, ']') + "}");
  const ParsedLoadTest deep = parse_loadtest(nested);
  EXPECT_EQ(messages(deep),
            (std::vector<std::string>{"spec.workerTemplate.affinity: must be a map, got list"}));
}

TEST(SpecHostileInput, OversizedInputIsRefusedBeforeParsing) {
  std::mt19937 random(7);  // fixed seed: a failure must reproduce
  std::string garbage(10 * 1024 * 1024, '\0');
  for (char& c : garbage) c = static_cast<char>(random());
  const auto start = std::chrono::steady_clock::now();
  const ParsedLoadTest parsed = parse_loadtest(garbage);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  expect_single_document_error(
      parsed, "manifest too large: 10485760 bytes, at most " + std::to_string(kMaxManifestBytes));
}

TEST(SpecHostileInput, ManyNodesAreRefusedBeforeTheDocumentIsBuilt) {
  // ~1.5 million tiny nodes within the byte limit: building them would take
  // seconds and most of a gigabyte in yaml-cpp.
  std::string list = "[";
  for (int i = 0; i < 1400000; ++i) list += "1,";
  list += "1]";
  const auto start = std::chrono::steady_clock::now();
  const ParsedLoadTest parsed = parse_loadtest(with_spec(kTarget + kLoad + "workers: " + list));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  expect_single_document_error(parsed, "document too large: more than 50000 nodes");
}

TEST(SpecHostileInput, RandomBytesNeverThrow) {
  std::mt19937 random(11);  // fixed seed: a failure must reproduce
  const std::string valid = with_spec(kTarget + kLoad);
  for (int round = 0; round < 300; ++round) {
    std::string text;
    if (round % 3 == 0) {
      text.resize(1 + random() % 4096);
      for (char& c : text) c = static_cast<char>(random());
    } else {
      // Damage a valid manifest: structure is mostly there, details are not.
      text = valid;
      for (int flips = 0; flips < 1 + round % 8; ++flips) {
        text[random() % text.size()] = "{}[]:,-&*!|>'\"%@`#\n \t\x01\xff"[random() % 24];
      }
    }
    ParsedLoadTest parsed;
    EXPECT_NO_THROW(parsed = parse_loadtest(text)) << round;
    for (const FieldError& error : parsed.errors) {
      EXPECT_FALSE(error.message.empty());
      expect_printable(error.to_string());
    }
  }
}

TEST(SpecHostileInput, MessagesStayPrintableAndShort) {
  // Text that is not UTF-8 is refused where it breaks.
  expect_single_document_error(parse_loadtest("a: 1\nb: \"\xc3\xa4\\\xff\"\n"),
                               "line 2, column 7: not valid UTF-8 (byte \\xFF)");
  expect_single_document_error(parse_loadtest("\xc0\xaf: 1"),
                               "line 1, column 1: not valid UTF-8 (byte \\xC0)");
  expect_single_document_error(parse_loadtest("a: \xed\xa0\x80"),  // a UTF-16 surrogate
                               "line 1, column 4: not valid UTF-8 (byte \\xED)");

  // Control characters and broken UTF-8 in values and field names.
  ParsedLoadTest parsed =
      parse_loadtest(with_spec(kTarget + kLoad +
                               "requests: [{name: \"a\\x01b\", path: \"x\\x1b[31m\"}]\n"
                               "\"bad\\tkey\": 1\ngr\xc3\xb6\xc3\x9f"
                               "e: 1\n"));
  EXPECT_EQ(messages(parsed), (std::vector<std::string>{
                                  "spec.requests[0].name: invalid name \"a\\x01b\": must match "
                                  "[a-z0-9]([-a-z0-9_]*[a-z0-9])? (names become metric labels)",
                                  "spec.requests[0].path: must start with '/', got \"x\\x1B[31m\"",
                                  "spec.bad\\x09key: unknown field",
                                  "spec.gr\xc3\xb6\xc3\x9f"
                                  "e: unknown field",  // valid UTF-8 stays as written
                              }));
  for (const std::string& message : messages(parsed)) expect_printable(message);

  // A document built in code can hold any bytes.
  YAML::Node built = YAML::Load(with_spec(kTarget + kLoad));
  built["spec"]["\xc0\xaf"] = 1;
  EXPECT_EQ(messages(parse_loadtest(built)),
            (std::vector<std::string>{"spec.\\xC0\\xAF: unknown field"}));

  // A huge field name or value does not make a huge message. (An implicit
  // key is limited to 1024 characters by YAML; an explicit "? key" is not.)
  parsed = parse_loadtest(with_spec(kTarget + kLoad + "? " + std::string(5000, 'k') +
                                    "\n: 1\nrequests: [{name: a, path: " + std::string(5000, 'p') +
                                    "}]"));
  ASSERT_EQ(parsed.errors.size(), 2u);
  EXPECT_EQ(parsed.errors[0].path, "spec." + std::string(295, 'k') + "...");
  EXPECT_EQ(parsed.errors[0].message, "unknown field");
  EXPECT_EQ(parsed.errors[1].path, "spec.requests[0].path");
  EXPECT_EQ(parsed.errors[1].message,
            "must start with '/', got \"" + std::string(100, 'p') + "\"... (5000 bytes)");
}

}  // namespace
}  // namespace kubeload

namespace kubeload {
namespace {

// ---- spec.target.tls (issue 8, defect 9) ----------------------------------------

TEST(SpecTls, VerifiesByDefaultAndReadsInsecureSkipVerifyAndCaFrom) {
  const auto defaults =
      parse_loadtest(with_spec("target: {url: 'https://web.test/'}\nload: {duration: 10s}\n"));
  ASSERT_TRUE(defaults.ok()) << ::testing::PrintToString(messages(defaults));
  EXPECT_FALSE(defaults.spec.tls.insecure_skip_verify);
  EXPECT_FALSE(defaults.spec.tls.ca_from.has_value());

  const auto insecure = parse_loadtest(with_spec(
      "target: {url: 'https://web.test/', tls: {insecureSkipVerify: true}}\nload: {duration: "
      "10s}\n"));
  ASSERT_TRUE(insecure.ok()) << ::testing::PrintToString(messages(insecure));
  EXPECT_TRUE(insecure.spec.tls.insecure_skip_verify);

  const auto secret = parse_loadtest(
      with_spec("target:\n  service: {name: web, scheme: https}\n  tls:\n    caFrom:\n"
                "      secretKeyRef: {name: web-ca, key: ca.crt}\nload: {duration: 10s}\n"));
  ASSERT_TRUE(secret.ok()) << ::testing::PrintToString(messages(secret));
  ASSERT_TRUE(secret.spec.tls.ca_from.has_value());
  EXPECT_EQ(secret.spec.tls.ca_from->kind, ObjectKeyRef::Kind::secret);
  EXPECT_EQ(secret.spec.tls.ca_from->name, "web-ca");
  EXPECT_EQ(secret.spec.tls.ca_from->key, "ca.crt");

  const auto config_map = parse_loadtest(
      with_spec("target:\n  url: 'https://web.test/'\n  tls:\n    caFrom:\n"
                "      configMapKeyRef: {name: trust, key: bundle.pem}\nload: {duration: 10s}\n"));
  ASSERT_TRUE(config_map.ok()) << ::testing::PrintToString(messages(config_map));
  EXPECT_EQ(config_map.spec.tls.ca_from->kind, ObjectKeyRef::Kind::config_map);
  EXPECT_EQ(config_map.spec.tls.ca_from->name, "trust");
}

TEST(SpecTls, ReportsEachProblemWithItsPath) {
  struct Row {
    std::string target;
    std::string error;
  };
  const std::vector<Row> rows = {
      {"{url: 'http://web.test/', tls: {insecureSkipVerify: true}}",
       "spec.target.tls: only for https targets (an https:// url or service scheme https)"},
      {"{url: 'https://web.test/', tls: {insecureSkipVerify: 'yes please'}}",
       "spec.target.tls.insecureSkipVerify: must be true or false, got string \"yes please\""},
      {"{url: 'https://web.test/', tls: {verify: false}}", "spec.target.tls.verify: unknown field"},
      {"{url: 'https://web.test/', tls: {caFrom: {}}}",
       "spec.target.tls.caFrom: exactly one of secretKeyRef or configMapKeyRef is required"},
      {"{url: 'https://web.test/', tls: {caFrom: {secretKeyRef: {name: a, key: b}, "
       "configMapKeyRef: {name: a, key: b}}}}",
       "spec.target.tls.caFrom: exactly one of secretKeyRef or configMapKeyRef is required"},
      {"{url: 'https://web.test/', tls: {caFrom: {secretKeyRef: {name: a}}}}",
       "spec.target.tls.caFrom.secretKeyRef.key: required"},
      {"{url: 'https://web.test/', tls: {caFrom: {configMapKeyRef: {name: Bad_Name, key: b}}}}",
       "spec.target.tls.caFrom.configMapKeyRef.name: invalid name \"Bad_Name\""},
      {"{url: 'https://web.test/', tls: {insecureSkipVerify: true, caFrom: {secretKeyRef: "
       "{name: a, key: b}}}}",
       "spec.target.tls: insecureSkipVerify and caFrom exclude each other: a CA is used to "
       "verify"},
  };
  for (const Row& row : rows) {
    const auto parsed =
        parse_loadtest(with_spec("target: " + row.target + "\nload: {duration: 10s}\n"));
    EXPECT_EQ(messages(parsed), std::vector<std::string>{row.error}) << row.target;
  }
}

TEST(Spec, SecretHeadersGoOverVerifiedHttpsOrWithAnExplicitOptIn) {
  const std::string requests =
      "requests: [{name: a, headersFrom: [{name: X-Key, secretKeyRef: {name: s, key: k}}]}]\n";
  for (const std::string target : {
           "target: {url: 'https://127.0.0.1:8443/'}\n",
           "target: {service: {name: api, port: 443, scheme: https}}\n",
           "target: {url: 'http://127.0.0.1:8080/', allowInsecureSecretHeaders: true}\n",
           "target: {url: 'https://127.0.0.1:8443/', tls: {insecureSkipVerify: true}, "
           "allowInsecureSecretHeaders: true}\n",
       }) {
    SCOPED_TRACE(target);
    const ParsedLoadTest parsed = parse_loadtest(with_spec(target + kLoad + requests));
    EXPECT_TRUE(parsed.ok()) << parsed.errors.front().to_string();
  }
  // A Service target is plain http unless its scheme says https.
  const ParsedLoadTest service =
      parse_loadtest(with_spec("target: {service: {name: api}}\n" + kLoad + requests));
  ASSERT_FALSE(service.ok());
  EXPECT_EQ(service.errors.front().path, "spec.requests[0].headersFrom");
}

}  // namespace
}  // namespace kubeload

// ---- spec.target.podSelector --------------------------------------------------------

namespace kubeload {
namespace {

TEST(SpecPodSelector, ReadsLabelsAndExpressionsInTheApiSyntax) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(R"(target:
  url: http://127.0.0.1:8080/
  podSelector:
    matchLabels: {app: nginx, app.kubernetes.io/part-of: shop}
    matchExpressions:
    - {key: tier, operator: In, values: [api, web]}
    - {key: track, operator: NotIn, values: [canary]}
    - {key: ready, operator: Exists}
    - {key: draining, operator: DoesNotExist}
load: {duration: 1s})"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  ASSERT_TRUE(parsed.spec.pod_selector);
  EXPECT_EQ(to_string(*parsed.spec.pod_selector),
            "app=nginx,app.kubernetes.io/part-of=shop,tier in (api,web),track notin (canary),"
            "ready,!draining");
}

TEST(SpecPodSelector, RefusesWhatWouldSelectEverythingOrIsMalformed) {
  struct Case {
    std::string selector;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"{}", "spec.target.podSelector: selects every pod of the namespace"},
      {"{matchLabels: {}}", "spec.target.podSelector: selects every pod of the namespace"},
      {"{matchLabels: {'bad key!': x}}", "invalid label key \"bad key!\""},
      {"{matchLabels: {app: 'no spaces'}}",
       "spec.target.podSelector.matchLabels.app: invalid label value \"no spaces\""},
      {"{matchExpressions: [{key: app, operator: Like, values: [x]}]}",
       "spec.target.podSelector.matchExpressions[0].operator: must be one of In, NotIn, Exists, "
       "DoesNotExist, got \"Like\""},
      {"{matchExpressions: [{key: app, operator: In}]}",
       "spec.target.podSelector.matchExpressions[0].values: required for In"},
      {"{matchExpressions: [{key: app, operator: Exists, values: [x]}]}",
       "spec.target.podSelector.matchExpressions[0].values: must be empty for Exists"},
      {"{matchExpressions: [{operator: Exists}]}",
       "spec.target.podSelector.matchExpressions[0].key: required"},
      {"{matchLabel: {app: x}}", "spec.target.podSelector.matchLabel: unknown field"},
      {"[app]", "spec.target.podSelector: must be a map"},
  };
  for (const Case& c : cases) {
    const ParsedLoadTest parsed = parse_loadtest(
        with_spec("target: {url: 'http://127.0.0.1:8080/', podSelector: " + c.selector +
                  "}\nload: {duration: 1s}"));
    EXPECT_FALSE(parsed.ok()) << c.selector;
    EXPECT_FALSE(parsed.spec.pod_selector) << c.selector;
    const std::vector<std::string> got = messages(parsed);
    EXPECT_TRUE(
        std::any_of(got.begin(), got.end(),
                    [&](const std::string& m) { return m.find(c.error) != std::string::npos; }))
        << c.selector << " gave " << ::testing::PrintToString(got);
  }
}

}  // namespace
}  // namespace kubeload
