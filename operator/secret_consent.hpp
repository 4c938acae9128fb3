#pragma once
// Whose word lets a LoadTest read a Secret (issue 26, item 5). A run's
// headersFrom values, its caFrom bundle and its test data (spec.data) are read
// by the kubelet into the worker pods, so whoever may create a LoadTest could otherwise have any
// Secret of the namespace sent to a target of their choosing. Admission can
// ask whether the requester may get the Secret, but under GitOps the
// requester is Argo CD's or CI's service account, which may get them all,
// and without admission nobody asks. So the Secret's owner decides: only a
// Secret labelled kubeload.dev/consent with the use (and, with the
// kubeload.dev/consent-tests annotation, only for the tests it lists) is
// read, checked by the operator before the run's Job exists.
//
// The operator reads each named Secret's metadata only (a
// PartialObjectMetadata GET), never its data; the decision is a pure
// function of that and the LoadTest, here.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/spec.hpp"

namespace kubeload::controller {

// What a LoadTest may do with a Secret: each a word of the consent label.
enum class SecretUse { headers, ca, data };

// One place a LoadTest names a Secret of its namespace. A caFrom or a data
// source that names a ConfigMap is none: a ConfigMap needs no consent (its
// owner put nothing secret in it).
struct SecretReference {
  std::string name;
  SecretUse use = SecretUse::headers;
  // Where: spec.requests[0].headersFrom[1].secretKeyRef.name,
  // spec.target.tls.caFrom.secretKeyRef.name, spec.data[0].secretKeyRef.name.
  std::string field;
};
// In manifest order (the target's caFrom first, then the requests', then
// the data sources').
std::vector<SecretReference> secret_references(const LoadTestSpec& spec);
// The Secrets to read: each referenced name once.
std::set<std::string> secrets_to_read(const LoadTestSpec& spec);

// A Secret's metadata as observe() read it.
struct SecretMetadataView {
  bool found = false;
  // The API server's answer when it could not be read (403: the operator
  // may not get Secrets in this namespace).
  std::string unreadable;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};
// From a PartialObjectMetadata (or any object: only metadata.labels and
// metadata.annotations are taken).
SecretMetadataView secret_metadata_view(const nlohmann::json& object);

struct ConsentDecision {
  // A Secret that does not consent to its use by this LoadTest, or that
  // could not be read: why, naming the Secret, the field and how its owner
  // consents. The run fails SecretNotConsented; nothing is created.
  std::optional<std::string> refused;
  // Else a Secret that does not exist (yet): which, and where it is named.
  // It may still be created, so the run waits for it until timeouts.start.
  std::optional<std::string> missing;
};
// `read`: by Secret name, as looked up (a name absent from it counts as not
// found). The LoadTest's kubeload.dev/test label is the identity the
// consent-tests annotation names.
ConsentDecision decide_secret_consent(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                      const std::map<std::string, SecretMetadataView>& read);

}  // namespace kubeload::controller
