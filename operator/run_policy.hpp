#pragma once
// The admin's rules for what one LoadTest may ask of the cluster: ceilings on
// workers, rate, connections and length, where its target leads (the
// namespace rule, the endpoints behind a Service: target_destinations.hpp),
// the worker images it may name, and which scheduling overrides it may
// set (never onto control-plane nodes unless the admin says so). Pure: plan()
// asks before it creates anything, and a refusal is the run's status.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/spec.hpp"
#include "operator/config.hpp"
#include "operator/target_destinations.hpp"
#include "operator/test_history.hpp"

namespace kubeload::controller {

// The node label and taint keys of control-plane nodes.
inline constexpr const char* kControlPlaneKeys[] = {"node-role.kubernetes.io/control-plane",
                                                    "node-role.kubernetes.io/master"};

// Why `loadtest` (as the API returns it; `spec` its parse) may not run under
// `config`, naming the field, its value, the rule and the flag that sets it;
// nullopt when it may. `target`: the target Service as observe() read it.
std::optional<std::string> policy_refusal(
    const api::LoadTest& loadtest, const LoadTestSpec& spec, const OperatorConfig& config,
    const std::optional<TargetServiceView>& target = std::nullopt);

// What is kept of a test's records: spec.history within the namespace's
// policy (a spec asking beyond it is refused by policy_refusal before the
// run; an older record's run, or a policy lowered since, is held to it here).
HistoryLimits history_limits(const HistorySpec& history, const HistoryPolicy& policy);

}  // namespace kubeload::controller
