#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, so that only one of
// several operator replicas reconciles: acquire when the lease is free or its
// holder stopped renewing, renew while leading, and step down when a renewal
// fails for longer than the lease lasts; on a clean stop, release it.

#include <atomic>
#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "operator/kube/client.hpp"
#include "operator/log.hpp"
#include "operator/views.hpp"

namespace kubeload::controller {

// The elector's decisions, pure so that they have table tests.
enum class LeaseVerdict { kAcquire, kRenew, kHeldByOther };

// The Lease's record (holder, renewTime, duration, transitions) as this
// replica last saw it, and when, by this replica's own steady clock. As
// client-go does, a lease expires when its record has not changed for a
// lease duration *as observed here*: another replica's renewTime is read by
// another machine's clock, and one running 15 s behind (or ahead) must
// neither lose a live lease nor keep a dead one.
struct LeaseObservation {
  std::string record;
  std::chrono::steady_clock::time_point observed_at;
};
// The observation after reading `record` at `now`: the earlier one while the
// record is unchanged, else a new one from `now`.
LeaseObservation observe_lease(const std::optional<LeaseObservation>& previous,
                               const std::string& record,
                               std::chrono::steady_clock::time_point now);
// What to do with the Lease as read: renew our own, take a free one or one
// whose record stood still for its duration, or leave another holder's alone.
LeaseVerdict decide_lease(const std::string& holder, const LeaseObservation& observed,
                          std::chrono::seconds lease_duration, const std::string& identity,
                          std::chrono::steady_clock::time_point now);
// Whether a leader may still act: only while its last renewal is younger
// than the renew deadline (two thirds of the lease), so it stops before
// another replica can take the lease, even when the renewal call itself
// hangs.
bool may_still_lead(std::optional<std::chrono::steady_clock::time_point> last_renewal,
                    std::chrono::milliseconds renew_deadline,
                    std::chrono::steady_clock::time_point now);

struct LeaseOptions {
  std::string namespace_;
  std::string name = "kubeload-operator";
  std::string identity;  // this replica (hostname + pid)
  std::chrono::seconds duration{15};
  std::chrono::seconds retry{2};
};

class LeaderElector {
 public:
  LeaderElector(kube::Client& client, LeaseOptions options, Logger& log);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Asked before every write of a reconcile (Reconciler's MayActFn).
  bool leading() const;

 private:
  void run(std::stop_token stop);
  enum class LeaseAttempt { kHeld, kHeldByOther, kFailed };
  LeaseAttempt try_acquire_or_renew();
  // client-go's renewDeadline: two thirds of the lease.
  std::chrono::milliseconds renew_deadline() const { return options_.duration * 2000 / 3; }
  void release();

  kube::Client& client_;
  const LeaseOptions options_;
  Logger& log_;
  std::atomic<bool> leading_{false};
  // Of the last successful renewal, in steady_clock ticks (0: none).
  std::atomic<std::chrono::steady_clock::rep> last_renewal_{0};
  // The Lease as last read (only the election thread touches it).
  std::optional<LeaseObservation> observed_;
  std::jthread thread_;
};

}  // namespace kubeload::controller
