// Whose word lets a LoadTest read a Secret (issue 26, item 5): its owner's,
// by the kubeload.dev/consent label and the kubeload.dev/consent-tests
// annotation, whoever applied the LoadTest. Each row is a LoadTest and the
// Secrets' metadata as the operator read them, and the decision.

#include "operator/secret_consent.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;

// A LoadTest of namespace "shop", test "checkout" (or none), whose first
// request takes a header from Secret "api-token" and whose target is
// verified against `ca_from` (a caFrom object), if given.
struct Subject {
  api::LoadTest loadtest;
  LoadTestSpec spec;
};
Subject loadtest_of(const std::string& ca_from = "", const std::string& test = "checkout",
                    bool headers = true) {
  json lt = json::parse(R"({
    "apiVersion": "kubeload.dev/v1alpha1", "kind": "LoadTest",
    "metadata": {"name": "run-1", "namespace": "shop", "uid": "u-1", "generation": 1},
    "spec": {"target": {"url": "https://checkout.shop.svc:8443/"},
             "load": {"connections": 2, "duration": "10s"},
             "requests": [{"name": "plain"}]}})");
  if (!test.empty()) lt["metadata"]["labels"]["kubeload.dev/test"] = test;
  if (headers) {
    lt["spec"]["requests"].push_back(json::parse(R"({"name": "authed", "headersFrom": [
        {"name": "X-Trace", "secretKeyRef": {"name": "trace", "key": "id"}},
        {"name": "Authorization", "secretKeyRef": {"name": "api-token", "key": "header"}}]})"));
  }
  if (!ca_from.empty()) lt["spec"]["target"]["tls"] = {{"caFrom", json::parse(ca_from)}};
  const ParsedLoadTest parsed = parse_loadtest(lt.dump());
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.errors.front().message);
  return {lt.get<api::LoadTest>(), parsed.spec};
}

// A Secret's metadata as read: its consent label (none when empty) and
// consent-tests annotation (none when unset).
SecretMetadataView secret(const std::string& consent,
                          const std::optional<std::string>& tests = std::nullopt) {
  json object = {{"kind", "PartialObjectMetadata"}, {"metadata", {{"name", "s"}}}};
  object["metadata"]["labels"]["app"] = "shop";
  if (!consent.empty()) object["metadata"]["labels"]["kubeload.dev/consent"] = consent;
  if (tests) object["metadata"]["annotations"]["kubeload.dev/consent-tests"] = *tests;
  return secret_metadata_view(object);
}
SecretMetadataView unreadable() {
  SecretMetadataView view;
  view.unreadable = "403 Forbidden: secrets \"api-token\" is forbidden";
  return view;
}
SecretMetadataView not_found() {
  return {};
}

TEST(SecretConsent, TheReferencesAreNamedByTheirField) {
  const std::vector<SecretReference> refs =
      secret_references(loadtest_of(R"({"secretKeyRef": {"name": "ca", "key": "c"}})").spec);
  ASSERT_EQ(refs.size(), 3u);
  EXPECT_EQ(refs[0].name, "ca");
  EXPECT_EQ(refs[0].use, SecretUse::ca);
  EXPECT_EQ(refs[0].field, "spec.target.tls.caFrom.secretKeyRef.name");
  EXPECT_EQ(refs[2].name, "api-token");
  EXPECT_EQ(refs[2].use, SecretUse::headers);
  EXPECT_EQ(refs[2].field, "spec.requests[1].headersFrom[1].secretKeyRef.name");
  // A ConfigMap's CA bundle is public: no consent, nothing read.
  EXPECT_EQ(secrets_to_read(
                loadtest_of(R"({"configMapKeyRef": {"name": "ca", "key": "c"}})", "", false).spec),
            std::set<std::string>{});
  EXPECT_EQ(secrets_to_read(loadtest_of().spec), (std::set<std::string>{"api-token", "trace"}));
}

TEST(SecretConsent, Table) {
  const std::string ca_secret = R"({"secretKeyRef": {"name": "ca", "key": "ca.crt"}})";
  const std::string ca_config_map = R"({"configMapKeyRef": {"name": "ca", "key": "ca.crt"}})";
  struct Row {
    std::string name;
    Subject subject;
    std::map<std::string, SecretMetadataView> read;
    // Each a part of the refusal (none: consented); `missing` likewise.
    std::vector<std::string> refused;
    std::vector<std::string> missing = {};
  };
  const std::vector<Row> rows = {
      {"both consent to headers",
       loadtest_of(),
       {{"api-token", secret("headers")}, {"trace", secret("headers")}},
       {}},
      {"headers.ca consents to both uses",
       loadtest_of(ca_secret),
       {{"api-token", secret("headers.ca")},
        {"trace", secret("ca.headers")},
        {"ca", secret("headers.ca")}},
       {}},
      {"no consent label",
       loadtest_of(),
       {{"api-token", secret("")}, {"trace", secret("headers")}},
       {"Secret \"api-token\" (spec.requests[1].headersFrom[1].secretKeyRef.name)",
        "has not consented to be read into request headers", "has no label kubeload.dev/consent",
        "kubectl -n shop label secret api-token kubeload.dev/consent=headers`"}},
      {"the label names another use",
       loadtest_of(),
       {{"api-token", secret("ca")}, {"trace", secret("headers")}},
       {"its label kubeload.dev/consent=ca does not name headers",
        "kubeload.dev/consent=headers.ca --overwrite"}},
      {"a value that is no use consents to nothing",
       loadtest_of(),
       {{"api-token", secret("true")}, {"trace", secret("headers")}},
       {"kubeload.dev/consent=true does not name headers"}},
      {"a CA bundle needs its own consent",
       loadtest_of(ca_secret, "checkout", false),
       {{"ca", secret("headers")}},
       {"Secret \"ca\" (spec.target.tls.caFrom.secretKeyRef.name)",
        "has not consented to be read into a CA bundle (caFrom)",
        "kubeload.dev/consent=headers.ca --overwrite"}},
      {"a CA bundle with consent",
       loadtest_of(ca_secret, "checkout", false),
       {{"ca", secret("ca")}},
       {}},
      {"a ConfigMap's CA bundle is not looked up",
       loadtest_of(ca_config_map, "checkout", false),
       {},
       {}},
      {"the label suggested covers every use this run makes of the Secret",
       loadtest_of(R"({"secretKeyRef": {"name": "api-token", "key": "ca.crt"}})"),
       {{"api-token", secret("")}, {"trace", secret("headers")}},
       {"Secret \"api-token\" (spec.target.tls.caFrom.secretKeyRef.name)",
        "label secret api-token kubeload.dev/consent=headers.ca`"}},
      {"the tests annotation lists this test",
       loadtest_of(),
       {{"api-token", secret("headers", "cart, checkout")}, {"trace", secret("headers")}},
       {}},
      {"the tests annotation does not list this test",
       loadtest_of(),
       {{"api-token", secret("headers", "cart,search")}, {"trace", secret("headers")}},
       {"Secret \"api-token\"",
        "consents only to the tests its annotation kubeload.dev/consent-tests", "\"cart,search\"",
        "kubeload.dev/test label is \"checkout\""}},
      {"a LoadTest without a test label is in no list",
       loadtest_of("", ""),
       {{"api-token", secret("headers", "checkout")}, {"trace", secret("headers")}},
       {"kubeload.dev/test label is not set"}},
      {"an empty tests annotation lists none",
       loadtest_of(),
       {{"api-token", secret("headers", "")}, {"trace", secret("headers")}},
       {"consents only to the tests"}},
      {"a Secret the operator may not read is refused",
       loadtest_of(),
       {{"api-token", unreadable()}, {"trace", secret("headers")}},
       {"Secret \"api-token\"", "cannot be read to check its owner's consent",
        "needs get on secrets in shop", "403 Forbidden"}},
      {"a Secret not found is missing, not refused",
       loadtest_of(),
       {{"api-token", not_found()}, {"trace", secret("headers")}},
       {},
       {"Secret \"api-token\" (spec.requests[1].headersFrom[1].secretKeyRef.name) does not exist "
        "in namespace shop"}},
      {"nor is one not looked up",
       loadtest_of(),
       {{"trace", secret("headers")}},
       {},
       {"Secret \"api-token\""}},
      {"a refusal wins over a missing Secret",
       loadtest_of(),
       {{"trace", not_found()}, {"api-token", secret("")}},
       {"Secret \"api-token\""},
       {"Secret \"trace\""}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const ConsentDecision decision =
        decide_secret_consent(row.subject.loadtest, row.subject.spec, row.read);
    EXPECT_EQ(decision.refused.has_value(), !row.refused.empty()) << decision.refused.value_or("");
    for (const std::string& part : row.refused) {
      EXPECT_NE(decision.refused.value_or("").find(part), std::string::npos)
          << part << " not in: " << decision.refused.value_or("");
    }
    if (!decision.refused) {
      EXPECT_EQ(decision.missing.has_value(), !row.missing.empty())
          << decision.missing.value_or("");
    }
    for (const std::string& part : row.missing) {
      EXPECT_NE(decision.missing.value_or("").find(part), std::string::npos)
          << part << " not in: " << decision.missing.value_or("");
    }
  }
}

// Only labels and annotations are taken from what was read: whatever else
// an answer carries (a server that sent the whole object) is dropped.
TEST(SecretConsent, TheViewKeepsNoData) {
  const SecretMetadataView view = secret_metadata_view(json::parse(R"({
    "kind": "Secret", "metadata": {"name": "api-token", "labels": {"kubeload.dev/consent": "headers"},
    "annotations": {"kubeload.dev/consent-tests": "checkout", "n": 3}},
    "data": {"header": "QmVhcmVyIHMzY3IzdA=="}})"));
  EXPECT_TRUE(view.found);
  EXPECT_EQ(view.labels, (std::map<std::string, std::string>{{"kubeload.dev/consent", "headers"}}));
  EXPECT_EQ(view.annotations,
            (std::map<std::string, std::string>{{"kubeload.dev/consent-tests", "checkout"}}));
}

}  // namespace

namespace {

// The spec parser reads spec.data elsewhere; here the sources are set on the
// parsed spec directly.
DataSourceSpec data_source(const std::string& name, ObjectKeyRef::Kind kind,
                           const std::string& object) {
  DataSourceSpec source;
  source.name = name;
  source.from = ObjectKeyRef{kind, object, "users.csv"};
  return source;
}

TEST(SecretConsent, TestDataFromASecretNeedsItsOwnConsentAndFromAConfigMapNone) {
  Subject subject = loadtest_of("", "checkout", false);
  subject.spec.data = {data_source("users", ObjectKeyRef::Kind::config_map, "users"),
                       data_source("cards", ObjectKeyRef::Kind::secret, "cards")};
  const std::vector<SecretReference> refs = secret_references(subject.spec);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].name, "cards");
  EXPECT_EQ(refs[0].use, SecretUse::data);
  EXPECT_EQ(refs[0].field, "spec.data[1].secretKeyRef.name");
  EXPECT_EQ(secrets_to_read(subject.spec), std::set<std::string>{"cards"});

  const ConsentDecision headers_only =
      decide_secret_consent(subject.loadtest, subject.spec, {{"cards", secret("headers.ca")}});
  ASSERT_TRUE(headers_only.refused);
  EXPECT_EQ(*headers_only.refused,
            "Secret \"cards\" (spec.data[1].secretKeyRef.name) has not consented to be read into "
            "test data (spec.data): its label kubeload.dev/consent=headers.ca does not name data. "
            "Its owner consents with `kubectl -n shop label secret cards "
            "kubeload.dev/consent=headers.ca.data --overwrite`");
  const ConsentDecision consented =
      decide_secret_consent(subject.loadtest, subject.spec, {{"cards", secret("data")}});
  EXPECT_FALSE(consented.refused);
  EXPECT_FALSE(consented.missing);
  const ConsentDecision missing = decide_secret_consent(subject.loadtest, subject.spec, {});
  ASSERT_TRUE(missing.missing);
  EXPECT_EQ(*missing.missing,
            "Secret \"cards\" (spec.data[1].secretKeyRef.name) does not exist in namespace shop");
}

}  // namespace
