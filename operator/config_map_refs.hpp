#pragma once
// The ConfigMap keys a LoadTest mounts into its worker pods (spec.data[]
// configMapKeyRef, spec.target.tls.caFrom.configMapKeyRef). A pod whose
// ConfigMap or key is missing waits in ContainerCreating and says why only
// in an Event, so the run would fail at timeouts.start as "0 of N workers
// ready", naming nothing. The operator therefore reads them before it
// creates the Job, as it reads the Secrets (secret_consent.hpp) and the
// target Service: one that is missing is waited for until timeouts.start
// (a GitOps tool may apply it after the LoadTest), then fails the run,
// naming it. Pure functions of the spec and what observe() read, here.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kubeload/spec.hpp"

namespace kubeload::controller {

// One place a LoadTest names a ConfigMap key.
struct ConfigMapReference {
  std::string name;
  std::string key;
  std::string field;  // spec.data[0].configMapKeyRef
};
std::vector<ConfigMapReference> config_map_references(const LoadTestSpec& spec);
// Their names, each once: what observe() reads.
std::set<std::string> config_maps_to_read(const LoadTestSpec& spec);

// What observe() read of one ConfigMap: found or not, and its keys (data
// and binaryData); unreadable (a 403, quoted) leaves the decision to the
// kubelet.
struct ConfigMapKeysView {
  bool found = false;
  std::set<std::string> keys;
  std::string unreadable;
};
ConfigMapKeysView config_map_keys_view(const nlohmann::json& config_map);

// The first reference that is not there: `ConfigMap "users"
// (spec.data[0].configMapKeyRef.name) does not exist in namespace shop`, or
// `ConfigMap "users" has no key "rows.csv" (spec.data[0].configMapKeyRef.key)`;
// nullopt when every one is (or could not be read).
std::optional<std::string> missing_config_map_key(
    const LoadTestSpec& spec, const std::string& namespace_,
    const std::map<std::string, ConfigMapKeysView>& read);

}  // namespace kubeload::controller
