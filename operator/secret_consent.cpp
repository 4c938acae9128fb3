#include "operator/secret_consent.hpp"

#include <algorithm>

#include "kubeload/api/meta.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/text.hpp"

namespace kubeload::controller {

using json_access::member;

namespace {

std::string_view word_of(SecretUse use) {
  switch (use) {
    case SecretUse::headers:
      return api::kConsentHeaders;
    case SecretUse::ca:
      return api::kConsentCa;
    case SecretUse::data:
      return api::kConsentData;
  }
  return api::kConsentHeaders;  // not reached: every use is above
}

// "request headers", "the CA bundle": how messages name a use.
std::string_view described(SecretUse use) {
  switch (use) {
    case SecretUse::headers:
      return "request headers (headersFrom)";
    case SecretUse::ca:
      return "a CA bundle (caFrom)";
    case SecretUse::data:
      return "test data (spec.data)";
  }
  return "";  // not reached: every use is above
}

// Splits `list` at `separator`, each item without surrounding blanks, empty
// items left out.
std::vector<std::string> items_of(std::string_view list, char separator) {
  std::vector<std::string> items;
  while (true) {
    const auto end = list.find(separator);
    std::string_view item = list.substr(0, end);
    while (!item.empty() && is_blank(item.front())) item.remove_prefix(1);
    while (!item.empty() && is_blank(item.back())) item.remove_suffix(1);
    if (!item.empty()) items.emplace_back(item);
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
  return items;
}

std::set<SecretUse> uses_in(std::string_view label_value) {
  std::set<SecretUse> uses;
  for (const std::string& word : items_of(label_value, '.')) {
    for (const SecretUse use : {SecretUse::headers, SecretUse::ca, SecretUse::data}) {
      if (word == word_of(use)) uses.insert(use);
    }
  }
  return uses;
}

// The label value that grants `uses`: "headers", "ca", "headers.ca".
std::string label_value(const std::set<SecretUse>& uses) {
  std::string value;
  for (const SecretUse use : uses) {
    if (!value.empty()) value += '.';
    value += word_of(use);
  }
  return value;
}

const std::string* find(const std::map<std::string, std::string>& map, std::string_view key) {
  const auto it = map.find(std::string(key));
  return it == map.end() ? nullptr : &it->second;
}

std::string named(const SecretReference& ref) {
  return "Secret " + quote(ref.name) + " (" + ref.field + ")";
}

}  // namespace

std::vector<SecretReference> secret_references(const LoadTestSpec& spec) {
  std::vector<SecretReference> refs;
  if (spec.tls.ca_from && spec.tls.ca_from->kind == ObjectKeyRef::Kind::secret) {
    refs.push_back(
        {spec.tls.ca_from->name, SecretUse::ca, "spec.target.tls.caFrom.secretKeyRef.name"});
  }
  for (std::size_t i = 0; i < spec.requests.size(); ++i) {
    const std::vector<HeaderFrom>& headers = spec.requests[i].headers_from;
    for (std::size_t j = 0; j < headers.size(); ++j) {
      refs.push_back({headers[j].secret_key_ref.name, SecretUse::headers,
                      "spec.requests[" + std::to_string(i) + "].headersFrom[" + std::to_string(j) +
                          "].secretKeyRef.name"});
    }
  }
  for (std::size_t i = 0; i < spec.data.size(); ++i) {
    const std::optional<ObjectKeyRef>& from = spec.data[i].from;
    if (from && from->kind == ObjectKeyRef::Kind::secret) {
      refs.push_back(
          {from->name, SecretUse::data, "spec.data[" + std::to_string(i) + "].secretKeyRef.name"});
    }
  }
  return refs;
}

std::set<std::string> secrets_to_read(const LoadTestSpec& spec) {
  std::set<std::string> names;
  for (const SecretReference& ref : secret_references(spec)) names.insert(ref.name);
  return names;
}

SecretMetadataView secret_metadata_view(const nlohmann::json& object) {
  SecretMetadataView view;
  view.found = true;
  const nlohmann::json& metadata = member(object, "metadata");
  const auto strings = [](const nlohmann::json& map) {
    std::map<std::string, std::string> out;
    if (!map.is_object()) return out;
    for (const auto& [name, value] : map.items()) {
      if (value.is_string()) out[name] = value.get<std::string>();
    }
    return out;
  };
  view.labels = strings(member(metadata, "labels"));
  view.annotations = strings(member(metadata, "annotations"));
  return view;
}

ConsentDecision decide_secret_consent(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                      const std::map<std::string, SecretMetadataView>& read) {
  ConsentDecision decision;
  const std::vector<SecretReference> refs = secret_references(spec);
  const std::string& namespace_ = loadtest.metadata.namespace_;
  const std::string* test = find(loadtest.metadata.labels, api::kTestLabel);
  for (const SecretReference& ref : refs) {
    const auto it = read.find(ref.name);
    if (it == read.end() || (!it->second.found && it->second.unreadable.empty())) {
      if (!decision.missing) {
        decision.missing = named(ref) + " does not exist in namespace " + namespace_;
      }
      continue;
    }
    const SecretMetadataView& secret = it->second;
    if (!secret.unreadable.empty()) {
      decision.refused = named(ref) +
                         " cannot be read to check its owner's consent (the operator "
                         "needs get on secrets in " +
                         namespace_ + "): " + secret.unreadable;
      return decision;
    }
    const std::string* label = find(secret.labels, api::kConsentLabel);
    std::set<SecretUse> granted = label ? uses_in(*label) : std::set<SecretUse>{};
    if (!granted.contains(ref.use)) {
      // Every use this LoadTest makes of the Secret, with what it grants
      // already: the one label that lets this run go.
      std::set<SecretUse> wanted = granted;
      for (const SecretReference& other : refs) {
        if (other.name == ref.name) wanted.insert(other.use);
      }
      const std::string consent = std::string(api::kConsentLabel) + "=" + label_value(wanted);
      decision.refused = named(ref) + " has not consented to be read into " +
                         std::string(described(ref.use)) +
                         (label ? ": its label " + std::string(api::kConsentLabel) + "=" + *label +
                                      " does not name " + std::string(word_of(ref.use))
                                : ": it has no label " + std::string(api::kConsentLabel)) +
                         ". Its owner consents with `kubectl -n " + namespace_ + " label secret " +
                         ref.name + " " + consent + (label ? " --overwrite" : "") + "`";
      return decision;
    }
    if (const std::string* tests = find(secret.annotations, api::kConsentTestsAnnotation)) {
      const std::vector<std::string> allowed = items_of(*tests, ',');
      const bool listed =
          test != nullptr && std::find(allowed.begin(), allowed.end(), *test) != allowed.end();
      if (!listed) {
        decision.refused = named(ref) + " consents only to the tests its annotation " +
                           std::string(api::kConsentTestsAnnotation) + " lists (" + quote(*tests) +
                           "), and this LoadTest's " + std::string(api::kTestLabel) + " label " +
                           (test ? "is " + quote(*test) : std::string("is not set")) +
                           ". Its owner adds the test to that annotation";
        return decision;
      }
    }
  }
  return decision;
}

}  // namespace kubeload::controller
