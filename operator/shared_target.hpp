#pragma once
// Whether other runs loaded a run's target pods while it ran (issue 29):
// three LoadTests against one nginx each measure the others' load as their
// own. A run records where its load goes when its workers are created
// (status.target.addresses: the target Service's cluster IPs and endpoints,
// a pod's or the url's address, the Service's DNS name), so another name,
// another namespace or another Service in front of the same pods still
// meets it; when it ends, the other LoadTests of the operator's watch cache
// whose windows met its window and whose addresses meet its addresses are
// its status.target.sharedWith, and the TargetShared condition says so.
// Informational: it changes neither the verdict nor Ready.
//
// Everything here is pure; the controller reads the cache
// (other_run_view) and plan() decides (plan_shared_target).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/status.hpp"
#include "kubeload/spec.hpp"
#include "operator/target_destinations.hpp"
#include "operator/timestamp.hpp"

namespace kubeload::controller {

inline constexpr std::string_view kTargetSharedCondition =
    api::to_string(api::ConditionType::TargetShared);

// The most addresses a run records, in order: a Service of more endpoints
// records the first ones, which another run of the same pods records too.
inline constexpr std::size_t kMaxTargetAddresses = 100;

// The most runs status.target.sharedWith lists (the first, by namespace and
// name) and the TargetShared message names before "and N more": a status
// stays bounded whatever runs at once.
inline constexpr std::size_t kMaxSharedRuns = 50;
inline constexpr std::size_t kSharedRunsNamed = 5;

// Where the run's load goes, each address once, sorted, at most
// kMaxTargetAddresses: the cluster IPs and endpoint addresses of the target
// Service as observe() read it (`service`), the Service's DNS name
// (name.ns.svc), the address of a pod named by its DNS name
// (10-244-0-5.ns.pod) or of an IP literal url, else the url's host name.
// Empty for a spec without a target.
std::vector<std::string> target_addresses(const LoadTestSpec& spec,
                                          const std::optional<TargetServiceView>& service,
                                          std::string_view own_namespace,
                                          std::string_view cluster_domain);

// Another LoadTest, as the operator's LoadTest watch cache holds it.
struct OtherRun {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::optional<Timestamp> start;       // status.startTime; unset: it sent no load yet
  std::optional<Timestamp> completion;  // status.completionTime; unset: still running
  std::vector<std::string> addresses;   // status.target.addresses
  bool operator==(const OtherRun&) const = default;
};
OtherRun other_run_view(const nlohmann::json& loadtest);

// The runs of `others` that loaded any of `addresses` within [start, end]:
// not the run of `uid` itself, started, their own window (to now while
// running) meeting this one, the edges included (the times keep whole
// seconds, so a run that started in the second another ended counts). Each
// once, by namespace and name.
std::vector<api::SharedRun> shared_runs(const std::string& uid, Timestamp start, Timestamp end,
                                        const std::vector<std::string>& addresses,
                                        const std::vector<OtherRun>& others);

// A run that loaded its target and has not decided yet whether it shared
// it: lookups_for() reads the other runs for it once it is final (or all
// its results are in).
bool shared_target_undecided(const api::LoadTestStatus& status);

// For plan(): sets status.target's addresses (`recorded` in the pass that
// creates the workers, else the stored ones) and, once the status is final,
// its sharedWith and the TargetShared condition (True, reason TargetShared,
// naming the runs; False, TargetNotShared), decided once from `others` and
// kept. Returns true when the decision is due but `others` was not read in
// this pass (the status turned final in it): look again.
bool plan_shared_target(const api::LoadTestStatus& current, api::LoadTestStatus& status,
                        const std::string& uid,
                        const std::optional<std::vector<std::string>>& recorded,
                        const std::optional<std::vector<OtherRun>>& others, Timestamp now);

}  // namespace kubeload::controller
