#include "operator/run_policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kubeload/duration.hpp"
#include "operator/run_timing.hpp"

namespace kubeload::controller {
namespace {

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

std::optional<std::string> scheduling_refusal(const WorkerTemplate& worker_template,
                                              const OperatorConfig& config) {
  const std::pair<const char*, bool> fields[] = {
      {"nodeSelector", !worker_template.node_selector.empty()},
      {"tolerations", !worker_template.tolerations.empty()},
      {"affinity", worker_template.affinity_set}};
  for (const auto& [key, set] : fields) {
    if (!set || config.worker_scheduling_overrides.count(key) != 0) continue;
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
  for (const auto& [key, value] : worker_template.node_selector) {
    if (is_control_plane_key(key)) {
      return "spec.workerTemplate.nodeSelector: selects control-plane nodes (" + key + ")" + rule;
    }
  }
  for (size_t i = 0; i < worker_template.tolerations.size(); ++i) {
    const SchedulingTerm& toleration = worker_template.tolerations[i];
    const std::string at = "spec.workerTemplate.tolerations[" + std::to_string(i) + "]";
    if (toleration.key.empty()) {
      // An empty key with operator Exists tolerates every taint.
      if (toleration.op == "Exists") {
        return at + ": tolerates every taint, the control plane's among them" + rule;
      }
    } else if (is_control_plane_key(toleration.key)) {
      return at + ": tolerates the control-plane taint " + toleration.key + rule;
    }
  }
  // A requirement that admits control-plane nodes by their label: In,
  // Exists, or anything but NotIn and DoesNotExist on a control-plane key.
  for (const SchedulingTerm& requirement : worker_template.affinity_requirements) {
    if (is_control_plane_key(requirement.key) && requirement.op != "NotIn" &&
        requirement.op != "DoesNotExist") {
      return "spec.workerTemplate.affinity: selects control-plane nodes (" + requirement.key + ")" +
             rule;
    }
  }
  return std::nullopt;
}

std::optional<std::string> history_refusal(const HistorySpec& history,
                                           const HistoryPolicy& policy) {
  if (history.keep && *history.keep > policy.max_keep) {
    return above("spec.history.keep", std::to_string(*history.keep),
                 std::to_string(policy.max_keep), "--history-max-keep");
  }
  if (history.max_age && policy.max_age_limit && *history.max_age > *policy.max_age_limit) {
    return above("spec.history.maxAge", format_duration(*history.max_age),
                 format_duration(*policy.max_age_limit), "--history-max-age-limit");
  }
  return std::nullopt;
}

}  // namespace

HistoryLimits history_limits(const HistorySpec& history, const HistoryPolicy& policy) {
  HistoryLimits limits;
  limits.keep = std::min(history.keep.value_or(policy.keep), policy.max_keep);
  limits.max_age = history.max_age ? history.max_age : policy.max_age;
  if (limits.max_age && policy.max_age_limit) {
    limits.max_age = std::min(*limits.max_age, *policy.max_age_limit);
  }
  return limits;
}

std::optional<std::string> policy_refusal(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                          const OperatorConfig& config,
                                          const std::optional<TargetServiceView>& target) {
  if (auto refused = ceiling_refusal(spec, config)) return refused;
  if (auto refused = target_refusal(loadtest, spec, target, config)) return refused;
  if (auto refused = image_refusal(spec, config)) return refused;
  if (auto refused =
          history_refusal(spec.history, config.history_policy(loadtest.metadata.namespace_))) {
    return refused;
  }
  return scheduling_refusal(spec.worker_template, config);
}

}  // namespace kubeload::controller
