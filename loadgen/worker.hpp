#pragma once
// One Worker per thread: it owns an io_context, its connections (allocated
// once), the phase schedule and the results of its share of the load. Nothing
// on the hot path is shared with other threads; the controller reads a
// snapshot that the worker refreshes on its tick.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kubeload/result.hpp"
#include "loadgen/asio.hpp"
#include "loadgen/connection.hpp"
#include "loadgen/plan.hpp"
#include "loadgen/request_slot.hpp"

namespace kubeload::loadgen {

// Live numbers for progress and Prometheus, copied out on the worker's tick.
struct LiveSnapshot {
  struct PerRequest {
    uint64_t requests = 0;
    std::map<int, uint64_t> status_codes;
    ErrorCounts errors;
    uint64_t bytes_received = 0;
    uint64_t bytes_sent = 0;
    std::vector<uint64_t> latency_buckets;  // cumulative counts at LiveSnapshot bucket bounds
    double latency_sum_seconds = 0;
    uint64_t latency_count = 0;  // all latencies, the +Inf bucket included
  };
  std::vector<PerRequest> requests;  // by RunPlan::requests index, counted phases only
  uint64_t warmup_requests = 0;
  uint64_t connections_open = 0;
  uint64_t in_flight = 0;
  uint64_t late = 0;
  uint64_t dropped = 0;
  int stage = -1;              // -1 during warm-up
  double counted_seconds = 0;  // time spent in counted stages so far (warm-up excluded)
  double target_rate = 0;
  bool done = false;
};

// Upper bounds (seconds) of the Prometheus latency histogram buckets.
const std::vector<double>& live_latency_bounds();

struct FirstResponse {
  std::string server;  // the Server header
  uint64_t body_length = 0;
  bool seen = false;
};

class Worker {
 public:
  // `plan` is this worker's share (split_plan). `stop` is set by the
  // controller on SIGINT/SIGTERM. `live_metrics`: also compute latency buckets.
  Worker(const RunPlan& plan, std::vector<tcp::endpoint> endpoints, asio::ssl::context* tls,
         const std::atomic<bool>& stop, bool live_metrics);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker();

  // Runs the whole plan on the calling thread; returns when every request has
  // completed (or timed out) and every connection is closed.
  void run(Clock::time_point start);

  RunResult result() const;  // after run()
  LiveSnapshot snapshot() const;
  FirstResponse first_response() const;

  // For connections.
  const RunPlan& plan() const noexcept { return plan_; }
  const std::vector<tcp::endpoint>& endpoints() const noexcept { return endpoints_; }
  asio::ssl::context* tls() const noexcept { return tls_; }
  void on_complete(Connection& connection, const RequestSlot& slot, const Completion& done);
  void on_first_response(std::string server, uint64_t body_length);
  bool first_response_needed() const noexcept { return !first_response_seen_; }
  void on_connection_opened() noexcept { ++connections_open_; }
  void on_connection_closed() noexcept { --connections_open_; }

 private:
  const Phase& phase() const noexcept { return plan_.phases[phase_index_]; }
  void begin_phase(size_t index, Clock::time_point now);
  void advance_phases(Clock::time_point now);
  bool take_slot(uint32_t connection_index, Clock::time_point intended, RequestSlot& out);
  uint32_t pick_request() noexcept;
  void dispatch_closed(Connection& connection);
  void wake_idle_connections();
  void schedule_open();
  void on_open_timer();
  void send_open(const RequestSlot& slot);
  void start_open(Connection& connection, const RequestSlot& slot);
  void arm_tick();
  void on_tick();
  void begin_stopping();
  void finish_if_drained();
  void publish_snapshot(bool with_latency);
  void record(const RequestSlot& slot, const Completion& done);

  RunPlan plan_;
  std::vector<tcp::endpoint> endpoints_;
  asio::ssl::context* tls_;
  const std::atomic<bool>& stop_;
  bool live_metrics_;

  asio::io_context io_{1};
  asio::steady_timer tick_timer_{io_};
  asio::steady_timer open_timer_{io_};
  std::vector<std::unique_ptr<Connection>> connections_;

  // Phase state.
  size_t phase_index_ = 0;
  Clock::time_point phase_started_{};
  Clock::time_point phase_ends_{Clock::time_point::max()};
  uint64_t phase_issued_ = 0;
  uint64_t counted_issued_ = 0;
  bool stopping_ = false;
  bool finished_ = false;
  bool interrupted_ = false;
  bool wake_pending_ = false;
  uint64_t ticks_ = 0;

  // Weighted request mix (smooth weighted round robin).
  std::vector<int64_t> mix_current_;
  int64_t mix_total_ = 0;

  // Open model.
  Clock::time_point next_intended_{};
  std::vector<uint32_t> idle_;        // indices of idle open connections
  std::vector<RequestSlot> pending_;  // ring of requests waiting for a free connection
  uint64_t open_connections_used_ = 0;
  size_t pending_head_ = 0;
  size_t pending_size_ = 0;

  // Results.
  uint64_t in_flight_ = 0;
  uint64_t connections_open_ = 0;
  uint64_t warmup_requests_ = 0;
  std::vector<Result> stage_results_;
  std::vector<Clock::time_point> stage_started_;
  std::vector<Clock::time_point> stage_ended_;
  std::vector<Result> request_results_;  // only with more than one request

  bool first_response_seen_ = false;
  mutable std::mutex snapshot_mutex_;
  LiveSnapshot snapshot_;
  FirstResponse first_response_;
};

}  // namespace kubeload::loadgen
