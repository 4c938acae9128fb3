#pragma once
// One Worker per thread: it owns its event loop (its own epoll or io_uring
// loop for plain HTTP/1.1, io_uring for h2c, as the plan's engine says; an
// io_context over TLS and for h2c off io_uring), its connections (allocated
// once), the phase schedule and the results of its share of the load. Nothing
// on the hot path is shared with other threads; the controller reads a
// snapshot that the worker refreshes on its tick.

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kubeload/result.hpp"
#include "loadgen/engine/asio.hpp"
#include "loadgen/engine/connection.hpp"
#include "loadgen/engine/connection_owner.hpp"
#include "loadgen/engine/event_loop.hpp"
#include "loadgen/engine/h2_session.hpp"
#include "loadgen/engine/handler_memory.hpp"
#include "loadgen/engine/plan.hpp"
#include "loadgen/engine/request_slot.hpp"
#include "loadgen/engine/uring_loop.hpp"
#include "loadgen/engine/virtual_user.hpp"

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
  // Scenarios: iterations by scenario (ScenarioPlan::scenarios index).
  struct PerScenario {
    uint64_t iterations = 0;
    uint64_t failed = 0;
    std::vector<uint64_t> duration_buckets;  // cumulative, at the latency bounds
    double duration_sum_seconds = 0;
    uint64_t duration_count = 0;
  };
  std::vector<PerScenario> scenarios;
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

// A request budget shared by the threads of one process (closed model). Each
// thread claims a small block at a time (budget_block), so the connections of
// all threads send the budget together until its end, with no lock and no
// atomic operation per request.
class SharedBudget {
 public:
  SharedBudget(uint64_t limit, uint64_t block) noexcept;
  // How many requests the caller may send: up to one block, 0 once spent.
  uint64_t claim() noexcept;
  bool spent() const noexcept { return claimed_.load(std::memory_order_relaxed) >= limit_; }

 private:
  const uint64_t limit_;
  const uint64_t block_;
  std::atomic<uint64_t> claimed_{0};
};

// The budgets of a process's phases: the warm-up's own, and one -n shared by
// all counted phases. Made once per process, before the threads start.
class SharedBudgets {
 public:
  SharedBudgets(const RunPlan& plan, uint32_t threads);
  SharedBudget* of_phase(size_t index) const noexcept { return by_phase_[index]; }

 private:
  std::vector<std::unique_ptr<SharedBudget>> budgets_;
  std::vector<SharedBudget*> by_phase_;  // null: the phase has no request budget
};

struct FirstResponse {
  std::string server;  // the Server header
  uint64_t body_length = 0;
  bool seen = false;
};

class Worker final : public ConnectionOwner {
 public:
  // `plan` is this thread's share (split_plan_for_thread). `stop` is set by
  // the controller on SIGINT/SIGTERM. `live_metrics`: also compute latency
  // buckets. `budgets`: the request budgets shared with the process's other
  // threads (closed model); null: the worker has the plan's budgets to itself.
  Worker(const RunPlan& plan, std::vector<tcp::endpoint> endpoints, asio::ssl::context* tls,
         const std::atomic<bool>& stop, bool live_metrics,
         std::shared_ptr<SharedBudgets> budgets = nullptr);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker();

  // Runs the whole plan on the calling thread; returns when every request has
  // completed (or timed out, or was dropped) and every connection is closed.
  void run(Clock::time_point start);

  RunResult result() const;  // after run()
  // On io_uring: 0 when the ring's sockets are registered files, else the
  // errno with which the kernel refused the table (they are ordinary
  // descriptors then). 0 on the other engines.
  int registered_files_error() const noexcept {
    return uring_ && !uring_->registered_files() ? uring_->registered_files_error() : 0;
  }
  LiveSnapshot snapshot() const;
  FirstResponse first_response() const;

  // For connections.
  const RunPlan& plan() const noexcept override { return plan_; }
  const std::vector<tcp::endpoint>& endpoints() const noexcept override { return endpoints_; }
  asio::ssl::context* tls() const noexcept override { return tls_; }
  // Plain HTTP/1.1: the worker's own event loop; null over TLS and HTTP/2,
  // whose connections run on the io_context.
  EventLoop* event_loop() const noexcept override { return loop_.get(); }
  UringLoop* uring_loop() const noexcept override { return uring_.get(); }
  void on_complete(Connection& connection, const RequestSlot& slot,
                   const Completion& done) override;
  void on_first_response(std::string server, uint64_t body_length) override;
  bool first_response_needed() const noexcept override { return !first_response_seen_; }
  void on_connection_opened() noexcept override { ++connections_open_; }
  void on_connection_closed() noexcept override { --connections_open_; }
  bool kernel_tls_allowed() const noexcept override { return kernel_tls_allowed_; }
  void refuse_kernel_tls() noexcept override { kernel_tls_allowed_ = false; }

 private:
  const Phase& phase() const noexcept { return plan_.phases[phase_index_]; }
  void begin_phase(size_t index, Clock::time_point at);
  // Closed model: moves on when the phase's time is up or its budget spent.
  void advance_phases(Clock::time_point now);
  // Ends the phase that ended at `ended`: the next one begins there, or the
  // run stops.
  void end_phase(Clock::time_point ended, bool by_time);
  RequestSlot take_slot(Clock::time_point intended) noexcept;
  bool claim_permit() noexcept;
  uint32_t pick_request() noexcept;
  void dispatch_closed(Connection& connection, Clock::time_point now);
  void wake_idle_connections();
  uint64_t arrival_index(uint64_t turn) const noexcept;
  void schedule_open();
  void on_open_timer();
  void send_open(const RequestSlot& slot, Clock::time_point now);
  void start_open(Connection& connection, const RequestSlot& slot, Clock::time_point now);
  bool start_next_pending(Connection& connection, Clock::time_point now);
  void expire_pending(Clock::time_point now);
  void drop_all_pending(Clock::time_point now);
  void drop(const RequestSlot& slot, Clock::time_point now);
  // The tick, the open model's next arrival and the next virtual user to
  // wake (scenarios), on whichever loop runs.
  enum Alarm : std::size_t { tick_alarm, open_alarm, wake_alarm };
  void set_alarm(Alarm alarm, Clock::time_point at);
  void cancel_alarm(Alarm alarm);
  void on_alarm(Alarm alarm);
  void arm_tick();
  void on_tick();
  // `ended`: where the counted time ends (the planned end, or the interrupt);
  // `by_time`: false when the run ended by count, whose time runs until the
  // last request ended.
  void begin_stopping(Clock::time_point ended, bool by_time);
  void finish_if_drained();
  void publish_snapshot(bool with_latency);
  void record(const RequestSlot& slot, const Completion& done);

  // Scenarios: each lane is a virtual user (vus_[lane]).
  uint32_t pick_scenario() noexcept;
  // Closed model: starts the lane's virtual user's next step, or a new
  // iteration when it is between iterations and the phase wants it.
  void run_virtual_user(Connection& connection, Clock::time_point now);
  // Sends the virtual user's current step; `intended`: when it was due.
  void start_step(Connection& connection, Clock::time_point intended, Clock::time_point now);
  void on_step_complete(Connection& connection, const RequestSlot& slot, const Completion& done);
  // What a lane does after a step ended or a wake-up: the next step, a
  // think time, the next iteration, or (open model) it becomes free.
  void continue_virtual_user(Connection& connection, Clock::time_point now);
  void end_iteration(VirtualUser& vu, Clock::time_point ended, bool completed);
  void sleep_until(uint32_t lane, Clock::time_point at);
  void on_wake_alarm();
  // Whether a virtual user's iteration may go on: not after an interrupt
  // or the planned end (what is in flight drains; iterations are cut short).
  bool iterations_may_continue() const noexcept { return !stopping_ || finish_iterations_on_stop_; }

  RunPlan plan_;
  std::vector<tcp::endpoint> endpoints_;
  asio::ssl::context* tls_;
  const std::atomic<bool>& stop_;
  bool live_metrics_;

  // Only this worker's thread ever touches its loop, its sockets and
  // timers (made on the controller's thread before run() starts them): no
  // locking in Asio's scheduler or reactor, as in wrk's event loop per thread.
  asio::io_context io_{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE};
  Timer tick_timer_{io_};
  Timer open_timer_{io_};
  Timer wake_timer_{io_};
  HandlerMemory wake_timer_memory_;
  HandlerMemory open_timer_memory_;   // re-armed for every arrival
  std::unique_ptr<EventLoop> loop_;   // plain HTTP/1.1 on epoll
  std::unique_ptr<UringLoop> uring_;  // plain HTTP/1.1 and h2c on io_uring (plan_.engine)
  // HTTP/2: the connections, each carrying lanes_per_connection() of the
  // lanes below (connections_[i] is on sessions_[i / lanes_per_connection()]).
  std::vector<std::unique_ptr<H2Session>> sessions_;
  // What requests are scheduled on: HTTP/1.1 connections, or HTTP/2 lanes.
  std::vector<std::unique_ptr<Connection>> connections_;

  // Phase state.
  std::shared_ptr<SharedBudgets> budgets_;
  size_t phase_index_ = 0;
  Clock::time_point phase_started_{};
  Clock::time_point phase_ends_{Clock::time_point::max()};
  uint64_t permits_ = 0;  // closed model: claimed from the budget, not yet sent
  bool stopping_ = false;
  bool stopped_by_time_ = false;
  Clock::time_point stopped_at_{};  // where counted time ended
  double drain_seconds_ = 0;
  bool finished_ = false;
  bool interrupted_ = false;
  bool wake_pending_ = false;
  uint64_t ticks_ = 0;
  // No request's deadline comes before this, so the tick looks at the
  // connections' deadlines only from then on, not at every tick.
  Clock::time_point next_deadline_{};

  // Weighted request mix (smooth weighted round robin).
  std::vector<int64_t> mix_current_;
  int64_t mix_total_ = 0;

  // Open model.
  uint64_t turn_ = 0;                     // this part's arrivals so far in the phase
  uint64_t phase_arrivals_ = 0;           // arrivals of the whole sequence in the phase
  uint64_t counted_arrivals_before_ = 0;  // ... in the counted phases before it
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

  // Scenarios.
  struct ScenarioTally {
    uint64_t iterations = 0;
    uint64_t failed = 0;
    Histogram duration;  // us
  };
  std::vector<VirtualUser> vus_;  // by lane
  std::unique_ptr<ScenarioScratch> scenario_scratch_;
  std::unique_ptr<DataCursors> data_cursors_;
  std::vector<int64_t> scenario_mix_;
  int64_t scenario_mix_total_ = 0;
  std::vector<ScenarioTally> scenario_tallies_;
  // Lanes waiting for their time (think time, pacing, a back-off), as a heap
  // on the earliest; a lane is in it at most once.
  std::vector<std::pair<Clock::time_point, uint32_t>> sleepers_;
  std::vector<uint8_t> sleeping_;    // by lane
  std::vector<uint8_t> vu_stopped_;  // by lane: its unique rows ran out
  uint64_t active_iterations_ = 0;
  // The run ended by its count (iterations): iterations in progress run to
  // their end before the worker finishes.
  bool finish_iterations_on_stop_ = false;

  bool first_response_seen_ = false;
  bool kernel_tls_allowed_ = true;
  mutable std::mutex snapshot_mutex_;
  LiveSnapshot snapshot_;
  FirstResponse first_response_;
};

}  // namespace kubeload::loadgen
