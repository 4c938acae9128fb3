#pragma once
// `loadgen worker`: the pod side of a distributed run. The worker takes its
// share of a LoadTest (index i of n), serves its state over HTTP and runs when
// the operator says so, so that all workers start together:
//   GET  /healthz, /readyz   200 once the worker can run
//   POST /start[?at=UNIX_MS] starts the run (at that wall-clock time, if given)
//   GET  /result             the result document: partial while running, final after
//   POST /finish             the final result is safely stored: the worker may exit
//   GET  /metrics            live Prometheus metrics
// After the run it writes a compact summary to the termination log and stays
// up until the operator acknowledged the final result (or a bounded wait ends),
// so an operator restarted mid-collection can still fetch it.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "kubeload/spec.hpp"

namespace kubeload::loadgen {

struct WorkerConfig {
  std::string listen = "0.0.0.0:8080";
  LoadTestSpec spec;
  std::string target_url;  // the resolved target (url, or the Service's URL)
  uint32_t index = 0;      // this worker's index
  uint32_t count = 1;      // how many workers share the load
  uint32_t threads = 1;
  std::string ca_file;  // --cacert: spec.target.tls.caFrom as mounted by the operator
  std::string termination_log = "/dev/termination-log";
  std::chrono::seconds linger{300};  // how long to wait for POST /finish after the run
  // The LoadTest's metadata.uid, served in /result as loadTestUid so the
  // operator merges only its own run's documents.
  std::string loadtest_uid;
};

// Returns the process exit status: 0 after a complete run, 1 when a stop
// signal cut the run short or came before the start. Throws std::runtime_error when it cannot
// listen or the target is invalid.
int run_worker(const WorkerConfig& config, const std::atomic<bool>& stop);

}  // namespace kubeload::loadgen
