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
// What to do with the Lease as read: renew our own, take a free or expired
// one, or leave another holder's alone.
LeaseVerdict decide_lease(const std::string& holder, std::optional<Timestamp> renewed,
                          std::chrono::seconds lease_duration, const std::string& identity,
                          Timestamp now);
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
  std::jthread thread_;
};

}  // namespace kubeload::controller
