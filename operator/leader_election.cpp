#include "operator/leader_election.hpp"

#include "operator/timestamp.hpp"

namespace kubeload::controller {
namespace {

// MicroTime, as Lease's acquireTime/renewTime serialize.
std::string micro_time(std::chrono::system_clock::time_point t) {
  std::string text = format_time(t);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count() % 1000000;
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%06lldZ", static_cast<long long>(micros));
  if (!text.empty() && text.back() == 'Z') text.pop_back();
  return text + fraction;
}

}  // namespace

LeaseObservation observe_lease(const std::optional<LeaseObservation>& previous,
                               const std::string& record,
                               std::chrono::steady_clock::time_point now) {
  if (previous && previous->record == record) return *previous;
  return {record, now};
}

LeaseVerdict decide_lease(const std::string& holder, const LeaseObservation& observed,
                          std::chrono::seconds lease_duration, const std::string& identity,
                          std::chrono::steady_clock::time_point now) {
  if (holder == identity) return LeaseVerdict::kRenew;
  if (!holder.empty() && now < observed.observed_at + lease_duration) {
    return LeaseVerdict::kHeldByOther;
  }
  return LeaseVerdict::kAcquire;
}

bool may_still_lead(std::optional<std::chrono::steady_clock::time_point> last_renewal,
                    std::chrono::milliseconds renew_deadline,
                    std::chrono::steady_clock::time_point now) {
  return last_renewal && now - *last_renewal < renew_deadline;
}

bool LeaderElector::leading() const {
  if (!leading_.load()) return false;
  const auto ticks = last_renewal_.load();
  if (ticks == 0) return false;
  return may_still_lead(
      std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(ticks)),
      renew_deadline(), std::chrono::steady_clock::now());
}

LeaderElector::LeaderElector(kube::Client& client, LeaseOptions options, Logger& log)
    : client_(client), options_(std::move(options)), log_(log) {
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

LeaderElector::~LeaderElector() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void LeaderElector::run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    // The renewal counts from before the call: the Lease says renewTime is
    // now, and the call may take long to return.
    const auto attempt_started = std::chrono::steady_clock::now();
    LeaseAttempt attempt = LeaseAttempt::kFailed;
    try {
      attempt = try_acquire_or_renew();
    } catch (const std::exception& e) {
      log_.warn("lease renewal failed", {{"error", e.what()}});
    }
    if (attempt == LeaseAttempt::kHeld) {
      last_renewal_.store(attempt_started.time_since_epoch().count());
      if (!leading_.exchange(true)) log_.info("became leader", {{"identity", options_.identity}});
    } else if (leading_.load() && (attempt == LeaseAttempt::kHeldByOther || !leading())) {
      // Step down before the lease can run out under another replica: two
      // leaders would both start workers for the same LoadTest.
      leading_.store(false);
      log_.warn("lost leadership", {{"identity", options_.identity}});
    }
    for (auto waited = std::chrono::milliseconds(0);
         waited < options_.retry && !stop.stop_requested();
         waited += std::chrono::milliseconds(100)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  if (leading_.exchange(false)) release();
}

// Stepping down on a clean stop lets another replica take over at once
// instead of waiting for the lease to run out (client-go's ReleaseOnCancel).
void LeaderElector::release() {
  try {
    const kube::ResourceRef leases = kube::resources::leases(options_.namespace_);
    kube::Response current = client_.get(leases, options_.name);
    if (!current.ok()) return;
    nlohmann::json lease = current.body;
    nlohmann::json& spec = lease["spec"];
    if (spec.value("holderIdentity", "") != options_.identity) return;
    const std::string now = micro_time(std::chrono::system_clock::now());
    spec["holderIdentity"] = "";
    spec["leaseDurationSeconds"] = 1;
    spec["acquireTime"] = now;
    spec["renewTime"] = now;
    if (client_.replace(leases, options_.name, lease).ok()) {
      log_.info("released leadership", {{"identity", options_.identity}});
    }
  } catch (const std::exception& e) {
    log_.warn("releasing the lease failed", {{"error", e.what()}});
  }
}

LeaderElector::LeaseAttempt LeaderElector::try_acquire_or_renew() {
  const kube::ResourceRef leases = kube::resources::leases(options_.namespace_);
  const auto now = std::chrono::system_clock::now();
  kube::Response current = client_.get(leases, options_.name);
  if (current.is_not_found()) {
    nlohmann::json lease = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", options_.name}, {"namespace", options_.namespace_}}},
        {"spec",
         {{"holderIdentity", options_.identity},
          {"leaseDurationSeconds", options_.duration.count()},
          {"acquireTime", micro_time(now)},
          {"renewTime", micro_time(now)},
          {"leaseTransitions", 0}}}};
    return client_.create(leases, lease).ok() ? LeaseAttempt::kHeld : LeaseAttempt::kFailed;
  }
  if (!current.ok()) return LeaseAttempt::kFailed;
  nlohmann::json lease = current.body;
  nlohmann::json& spec = lease["spec"];
  // The record is the spec as the holder wrote it: any renewal changes it.
  const auto seen_at = std::chrono::steady_clock::now();
  observed_ = observe_lease(observed_, spec.dump(), seen_at);
  const nlohmann::json& duration = spec["leaseDurationSeconds"];
  const LeaseVerdict verdict = decide_lease(
      spec.value("holderIdentity", ""), *observed_,
      std::chrono::seconds(duration.is_number_integer() ? duration.get<int64_t>() : 15),
      options_.identity, seen_at);
  if (verdict == LeaseVerdict::kHeldByOther) return LeaseAttempt::kHeldByOther;
  if (verdict == LeaseVerdict::kAcquire) {
    spec["holderIdentity"] = options_.identity;
    spec["acquireTime"] = micro_time(now);
    spec["leaseTransitions"] = spec.value("leaseTransitions", 0) + 1;
  }
  spec["leaseDurationSeconds"] = options_.duration.count();
  spec["renewTime"] = micro_time(now);
  // A PUT carrying the resourceVersion just read: two replicas racing for a
  // free lease cannot both win.
  return client_.replace(leases, options_.name, lease).ok() ? LeaseAttempt::kHeld
                                                            : LeaseAttempt::kFailed;
}

}  // namespace kubeload::controller
