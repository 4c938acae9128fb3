// The CRD's structure, checked without an API server: names, printer
// columns, the schema's rules, and that the schema and the spec parser agree
// on every field. Whether the API server enforces it is the e2e tier's job.

#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/loadtest_schedule.hpp"
#include "kubeload/api/meta.hpp"
#include "kubeload/duration.hpp"
#include "kubeload/rfc3339.hpp"
#include "kubeload/spec.hpp"
#include "kubeload/threshold.hpp"
#include "operator/phase.hpp"

#ifndef KUBELOAD_SOURCE_DIR
#error "KUBELOAD_SOURCE_DIR must point at the repository"
#endif

namespace {

using kubeload::parse_duration;
using kubeload::parse_loadtest;
using kubeload::parse_threshold;

const YAML::Node& crd() {
  static const YAML::Node node =
      YAML::LoadFile(std::string(KUBELOAD_SOURCE_DIR) + "/crds/kubeload.dev_loadtests.yaml");
  return node;
}

const YAML::Node version() {
  return crd()["spec"]["versions"][0];
}
const YAML::Node root_schema() {
  return version()["schema"]["openAPIV3Schema"];
}
const YAML::Node spec_schema() {
  return root_schema()["properties"]["spec"];
}
const YAML::Node status_schema() {
  return root_schema()["properties"]["status"];
}

// The schema node at a dotted path of properties; "[]" steps into items.
// Read-only on purpose: assigning one YAML::Node to another overwrites the
// node in the document, so the walk rebinds with reset() and reads through
// const references, which never insert.
const YAML::Node at(const YAML::Node& schema, const std::string& path) {
  YAML::Node node;
  node.reset(schema);
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const YAML::Node& current = node;
    const YAML::Node next = part == "[]" ? current["items"] : current["properties"][part];
    if (!next) {
      ADD_FAILURE() << "no schema at " << path << " (stopped at " << part << ")";
      return YAML::Node();
    }
    node.reset(next);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return node;
}

std::vector<std::string> strings(const YAML::Node& list) {
  std::vector<std::string> out;
  for (const YAML::Node& item : list) out.push_back(item.as<std::string>());
  return out;
}

std::vector<std::string> rule_messages(const YAML::Node& schema) {
  std::vector<std::string> out;
  for (const YAML::Node& rule : schema["x-kubernetes-validations"]) {
    EXPECT_TRUE(rule["rule"].IsScalar());
    out.push_back(rule["message"].as<std::string>());
  }
  return out;
}

bool any_contains(const std::vector<std::string>& texts, const std::string& part) {
  for (const std::string& text : texts) {
    if (text.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(Crd, NamesGroupAndVersion) {
  EXPECT_EQ(crd()["apiVersion"].as<std::string>(), "apiextensions.k8s.io/v1");
  EXPECT_EQ(crd()["kind"].as<std::string>(), "CustomResourceDefinition");
  EXPECT_EQ(crd()["metadata"]["name"].as<std::string>(), "loadtests.kubeload.dev");
  const YAML::Node spec = crd()["spec"];
  EXPECT_EQ(spec["group"].as<std::string>(), "kubeload.dev");
  EXPECT_EQ(spec["scope"].as<std::string>(), "Namespaced");
  EXPECT_EQ(spec["names"]["kind"].as<std::string>(), "LoadTest");
  EXPECT_EQ(spec["names"]["plural"].as<std::string>(), "loadtests");
  EXPECT_EQ(spec["names"]["singular"].as<std::string>(), "loadtest");
  EXPECT_EQ(strings(spec["names"]["shortNames"]), std::vector<std::string>{"lt"});
  EXPECT_EQ(strings(spec["names"]["categories"]), std::vector<std::string>{"kubeload"});
  ASSERT_EQ(spec["versions"].size(), 1u);
  EXPECT_EQ(version()["name"].as<std::string>(), "v1alpha1");
  EXPECT_TRUE(version()["served"].as<bool>());
  EXPECT_TRUE(version()["storage"].as<bool>());
  EXPECT_TRUE(version()["subresources"]["status"].IsMap());
}

TEST(Crd, PrinterColumnsInApiOrder) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"Phase", ".status.phase"},
      {"Verdict", ".status.verdict"},
      {"RPS", ".status.result.rps"},
      {"P99(ms)", ".status.result.latencyMs.p99"},
      {"Errors(%)", ".status.errorPercent"},
      {"Age", ".metadata.creationTimestamp"}};
  std::vector<std::pair<std::string, std::string>> shown;  // the default (priority 0) columns
  for (const YAML::Node& column : version()["additionalPrinterColumns"]) {
    if (column["priority"] && column["priority"].as<int>() != 0) continue;
    shown.emplace_back(column["name"].as<std::string>(), column["jsonPath"].as<std::string>());
  }
  EXPECT_EQ(shown, expected);
  // Every column points at a field the schema declares.
  EXPECT_EQ(at(status_schema(), "errorPercent")["type"].as<std::string>(), "number");
  EXPECT_TRUE(at(status_schema(), "result")["x-kubernetes-preserve-unknown-fields"].as<bool>());
}

// An api.md-style LoadTest that sets every spec field (the open and closed
// model cannot be mixed, so the closed-model fields and open-model stages
// come in two more).
const char* const kEveryFieldOpen = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: checkout, labels: {kubeload.dev/test: checkout}}
spec:
  target: {url: "http://checkout.shop.svc:8080/", allowInsecureSecretHeaders: true}
  requests:
  - name: cart
    method: GET
    path: /api/cart
    headers: {Accept: application/json}
    headersFrom:
    - name: Authorization
      secretKeyRef: {name: api-token, key: header}
    body: '{"sku": 1}'
    weight: 3
    expect: {status: [200, 204], bodyLength: 16599}
  load:
    rate: 5000
    maxConnections: 1000
    duration: 60s
    requests: 100000
    warmup: 10s
    timeout: 5s
    keepAlive: true
    engine: epoll
  workers: 4
  workerTemplate:
    image: ""
    resources: {limits: {cpu: "2"}}
    nodeSelector: {pool: load}
    tolerations: [{key: dedicated, operator: Exists}]
    affinity: {}
  thresholds: ["p99 < 200ms", "errorRate < 1%", "rps >= 4800"]
  baseline:
    loadTestName: checkout-2026-11-28
    maxRegression: {p99: 10%, rps: 5%}
  cleanup: {policy: OnSuccess}
  timeouts: {start: 5m, run: 10m}
  ttlSecondsAfterFinished: 86400
  history: {keep: 20, maxAge: 720h}
)";

const char* const kEveryFieldClosed = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: sweep, labels: {kubeload.dev/test: sweep}}
spec:
  target:
    service: {name: nginx, namespace: web, port: 80, scheme: http}
    podSelector:
      matchLabels: {app: nginx}
      matchExpressions: [{key: tier, operator: In, values: [web]}]
  load:
    warmupRequests: 1000
    stages:
    - {duration: 30s, connections: 10}
  baseline:
    lastPassed: true
    window: 5
    required: true
    maxRegression: {p50: 1%, p90: 1%, p95: 1%, p99: 1%, p999: 1%, mean: 1%, max: 1%, rps: 1%, errorRate: 1%}
)";

const char* const kOpenStages = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: ramp}
spec:
  target: {url: "http://checkout.shop.svc:8080/"}
  load:
    maxConnections: 100
    stages:
    - {duration: 10s, rate: 50}
)";

// spec.target.tls: its fields exclude each other, so one manifest each.
const char* const kTlsSecretCa = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: tls-secret}
spec:
  target:
    url: "https://checkout.shop.svc:8443/"
    protocol: http2
    tls: {insecureSkipVerify: false, caFrom: {secretKeyRef: {name: shop-ca, key: ca.crt}}}
  load: {duration: 10s, maxStreams: 20}
  baseline: {resultName: tls-secret-0a1b2c3d, maxRegression: {p99: 5%}}
)";

const char* const kTlsConfigMapCa = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: tls-configmap}
spec:
  target:
    service: {name: checkout, scheme: https}
    tls: {caFrom: {configMapKeyRef: {name: trust, key: bundle.pem}}}
  load: {duration: 10s, connections: 20}
)";

// An experiment: its variants name the targets (spec.target only shares how).
const char* const kExperiment = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: ab}
spec:
  target: {protocol: http1}
  variants:
  - name: stable
    target:
      service: {name: web-stable, namespace: web, port: 80, scheme: http}
      podSelector:
        matchLabels: {app: web}
        matchExpressions: [{key: track, operator: In, values: [stable]}]
  - name: canary
    target: {url: "http://web-canary.web.svc/"}
    headers: {X-Canary: always}
  experiment:
    rounds: 6
    comparisons: ["canary.p99 <= stable.p99 * 1.05"]
  load: {duration: 10s, connections: 4}
)";

// Capacity searches, over a rate and over connections (exactly one each).
const char* const kSearchRate = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: capacity}
spec:
  target: {service: {name: nginx-slow}}
  load: {duration: 5s}
  thresholds: ["p99 < 100ms"]
  search:
    rate: {start: 25, max: 400, factor: 2, precision: "10%"}
)";
const char* const kSearchConnections = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: capacity}
spec:
  target: {service: {name: nginx-slow}}
  load: {duration: 5s}
  thresholds: ["p99 < 100ms"]
  search:
    connections: {start: 4, max: 64, factor: 2, precision: 2}
)";

// Scenarios (docs/scenarios.md): every field of spec.scenarios and spec.data;
// a step's think time and a source's origin are one of several, so they
// take a step and a source each.
const char* const kScenarios = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: shop}
spec:
  target: {url: "http://shop.shop.svc:8080/"}
  data:
  - {name: user, file: users.csv, format: csv, columns: [name, password], mode: unique, onExhausted: recycle}
  - {name: items, configMapKeyRef: {name: shop-items, key: items.jsonl}, mode: random}
  - {name: cards, secretKeyRef: {name: shop-cards, key: cards.jsonl}}
  scenarios:
  - name: buy
    weight: 3
    cookies: true
    onExtractMiss: endIteration
    onFailure: continue
    pacing: 2s
    steps:
    - name: login
      method: POST
      path: /shop/login
      headers: {Content-Type: application/json}
      body: '{"user":"${user.name}","password":"${user.password}"}'
      expect: {status: [200], bodyLength: 42}
      extract:
      - {name: token, json: /token}
      - {name: sid, cookie: session}
      - {name: trace, header: X-Trace-Id}
      - {name: id, regex: 'id":(\d+)', group: 1}
      checks:
      - {json: /user, equals: alice}
      - {json: /id, matches: '[0-9]+'}
      - {bodyContains: token}
      thinkTime: {constant: 1s}
    - name: cart
      path: /shop/cart/${id}?sku=${items.sku}&card=${cards.number}
      headers: {Authorization: "Bearer ${token}"}
      thinkTime: {uniform: {min: 1s, max: 3s}}
    - name: checkout
      method: POST
      path: /shop/checkout
      thinkTime: {exponential: {mean: 2s}}
  load: {connections: 10, iterations: 1000}
)";

// Every map key of `doc` below spec must be a property of the schema at the
// same place; opaque fields (preserve-unknown) and free-form maps stop the walk.
void expect_in_schema(const YAML::Node& doc, const YAML::Node& schema, const std::string& path,
                      std::set<std::string>& seen) {
  if (schema["x-kubernetes-preserve-unknown-fields"] || schema["additionalProperties"]) return;
  if (doc.IsMap()) {
    for (const auto& entry : doc) {
      const std::string key = entry.first.as<std::string>();
      const std::string child = path + "." + key;
      const YAML::Node property = schema["properties"][key];
      if (!property) {
        ADD_FAILURE() << child << " is accepted by the parser but missing from the CRD";
        continue;
      }
      seen.insert(child);
      expect_in_schema(entry.second, property, child, seen);
    }
  } else if (doc.IsSequence()) {
    for (const YAML::Node& item : doc) expect_in_schema(item, schema["items"], path + "[]", seen);
  }
}

// Every property the schema declares below spec.
void schema_paths(const YAML::Node& schema, const std::string& path, std::set<std::string>& out) {
  if (schema["properties"]) {
    for (const auto& entry : schema["properties"]) {
      const std::string child = path + "." + entry.first.as<std::string>();
      out.insert(child);
      schema_paths(entry.second, child, out);
    }
  }
  if (schema["items"]) schema_paths(schema["items"], path + "[]", out);
}

TEST(Crd, SchemaAndParserAgreeOnEverySpecField) {
  std::set<std::string> covered;
  for (const char* manifest :
       {kEveryFieldOpen, kEveryFieldClosed, kOpenStages, kTlsSecretCa, kTlsConfigMapCa, kExperiment,
        kSearchRate, kSearchConnections, kScenarios}) {
    const kubeload::ParsedLoadTest parsed = parse_loadtest(manifest);
    ASSERT_TRUE(parsed.ok()) << parsed.errors.front().to_string();
    expect_in_schema(YAML::Load(manifest)["spec"], spec_schema(), "spec", covered);
  }
  std::set<std::string> declared;
  schema_paths(spec_schema(), "spec", declared);
  for (const std::string& path : declared) {
    // Opaque Kubernetes types: their inner fields are the pod's business.
    if (path.starts_with("spec.workerTemplate.resources.") ||
        path.starts_with("spec.workerTemplate.tolerations[].")) {
      continue;
    }
    EXPECT_TRUE(covered.contains(path)) << path << " is in the CRD but in no test manifest";
  }
  // api.md's top-level spec fields, by name.
  for (const char* field : {"target", "requests", "load", "workers", "workerTemplate", "thresholds",
                            "baseline", "cleanup", "timeouts"}) {
    EXPECT_TRUE(declared.contains(std::string("spec.") + field)) << field;
  }
  // spec.target: required unless spec.variants (a rule of the spec's, CEL).
  EXPECT_EQ(strings(spec_schema()["required"]), (std::vector<std::string>{"load"}));
}

// Unbounded fields: every string, list and map of the spec carries a bound, so
// the API server refuses an oversized LoadTest (and CEL's cost estimate stays
// finite). Subtrees passed through to the pod as Kubernetes types (resources,
// affinity: x-kubernetes-preserve-unknown-fields) are bounded only by the
// object size limit, as in Pods.
void unbounded_fields(const YAML::Node& schema, const std::string& path,
                      std::vector<std::string>& out) {
  if (schema["x-kubernetes-preserve-unknown-fields"]) return;
  const std::string type = schema["type"] ? schema["type"].as<std::string>() : "";
  if (type == "string" && !schema["maxLength"] && !schema["enum"]) out.push_back(path);
  if (type == "array" && !schema["maxItems"]) out.push_back(path);
  if (type == "object" && schema["additionalProperties"] && !schema["maxProperties"]) {
    out.push_back(path);
  }
  if (schema["properties"]) {
    for (const auto& entry : schema["properties"]) {
      unbounded_fields(entry.second, path + "." + entry.first.as<std::string>(), out);
    }
  }
  if (schema["items"]) unbounded_fields(schema["items"], path + "[]", out);
  if (schema["additionalProperties"] && schema["additionalProperties"].IsMap()) {
    unbounded_fields(schema["additionalProperties"], path + ".*", out);
  }
}

TEST(Crd, EveryStringListAndMapOfTheSpecIsBounded) {
  std::vector<std::string> unbounded;
  unbounded_fields(spec_schema(), "spec", unbounded);
  EXPECT_EQ(unbounded, std::vector<std::string>{});
}

TEST(Crd, BoundsAgreeWithTheParser) {
  const YAML::Node spec = spec_schema();
  const auto max_items = [&](const char* path) { return at(spec, path)["maxItems"].as<size_t>(); };
  EXPECT_EQ(max_items("requests"), kubeload::kMaxRequests);
  EXPECT_EQ(max_items("load.stages"), kubeload::kMaxStages);
  EXPECT_EQ(max_items("thresholds"), kubeload::kMaxThresholds);
  EXPECT_EQ(max_items("target.podSelector.matchExpressions"), kubeload::kMaxSelectorTerms);
  EXPECT_EQ(max_items("target.podSelector.matchExpressions.[].values"),
            kubeload::kMaxSelectorTerms);
  EXPECT_EQ(at(spec, "target.podSelector.matchLabels")["maxProperties"].as<size_t>(),
            kubeload::kMaxSelectorTerms);
  EXPECT_EQ(max_items("requests.[].headersFrom"), kubeload::kMaxHeadersFrom);
  EXPECT_EQ(max_items("requests.[].expect.status"), kubeload::kMaxExpectedStatuses);
  EXPECT_EQ(at(spec, "requests.[].headers")["maxProperties"].as<size_t>(), kubeload::kMaxHeaders);
  EXPECT_EQ(at(spec, "requests.[].headers")["additionalProperties"]["maxLength"].as<size_t>(),
            kubeload::kMaxHeaderValueBytes);
  EXPECT_EQ(at(spec, "requests.[].body")["maxLength"].as<size_t>(), kubeload::kMaxBodyBytes);
  EXPECT_EQ(at(spec, "workerTemplate.image")["maxLength"].as<size_t>(), kubeload::kMaxImageBytes);
  EXPECT_EQ(max_items("scenarios"), kubeload::kMaxScenarios);
  EXPECT_EQ(max_items("scenarios.[].steps"), kubeload::kMaxSteps);
  EXPECT_EQ(max_items("scenarios.[].steps.[].extract"), kubeload::kMaxExtractions);
  EXPECT_EQ(max_items("scenarios.[].steps.[].checks"), kubeload::kMaxChecks);
  EXPECT_EQ(max_items("data"), kubeload::kMaxDataSources);
  EXPECT_EQ(max_items("data.[].columns"), kubeload::kMaxDataColumns);
  EXPECT_EQ(at(spec, "data.[].file")["maxLength"].as<size_t>(), kubeload::kMaxDataFileBytes);
  EXPECT_EQ(at(spec, "scenarios.[].weight")["maximum"].as<uint64_t>(), kubeload::kMaxWeight);
  EXPECT_EQ(at(spec, "scenarios.[].steps.[].path")["maxLength"].as<size_t>(),
            kubeload::kMaxTargetPathBytes);
  EXPECT_EQ(at(spec, "scenarios.[].steps.[].body")["maxLength"].as<size_t>(),
            kubeload::kMaxBodyBytes);
  EXPECT_EQ(at(spec, "scenarios.[].steps.[].headers")["maxProperties"].as<size_t>(),
            kubeload::kMaxHeaders);
  for (const char* field : {"json", "header", "cookie", "regex"}) {
    EXPECT_EQ(at(spec, std::string("scenarios.[].steps.[].extract.[].") + field)["maxLength"]
                  .as<size_t>(),
              kubeload::kMaxExpressionBytes)
        << field;
  }
  EXPECT_EQ(at(spec, "scenarios.[].steps.[].checks.[].json")["maxLength"].as<size_t>(),
            kubeload::kMaxExpressionBytes);
  for (const char* field : {"equals", "matches", "bodyContains"}) {
    EXPECT_EQ(
        at(spec, std::string("scenarios.[].steps.[].checks.[].") + field)["maxLength"].as<size_t>(),
        kubeload::kMaxCheckTextBytes)
        << field;
  }

  // One past each bound is refused by the parser too, naming the field.
  const auto refused = [](const std::string& spec_body, const std::string& expected) {
    const auto parsed = parse_loadtest(
        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: t}\nspec:\n" +
        spec_body);
    for (const auto& error : parsed.errors) {
      if (error.to_string() == expected) return true;
    }
    ADD_FAILURE() << "no error \"" << expected << "\"";
    return false;
  };
  std::string stages;
  for (size_t i = 0; i <= kubeload::kMaxStages; ++i) stages += "{duration: 1s, connections: 1},";
  refused("  target: {url: 'http://127.0.0.1/'}\n  load: {stages: [" + stages + "]}\n",
          "spec.load.stages: at most 100 items, got 101");
  refused(
      "  target: {url: 'http://127.0.0.1/'}\n  load: {duration: 1s}\n  requests: [{name: a, "
      "body: '" +
          std::string(kubeload::kMaxBodyBytes + 1, 'x') + "'}]\n",
      "spec.requests[0].body: at most 262144 bytes, got 262145");
  refused(
      "  target: {url: 'http://127.0.0.1/'}\n  load: {duration: 1s}\n  requests: [{name: a, "
      "headers: {X-A: '" +
          std::string(kubeload::kMaxHeaderValueBytes + 1, 'v') + "'}}]\n",
      "spec.requests[0].headers.X-A: at most 8192 bytes, got 8193");
  std::string headers;
  for (size_t i = 0; i <= kubeload::kMaxHeaders; ++i) headers += "X-" + std::to_string(i) + ": v,";
  refused(
      "  target: {url: 'http://127.0.0.1/'}\n  load: {duration: 1s}\n  requests: [{name: a, "
      "headers: {" +
          headers + "}}]\n",
      "spec.requests[0].headers: at most 100 headers, got 101");
}

TEST(Crd, RangesEnumsAndDefaults) {
  const YAML::Node spec = spec_schema();
  EXPECT_EQ(at(spec, "workers")["minimum"].as<int>(), 1);
  EXPECT_EQ(at(spec, "workers")["maximum"].as<int>(), 1000);
  EXPECT_EQ(at(spec, "workers")["default"].as<int>(), 1);
  EXPECT_EQ(at(spec, "load.connections")["minimum"].as<int>(), 1);
  EXPECT_EQ(at(spec, "load.rate")["minimum"].as<int>(), 0);
  EXPECT_TRUE(at(spec, "load.rate")["exclusiveMinimum"].as<bool>());
  EXPECT_TRUE(at(spec, "load.stages.[].rate")["exclusiveMinimum"].as<bool>());
  EXPECT_EQ(at(spec, "load.timeout")["default"].as<std::string>(), "30s");
  EXPECT_TRUE(at(spec, "load.keepAlive")["default"].as<bool>());
  EXPECT_EQ(at(spec, "load.engine")["default"].as<std::string>(), "auto");
  EXPECT_EQ(at(spec, "requests.[].weight")["minimum"].as<int>(), 1);
  EXPECT_EQ(at(spec, "requests.[].expect.status.[]")["minimum"].as<int>(), 100);
  EXPECT_EQ(at(spec, "requests.[].expect.status.[]")["maximum"].as<int>(), 599);
  EXPECT_EQ(at(spec, "target.service.port")["minimum"].as<int>(), 1);
  EXPECT_EQ(at(spec, "target.service.port")["maximum"].as<int>(), 65535);
  EXPECT_EQ(strings(at(spec, "target.service.scheme")["enum"]),
            (std::vector<std::string>{"http", "https"}));
  EXPECT_EQ(strings(at(spec, "cleanup.policy")["enum"]),
            (std::vector<std::string>{"Always", "OnSuccess", "Never"}));
  EXPECT_EQ(at(spec, "cleanup.policy")["default"].as<std::string>(), "OnSuccess");
  EXPECT_EQ(at(spec, "timeouts.start")["default"].as<std::string>(), "5m");
  // Parents default to {} so their children's defaults always apply.
  EXPECT_TRUE(at(spec, "cleanup")["default"].IsMap());
  EXPECT_TRUE(at(spec, "timeouts")["default"].IsMap());
  // The request mix is keyed by name: duplicates are rejected, SSA merges.
  EXPECT_EQ(at(spec, "requests")["x-kubernetes-list-type"].as<std::string>(), "map");
  EXPECT_EQ(strings(at(spec, "requests")["x-kubernetes-list-map-keys"]),
            std::vector<std::string>{"name"});
  for (const char* opaque : {"workerTemplate.affinity", "workerTemplate.resources"}) {
    EXPECT_TRUE(at(spec, opaque)["x-kubernetes-preserve-unknown-fields"].as<bool>()) << opaque;
  }
}

TEST(Crd, CelRulesCarryMessages) {
  const YAML::Node spec = spec_schema();
  EXPECT_TRUE(any_contains(rule_messages(at(spec, "target")),
                           "exactly one of target.url or target.service"));
  const std::vector<std::string> load = rule_messages(at(spec, "load"));
  EXPECT_TRUE(any_contains(load,
                           "one of load.duration, load.requests (load.iterations with "
                           "spec.scenarios) or load.stages"));
  const std::vector<std::string> spec_rules = rule_messages(spec);
  EXPECT_TRUE(any_contains(spec_rules, "spec.requests and spec.scenarios exclude each other"));
  EXPECT_TRUE(any_contains(spec_rules, "load.iterations is for spec.scenarios"));
  EXPECT_TRUE(any_contains(spec_rules, "scenarios run over HTTP/1.1 for now"));
  EXPECT_TRUE(any_contains(rule_messages(at(spec, "scenarios.[].steps.[].extract.[]")),
                           "exactly one of json, header, cookie or regex"));
  EXPECT_TRUE(any_contains(rule_messages(at(spec, "data.[]")),
                           "exactly one of file (loadgen run), configMapKeyRef or secretKeyRef"));
  EXPECT_TRUE(any_contains(load, "load.warmup and load.warmupRequests are mutually exclusive"));
  EXPECT_TRUE(any_contains(load, "load.connections and load.rate are mutually exclusive"));
  EXPECT_TRUE(any_contains(rule_messages(at(spec, "baseline")),
                           "exactly one of loadTestName, resultName or lastPassed"));
  EXPECT_TRUE(any_contains(rule_messages(spec), "load.connections must be >= workers"));
  // The wording GitOps tools key on to recreate (docs/lifecycle.md).
  EXPECT_TRUE(any_contains(rule_messages(spec), "spec is immutable"));
}

TEST(Crd, DurationPatternMatchesWhatTheParserAccepts) {
  const std::regex pattern(at(spec_schema(), "load.duration")["pattern"].as<std::string>());
  for (const char* text : {"30s", "1h30m", "1.5s", "0", "100us", "100\xC2\xB5s", "250ms", "2m",
                           ".5s", "30", "-1s", "1d", "", "s", "1.5", "10 s"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(std::regex_match(text, pattern), parse_duration(text).has_value());
  }
  for (const char* field :
       {"load.warmup", "load.timeout", "load.stages.[].duration", "timeouts.start", "timeouts.run",
        "scenarios.[].pacing", "scenarios.[].steps.[].thinkTime.constant",
        "scenarios.[].steps.[].thinkTime.uniform.min",
        "scenarios.[].steps.[].thinkTime.uniform.max",
        "scenarios.[].steps.[].thinkTime.exponential.mean"}) {
    EXPECT_EQ(at(spec_schema(), field)["pattern"].as<std::string>(),
              at(spec_schema(), "load.duration")["pattern"].as<std::string>())
        << field;
  }
}

TEST(Crd, ThresholdPatternAdmitsTheGrammar) {
  const std::regex pattern(at(spec_schema(), "thresholds.[]")["pattern"].as<std::string>());
  // What the parser accepts, the API server must accept.
  for (const char* text :
       {"p99 < 200ms", "errorRate < 1%", "rps >= 4800", "cart.p99 < 100ms", "p999<=1.5s",
        "requests == 100000", "failures > 0", "mean < 20", "min >= 0.5ms", "errorRate <= 0.01",
        "rps > 10/s", "p50 < 100us", "dropped < 1", "late <= 100", "iterations >= 1000",
        "buy.failedIterations == 0", "iteration.p95 < 3s", "login.errorRate < 1%"}) {
    SCOPED_TRACE(text);
    ASSERT_TRUE(std::holds_alternative<kubeload::Threshold>(parse_threshold(text)));
    EXPECT_TRUE(std::regex_match(text, pattern));
  }
  // What the grammar cannot mean is refused at apply time already.
  for (const char* text : {"p98 < 10ms", "p99 200ms", "p99 < -1ms", "P99 < 1ms", "p99 < ms",
                           "Cart.p99 < 1ms", "p99 < 10 ms extra", ""}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(std::holds_alternative<kubeload::Threshold>(parse_threshold(text)));
    EXPECT_FALSE(std::regex_match(text, pattern));
  }
}

TEST(Crd, StatusEnumsMatchTheOperator) {
  using kubeload::controller::Phase;
  std::vector<std::string> phases;
  for (Phase phase :
       {Phase::Pending, Phase::Starting, Phase::Running, Phase::Succeeded, Phase::Failed}) {
    phases.emplace_back(kubeload::controller::to_string(phase));
  }
  EXPECT_EQ(strings(at(status_schema(), "phase")["enum"]), phases);
  EXPECT_EQ(strings(at(status_schema(), "verdict")["enum"]),
            (std::vector<std::string>{"Pass", "Fail", "None"}));
  const YAML::Node conditions = at(status_schema(), "conditions");
  EXPECT_EQ(conditions["x-kubernetes-list-type"].as<std::string>(), "map");
  EXPECT_EQ(strings(conditions["x-kubernetes-list-map-keys"]), std::vector<std::string>{"type"});
  EXPECT_EQ(
      strings(conditions["items"]["required"]),
      (std::vector<std::string>{"type", "status", "lastTransitionTime", "reason", "message"}));
  EXPECT_EQ(strings(at(status_schema(), "conditions.[].status")["enum"]),
            (std::vector<std::string>{"True", "False", "Unknown"}));
  for (const char* field :
       {"observedGeneration", "reason", "message", "startTime", "completionTime", "progress",
        "workers", "stages", "requestResults", "thresholds", "baseline"}) {
    EXPECT_TRUE(status_schema()["properties"][field]) << field;
  }
}

// Every field of the typed status (kubeload/api/loadtest.hpp), as its
// to_json writes it, against the CRD's status schema, both ways: a field the
// code writes that the schema lacks would be pruned by the API server (the
// status loses it silently), and a schema field no code writes is a lie in
// `kubectl explain`. The JSON type of each value is the schema's type.
kubeload::api::LoadTestStatus every_status_field() {
  using namespace kubeload::api;
  const Time at = whole_seconds(std::chrono::system_clock::now());
  LoadTestStatus status;
  status.observed_generation = 3;
  status.phase = Phase::Succeeded;
  status.verdict = Verdict::Pass;
  status.reason = "ThresholdsPassed";
  status.message = "all 1 threshold met";
  status.start_time = at;
  status.completion_time = at;
  status.progress = "100%";
  status.error_percent = 0.5;
  status.workers = WorkerCounts{2, 2, 2, 0, 4, WorkersCpuStatus{2, 5.8, 1, 0.97, 0.1}};
  status.result = nlohmann::json{{"requests", 10}};
  status.stages = nlohmann::json::array({{{"index", 0}}});
  status.request_results = nlohmann::json::array({{{"name", "home"}}});
  status.scenario_results = nlohmann::json::array({{{"name", "buy"}}});
  const UsageFigures usage{0.5, 0.75, 1 << 20, 0};
  status.target = TargetUsageStatus{"shop",
                                    "app=web",
                                    2,
                                    {at, at, true},
                                    usage,
                                    {TargetStageUsage{0, {at, at, false}, usage}},
                                    {"10.244.0.5", "10.96.0.10", "web.shop.svc"},
                                    {SharedRun{"shop", "checkout-other"}}};
  status.thresholds = {ThresholdRow{"p99 < 20ms", "12.5ms", 12.5, true}};
  status.baseline = BaselineOutcome{"checkout-1",
                                    "checkout-1-0a1b2c3d",
                                    {"checkout-1-0a1b2c3d", "checkout-0-4e5f6a7b"},
                                    {{"p99", "+1.0%"}},
                                    {BaselineCheck{"p99", 12.5, 12.4, "+1.0%", 10, true}},
                                    true,
                                    "compared"};
  status.experiment = ExperimentStatus{
      6,
      6,
      {ExperimentRun{1, "a", "ab-a-1", Phase::Succeeded, {{"p99", 12.5}}}},
      {VariantOutcome{"a",
                      "service web-a:80",
                      6,
                      nlohmann::json{{"requests", 60}},
                      {{"p99", 12.5}, {"cpuPerRequest", 0.0001}},
                      usage}},
      {MetricDifference{"b", "a", "p99", 1.5, 0.5, 2.5, 12.0}},
      {ComparisonRow{"b.p99 <= a.p99", "Inconclusive", 1.5, -0.5, 3.5, 14, "straddles"}}};
  status.search = SearchStatus{"rate",
                               {SearchStep{2,
                                           87.5,
                                           "capacity-step-2",
                                           Phase::Succeeded,
                                           Verdict::Fail,
                                           {{"p99", 240.5}},
                                           0.5,
                                           {"p99 < 100ms (observed 240ms)"}}},
                               50,
                               87.5,
                               400,
                               "spec.search.rate.max"};
  status.result_record = "checkout-2-9c8d7e6f";
  status.conditions = {Condition{"Ready", ConditionStatus::True, "ThresholdsPassed", "ok", at, 3}};
  return status;
}

std::string json_type(const nlohmann::json& value) {
  if (value.is_object()) return "object";
  if (value.is_array()) return "array";
  if (value.is_string()) return "string";
  if (value.is_boolean()) return "boolean";
  if (value.is_number_integer()) return "integer";
  if (value.is_number()) return "number";
  return "null";
}

// Compares `value` with `schema` at `path`, recording every property seen.
void check_against_schema(const nlohmann::json& value, const YAML::Node& schema,
                          const std::string& path, std::set<std::string>& written) {
  const std::string type = schema["type"].as<std::string>();
  const std::string actual = json_type(value);
  // A JSON number with no fraction is an integer to nlohmann; the schema's
  // "number" takes it too.
  EXPECT_TRUE(actual == type || (type == "number" && actual == "integer"))
      << path << ": the code writes " << actual << ", the schema says " << type;
  if (schema["format"] && schema["format"].as<std::string>() == "date-time") {
    EXPECT_TRUE(value.is_string() && kubeload::rfc3339::parse(value.get<std::string>()))
        << path << ": not a date-time: " << value.dump();
  }
  if (schema["x-kubernetes-preserve-unknown-fields"]) return;  // opaque: the result encoding
  if (value.is_object() && schema["properties"]) {
    for (const auto& [key, member] : value.items()) {
      const std::string at = path + "." + key;
      written.insert(at);
      const YAML::Node property = schema["properties"][key];
      if (!property) {
        ADD_FAILURE() << at << " is written by the code but not in the CRD's schema";
        continue;
      }
      check_against_schema(member, property, at, written);
    }
  } else if (value.is_object() && schema["additionalProperties"]) {
    for (const auto& [key, member] : value.items()) {
      check_against_schema(member, schema["additionalProperties"], path + ".{}", written);
    }
  } else if (value.is_array() && schema["items"]) {
    for (const nlohmann::json& item : value) {
      check_against_schema(item, schema["items"], path + ".[]", written);
    }
  }
}

void schema_properties(const YAML::Node& schema, const std::string& path,
                       std::set<std::string>& out) {
  if (schema["x-kubernetes-preserve-unknown-fields"]) return;
  for (const auto& property : schema["properties"]) {
    const std::string at = path + "." + property.first.as<std::string>();
    out.insert(at);
    schema_properties(property.second, at, out);
  }
  if (schema["items"]) schema_properties(schema["items"], path + ".[]", out);
}

TEST(Crd, StatusSchemaIsTheTypedStatus) {
  const kubeload::api::LoadTestStatus status = every_status_field();
  const nlohmann::json written_status = status;
  std::set<std::string> written;
  check_against_schema(written_status, status_schema(), "status", written);
  std::set<std::string> declared;
  schema_properties(status_schema(), "status", declared);
  for (const std::string& field : declared) {
    EXPECT_TRUE(written.contains(field))
        << field << " is in the CRD's schema but no code writes it";
  }
  // And what is written reads back as the same status.
  EXPECT_EQ(written_status.get<kubeload::api::LoadTestStatus>(), status);
  EXPECT_EQ(strings(at(status_schema(), "verdict")["enum"]).size(),
            kubeload::api::kVerdicts.size());
  for (const auto& [verdict, spelling] : kubeload::api::kVerdicts) {
    EXPECT_TRUE(
        any_contains(strings(at(status_schema(), "verdict")["enum"]), std::string(spelling)));
  }
}

// ---- the LoadTestSchedule's CRD (crds/kubeload.dev_loadtestschedules.yaml)

const YAML::Node& schedule_crd() {
  static const YAML::Node node = YAML::LoadFile(std::string(KUBELOAD_SOURCE_DIR) +
                                                "/crds/kubeload.dev_loadtestschedules.yaml");
  return node;
}
const YAML::Node schedule_schema() {
  return schedule_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
}

TEST(ScheduleCrd, NamesGroupAndVersion) {
  using namespace kubeload::api;
  const YAML::Node names = schedule_crd()["spec"]["names"];
  EXPECT_EQ(schedule_crd()["spec"]["group"].as<std::string>(), kGroup);
  EXPECT_EQ(names["kind"].as<std::string>(), kScheduleKind);
  EXPECT_EQ(names["plural"].as<std::string>(), kSchedulePlural);
  EXPECT_EQ(schedule_crd()["metadata"]["name"].as<std::string>(),
            std::string(kSchedulePlural) + "." + std::string(kGroup));
  EXPECT_EQ(strings(names["shortNames"]), std::vector<std::string>{"lts"});
  const YAML::Node version = schedule_crd()["spec"]["versions"][0];
  EXPECT_EQ(version["name"].as<std::string>(), kVersion);
  EXPECT_TRUE(version["subresources"]["status"].IsMap());
}

TEST(ScheduleCrd, PrinterColumns) {
  std::vector<std::string> names;
  for (const YAML::Node& column :
       schedule_crd()["spec"]["versions"][0]["additionalPrinterColumns"]) {
    if (!column["priority"]) names.push_back(column["name"].as<std::string>());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"Schedule", "Suspend", "Active", "Last-Schedule",
                                             "Last-Verdict", "Ready", "Age"}));
}

TEST(ScheduleCrd, DefaultsAreTheTypedOnes) {
  using namespace kubeload::api;
  const YAML::Node spec = schedule_schema()["properties"]["spec"];
  EXPECT_EQ(at(spec, "concurrencyPolicy")["default"].as<std::string>(),
            to_string(kDefaultConcurrencyPolicy));
  EXPECT_EQ(at(spec, "successfulRunsHistoryLimit")["default"].as<int64_t>(),
            kDefaultSuccessfulRunsHistoryLimit);
  EXPECT_EQ(at(spec, "failedRunsHistoryLimit")["default"].as<int64_t>(),
            kDefaultFailedRunsHistoryLimit);
  std::vector<std::string> policies;
  for (const auto& [policy, spelling] : kConcurrencyPolicies) policies.emplace_back(spelling);
  EXPECT_EQ(strings(at(spec, "concurrencyPolicy")["enum"]), policies);
}

TEST(ScheduleCrd, SpecSchemaIsTheTypedSpec) {
  using namespace kubeload::api;
  LoadTestScheduleSpec spec;
  spec.schedule = "0 2 * * *";
  spec.time_zone = "Europe/Berlin";
  spec.suspend = true;
  spec.concurrency_policy = ConcurrencyPolicy::Replace;
  spec.starting_deadline_seconds = 300;
  spec.successful_runs_history_limit = 5;
  spec.failed_runs_history_limit = 2;
  spec.template_.labels = {{"team", "shop"}};
  spec.template_.annotations = {{"note", "nightly"}};
  spec.template_.spec = nlohmann::json{{"target", {{"url", "http://shop"}}}};
  const nlohmann::json written_spec = spec;
  std::set<std::string> written;
  const YAML::Node spec_schema = schedule_schema()["properties"]["spec"];
  check_against_schema(written_spec, spec_schema, "spec", written);
  std::set<std::string> declared;
  schema_properties(spec_schema, "spec", declared);
  EXPECT_EQ(written, declared);
  EXPECT_EQ(written_spec.get<LoadTestScheduleSpec>(), spec);
}

TEST(ScheduleCrd, StatusSchemaIsTheTypedStatus) {
  using namespace kubeload::api;
  const Time at_ = whole_seconds(std::chrono::system_clock::now());
  LoadTestScheduleStatus status;
  status.observed_generation = 2;
  status.last_schedule_time = at_;
  status.last_skipped_time = at_;
  status.next_schedule_time = at_;
  status.active = {ActiveRun{"nightly-x7k2p", "uid-1"}};
  status.last_runs = {
      LastRun{"nightly-abcde", at_, Phase::Failed, Verdict::Fail, at_, "p99 < 20ms: 31ms"}};
  status.conditions = {Condition{"Ready", ConditionStatus::False, "LastRunFailed", "m", at_, 2}};
  const nlohmann::json written_status = status;
  const YAML::Node status_schema = schedule_schema()["properties"]["status"];
  std::set<std::string> written;
  check_against_schema(written_status, status_schema, "status", written);
  std::set<std::string> declared;
  schema_properties(status_schema, "status", declared);
  for (const std::string& field : declared) {
    EXPECT_TRUE(written.contains(field))
        << field << " is in the CRD's schema but no code writes it";
  }
  EXPECT_EQ(written_status.get<LoadTestScheduleStatus>(), status);
}

}  // namespace
