#include "operator/shared_target.hpp"

#include <algorithm>
#include <set>
#include <variant>

#include "kubeload/json_access.hpp"
#include "kubeload/target_policy.hpp"
#include "kubeload/text.hpp"
#include "kubeload/url.hpp"
#include "operator/conditions.hpp"

namespace kubeload::controller {
namespace {

using api::ConditionStatus;
using api::ConditionType;
using api::Reason;
using json_access::member;
using json_access::text;

// An address as one spelling: an IP literal as IpAddress writes it (so
// "::ffff:a.b.c.d", "[fd00::1]" and a pod's DNS form meet), a host name in
// lower case without the root's dot.
std::string normalized(std::string_view host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (const auto ip = IpAddress::parse(host)) return ip->to_string();
  std::string name = lowercase(host);
  if (!name.empty() && name.back() == '.') name.pop_back();
  return name;
}

// The address of a pod named by its DNS name: its first label is the
// address with '-' for each '.' (IPv4) or ':' (IPv6).
std::optional<std::string> pod_address(std::string_view host) {
  const std::string_view label = host.substr(0, host.find('.'));
  for (const char separator : {'.', ':'}) {
    std::string spelled(label);
    std::replace(spelled.begin(), spelled.end(), '-', separator);
    if (const auto ip = IpAddress::parse(spelled)) return ip->to_string();
  }
  return std::nullopt;
}

std::optional<Timestamp> time_at(const nlohmann::json& value) {
  if (!value.is_string()) return std::nullopt;
  return parse_time(value.get<std::string>());
}

// "ns/a, ns/b and ns/c", or the first kSharedRunsNamed "and N more".
std::string named(const std::vector<api::SharedRun>& runs) {
  const std::size_t shown = std::min(runs.size(), kSharedRunsNamed);
  std::string out;
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) out += i + 1 == shown && shown == runs.size() ? " and " : ", ";
    out += api::to_string(runs[i]);
  }
  if (shown < runs.size()) out += " and " + std::to_string(runs.size() - shown) + " more";
  return out;
}

}  // namespace

std::vector<std::string> target_addresses(const LoadTestSpec& spec,
                                          const std::optional<TargetServiceView>& service,
                                          std::string_view own_namespace,
                                          std::string_view cluster_domain) {
  std::set<std::string> found;
  const std::optional<ClusterHost> host = target_cluster_host(spec, own_namespace, cluster_domain);
  const bool service_found = service && service->found;
  if (service_found) {
    for (const std::string& ip : service->cluster_ips) found.insert(normalized(ip));
    for (const ServiceEndpoint& endpoint : service->endpoints) {
      found.insert(normalized(endpoint.address));
    }
  }
  if (host && host->kind == ClusterHost::Kind::Service && (host->by_form || service_found)) {
    // Its name, whatever its endpoints: two runs of a Service whose
    // endpoints could not be read still meet.
    found.insert(host->name + "." + host->namespace_ + ".svc");
  } else if (spec.url) {
    const auto parsed = parse_http_url(*spec.url);
    if (const auto* url = std::get_if<HttpUrl>(&parsed)) {
      const std::optional<std::string> pod =
          host && host->kind == ClusterHost::Kind::Pod ? pod_address(url->host) : std::nullopt;
      found.insert(pod ? *pod : normalized(url->host));
    }
  }
  found.erase("");
  std::vector<std::string> out(found.begin(), found.end());
  if (out.size() > kMaxTargetAddresses) out.resize(kMaxTargetAddresses);
  return out;
}

OtherRun other_run_view(const nlohmann::json& loadtest) {
  OtherRun run;
  const nlohmann::json& metadata = member(loadtest, "metadata");
  run.namespace_ = text(member(metadata, "namespace"));
  run.name = text(member(metadata, "name"));
  run.uid = text(member(metadata, "uid"));
  const nlohmann::json& status = member(loadtest, "status");
  run.start = time_at(member(status, "startTime"));
  run.completion = time_at(member(status, "completionTime"));
  for (const nlohmann::json& address : member(member(status, "target"), "addresses")) {
    if (address.is_string()) run.addresses.push_back(address.get<std::string>());
  }
  return run;
}

std::vector<api::SharedRun> shared_runs(const std::string& uid, Timestamp start, Timestamp end,
                                        const std::vector<std::string>& addresses,
                                        const std::vector<OtherRun>& others) {
  const std::set<std::string> ours(addresses.begin(), addresses.end());
  std::set<std::pair<std::string, std::string>> found;
  for (const OtherRun& other : others) {
    if (other.uid == uid || !other.start) continue;
    if (*other.start > end || (other.completion && *other.completion < start)) continue;
    const bool meets = std::any_of(other.addresses.begin(), other.addresses.end(),
                                   [&](const std::string& a) { return ours.contains(a); });
    if (meets) found.emplace(other.namespace_, other.name);
  }
  std::vector<api::SharedRun> out;
  for (const auto& [namespace_, name] : found) out.push_back({namespace_, name});
  return out;
}

bool shared_target_undecided(const api::LoadTestStatus& status) {
  return status.start_time && status.target && !status.target->addresses.empty() &&
         api::find_condition(status.conditions, ConditionType::TargetShared) == nullptr;
}

bool plan_shared_target(const api::LoadTestStatus& current, api::LoadTestStatus& status,
                        const std::string& uid,
                        const std::optional<std::vector<std::string>>& recorded,
                        const std::optional<std::vector<OtherRun>>& others, Timestamp now) {
  std::vector<std::string> addresses =
      recorded ? *recorded
               : (current.target ? current.target->addresses : std::vector<std::string>{});
  std::vector<api::SharedRun> shared;
  std::optional<ConditionValue> decided;
  bool look_again = false;
  if (const api::Condition* kept =
          api::find_condition(current.conditions, ConditionType::TargetShared)) {
    // Decided once, when the run ended: a run named then stays named after
    // it is deleted.
    if (current.target) shared = current.target->shared_with;
    decided = ConditionValue{kept->type, api::name(kept->status), kept->reason, kept->message};
  } else if (status.final() && status.start_time && status.completion_time && !addresses.empty()) {
    if (!others) {
      look_again = true;
    } else {
      shared = shared_runs(uid, *status.start_time, *status.completion_time, addresses, *others);
      decided =
          shared.empty()
              ? ConditionValue{std::string(kTargetSharedCondition),
                               api::name(ConditionStatus::False),
                               api::name(Reason::TargetNotShared),
                               "no other LoadTest loaded the target's addresses during this run"}
              : ConditionValue{std::string(kTargetSharedCondition),
                               api::name(ConditionStatus::True), api::name(Reason::TargetShared),
                               named(shared) +
                                   " loaded the same target during this run: its latency and "
                                   "the target's CPU and memory include their load"};
      if (shared.size() > kMaxSharedRuns) shared.resize(kMaxSharedRuns);
    }
  }
  if (decided) {
    set_condition(status.conditions, condition(*decided, status.observed_generation, current, now));
  }
  if (!addresses.empty() || !shared.empty()) {
    if (!status.target) status.target.emplace();
    status.target->addresses = std::move(addresses);
    status.target->shared_with = std::move(shared);
  }
  return look_again;
}

}  // namespace kubeload::controller
