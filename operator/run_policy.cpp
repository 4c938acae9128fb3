#include "operator/run_policy.hpp"

#include <cmath>
#include <cstdio>

#include "kubeload/duration.hpp"
#include "kubeload/json_access.hpp"
#include "operator/run_timing.hpp"

namespace kubeload::controller {
namespace {

using json_access::member;
using nlohmann::json;

std::string number(double value) {
  char text[32];
  if (std::floor(value) == value && std::fabs(value) < 1e15) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%g", value);
  }
  return text;
}

std::string above(const std::string& what, const std::string& value, const std::string& ceiling,
                  const char* flag) {
  return what + ": " + value + " is above the operator's ceiling of " + ceiling + " (" + flag + ")";
}

std::optional<std::string> ceiling_refusal(const LoadTestSpec& spec, const OperatorConfig& config) {
  const LoadSpec& load = spec.load;
  if (config.max_workers && spec.workers > *config.max_workers) {
    return above("spec.workers", std::to_string(spec.workers), std::to_string(*config.max_workers),
                 "--max-workers");
  }
  if (config.max_rate) {
    const std::string ceiling = number(*config.max_rate);
    if (load.rate && *load.rate > *config.max_rate) {
      return above("spec.load.rate", number(*load.rate) + " requests/s", ceiling, "--max-rate");
    }
    for (size_t i = 0; i < load.stages.size(); ++i) {
      const auto& rate = load.stages[i].rate;
      if (rate && *rate > *config.max_rate) {
        return above("spec.load.stages[" + std::to_string(i) + "].rate",
                     number(*rate) + " requests/s", ceiling, "--max-rate");
      }
    }
  }
  if (config.max_connections) {
    const std::string ceiling = std::to_string(*config.max_connections);
    if (load.connections && *load.connections > *config.max_connections) {
      return above("spec.load.connections", std::to_string(*load.connections), ceiling,
                   "--max-connections");
    }
    if (load.max_connections && *load.max_connections > *config.max_connections) {
      return above("spec.load.maxConnections", std::to_string(*load.max_connections), ceiling,
                   "--max-connections");
    }
    for (size_t i = 0; i < load.stages.size(); ++i) {
      const auto& connections = load.stages[i].connections;
      if (connections && *connections > *config.max_connections) {
        return above("spec.load.stages[" + std::to_string(i) + "].connections",
                     std::to_string(*connections), ceiling, "--max-connections");
      }
    }
  }
  if (config.max_duration) {
    // A run bounded by time lasts its warm-up and its duration (or stages); one
    // bounded by requests lasts at most its run bound (spec.timeouts.run).
    // (With requests as well, the admission policy reckons it by its run
    // bound too: the two agree.)
    const auto planned = load.requests ? std::nullopt : planned_length(load);
    std::chrono::nanoseconds length{0};
    std::string field;
    if (planned) {
      length = *planned;
      field = load.stages.empty() ? "spec.load.duration" : "spec.load.stages";
      if (load.warmup) field += " + warmup";
    } else {
      length = run_time_bound(spec);
      field = spec.run_timeout ? "spec.timeouts.run"
                               : "spec.timeouts.run (default for a run bounded by requests)";
    }
    if (length > *config.max_duration) {
      return above(field, "a run of " + format_duration(length),
                   format_duration(*config.max_duration), "--max-duration");
    }
  }
  return std::nullopt;
}

std::optional<std::string> service_refusal(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                           const OperatorConfig& config) {
  if (!spec.service || config.allow_other_namespace_services) return std::nullopt;
  const std::string& target_namespace = spec.service->namespace_;
  const std::string& own = loadtest.metadata.namespace_;
  if (target_namespace.empty() || own.empty() || target_namespace == own) {
    return std::nullopt;
  }
  return "spec.target.service.namespace: \"" + target_namespace +
         "\" is not this LoadTest's namespace \"" + own +
         "\" (the operator loads Services of the LoadTest's own namespace only unless it runs "
         "with --allow-other-namespace-services)";
}

std::optional<std::string> image_refusal(const LoadTestSpec& spec, const OperatorConfig& config) {
  const std::string& image = spec.worker_template.image;
  if (image.empty() || image == config.loadgen_image) return std::nullopt;
  for (const std::string& allowed : config.allowed_worker_images) {
    if (image == allowed) return std::nullopt;
  }
  std::string allowed = config.loadgen_image;
  for (const std::string& other : config.allowed_worker_images) allowed += ", " + other;
  return "spec.workerTemplate.image: \"" + image +
         "\" is not an allowed worker image (the operator's --loadgen-image and "
         "--allowed-worker-images allow: " +
         allowed + ")";
}

bool is_control_plane_key(const std::string& key) {
  for (const char* control_plane : kControlPlaneKeys) {
    if (key == control_plane) return true;
  }
  return false;
}

// A node selector requirement (matchExpressions entry) that admits
// control-plane nodes by their label: In, Exists, or anything but NotIn and
// DoesNotExist on a control-plane key. Searched everywhere in `node`.
std::optional<std::string> control_plane_expression(const json& node) {
  if (node.is_object()) {
    const json& key = member(node, "key");
    if (key.is_string() && is_control_plane_key(key.get<std::string>()) &&
        node.contains("operator")) {
      const std::string op = member(node, "operator").is_string()
                                 ? member(node, "operator").get<std::string>()
                                 : std::string{};
      if (op != "NotIn" && op != "DoesNotExist") return key.get<std::string>();
    }
    for (const auto& [name, value] : node.items()) {
      if (auto found = control_plane_expression(value)) return found;
    }
  } else if (node.is_array()) {
    for (const json& value : node) {
      if (auto found = control_plane_expression(value)) return found;
    }
  }
  return std::nullopt;
}

bool set(const json& value) {
  return !value.is_null() && !((value.is_object() || value.is_array()) && value.empty());
}

std::optional<std::string> scheduling_refusal(const json& worker_template,
                                              const OperatorConfig& config) {
  if (!worker_template.is_object()) return std::nullopt;
  for (const char* key : {"nodeSelector", "tolerations", "affinity"}) {
    if (!set(member(worker_template, key)) || config.worker_scheduling_overrides.count(key) != 0) {
      continue;
    }
    std::string allowed;
    for (const std::string& name : config.worker_scheduling_overrides) {
      allowed += (allowed.empty() ? "" : ", ") + name;
    }
    return std::string("spec.workerTemplate.") + key +
           ": the operator does not let LoadTests set it (--worker-scheduling-overrides allows: " +
           (allowed.empty() ? "none" : allowed) + ")";
  }
  if (config.allow_control_plane_workers) return std::nullopt;
  const std::string rule =
      " (workers never run on control-plane nodes unless the operator runs "
      "with --allow-control-plane-workers)";
  const json& selector = member(worker_template, "nodeSelector");
  if (selector.is_object()) {
    for (const auto& [key, value] : selector.items()) {
      if (is_control_plane_key(key)) {
        return "spec.workerTemplate.nodeSelector: selects control-plane nodes (" + key + ")" + rule;
      }
    }
  }
  const json& tolerations = member(worker_template, "tolerations");
  if (tolerations.is_array()) {
    for (size_t i = 0; i < tolerations.size(); ++i) {
      const json& key = member(tolerations[i], "key");
      const std::string at = "spec.workerTemplate.tolerations[" + std::to_string(i) + "]";
      if (!key.is_string() || key.get<std::string>().empty()) {
        // An empty key with operator Exists tolerates every taint.
        if (member(tolerations[i], "operator") == json("Exists")) {
          return at + ": tolerates every taint, the control plane's among them" + rule;
        }
      } else if (is_control_plane_key(key.get<std::string>())) {
        return at + ": tolerates the control-plane taint " + key.get<std::string>() + rule;
      }
    }
  }
  if (const auto key = control_plane_expression(member(worker_template, "affinity"))) {
    return "spec.workerTemplate.affinity: selects control-plane nodes (" + *key + ")" + rule;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> policy_refusal(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                          const OperatorConfig& config) {
  if (auto refused = ceiling_refusal(spec, config)) return refused;
  if (auto refused = service_refusal(loadtest, spec, config)) return refused;
  if (auto refused = image_refusal(spec, config)) return refused;
  return scheduling_refusal(member(loadtest.spec, "workerTemplate"), config);
}

}  // namespace kubeload::controller
