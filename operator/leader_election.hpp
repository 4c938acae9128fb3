#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, so that only one of
// several operator replicas reconciles: acquire when the lease is free or its
// holder stopped renewing, renew while leading, and step down when a renewal
// fails for longer than the lease lasts; on a clean stop, release it.

#include <atomic>
#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

#include "operator/kube/client.hpp"
#include "operator/log.hpp"

namespace kubeload::controller {

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

  bool leading() const { return leading_.load(); }

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
  std::chrono::steady_clock::time_point last_renewal_{};
  std::jthread thread_;
};

}  // namespace kubeload::controller
