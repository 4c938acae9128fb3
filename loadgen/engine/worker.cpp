#include "loadgen/engine/worker.hpp"

#include <algorithm>
#include <csignal>

namespace kubeload::loadgen {
namespace {

// OpenSSL writes a TLS connection's socket with write(2), which raises
// SIGPIPE when the peer has closed (our own sends pass MSG_NOSIGNAL; its
// socket BIO, the one kTLS works with, cannot). Blocked on the thread that
// runs the connections, the write fails with EPIPE instead, a write error
// like any other; the signal left pending is taken before the thread's
// mask is restored, so that it is never delivered. Per thread: the program
// that runs the engine keeps its own disposition.
class SigpipeBlocked {
 public:
  SigpipeBlocked() noexcept {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &previous_);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;
  ~SigpipeBlocked() {
    const timespec now{};
    while (sigtimedwait(&sigpipe_, nullptr, &now) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }

 private:
  sigset_t sigpipe_{};
  sigset_t previous_{};
};

constexpr auto kTickInterval = std::chrono::milliseconds(10);
constexpr int kTicksPerSnapshot = 10;         // counters: every 100 ms
constexpr int kTicksPerLatencySnapshot = 50;  // histogram buckets: every 500 ms
constexpr auto kLateAfter = std::chrono::milliseconds(1);
constexpr auto kInterruptGrace = std::chrono::seconds(1);

ErrorKind error_kind(Outcome outcome) noexcept {
  switch (outcome) {
    case Outcome::connect:
      return ErrorKind::connect;
    case Outcome::timeout:
      return ErrorKind::timeout;
    case Outcome::read:
      return ErrorKind::read;
    case Outcome::write:
      return ErrorKind::write;
    case Outcome::status:
      return ErrorKind::status;
    case Outcome::length:
      return ErrorKind::length;
    case Outcome::dropped:
      return ErrorKind::dropped;
    case Outcome::rst_stream:
      return ErrorKind::rst_stream;
    case Outcome::goaway:
      return ErrorKind::goaway;
    case Outcome::extract:
      return ErrorKind::extract;
    case Outcome::check:
      return ErrorKind::check;
    case Outcome::success:
      break;
  }
  return ErrorKind::read;
}

void add_completion(Result& r, const Completion& done) {
  ++r.requests;
  r.bytes_received += done.bytes_in;
  r.body_bytes_received += done.body_bytes_in;
  r.bytes_sent += done.bytes_out;
  if (done.outcome != Outcome::success) ++r.errors[error_kind(done.outcome)];
  if (done.retried) ++r.retries;
  if (done.tls_handshake) {
    if (!r.tls) r.tls = TlsCounts{};
    ++r.tls->handshakes;
    if (done.tls_resumed) ++r.tls->sessions_reused;
    if (done.tls_kernel_send) ++r.tls->kernel_send;
    if (done.tls_kernel_receive) ++r.tls->kernel_receive;
  }
  if (done.response_complete) {
    ++r.status_codes[done.status];
    r.latency.record(done.timings.total_us);
    r.waiting.record(done.timings.waiting_us);
    r.connect.record(done.timings.connect_us);
  } else {
    r.error_latency.record(done.timings.total_us);
  }
}

// Wall-clock time for ${now} and cookie expiry (the steady Clock has no epoch).
int64_t unix_now_ms() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Requests that may wait for a free connection: all the arrivals of one
// timeout at the part's highest rate (they are dropped at their deadline),
// bounded so that a huge rate cannot take the machine's memory.
size_t pending_capacity(const RunPlan& plan, uint64_t connections) {
  constexpr double kMostPending = 1 << 20;
  double most_rate = 0;
  for (const Phase& p : plan.phases) most_rate = std::max(most_rate, plan.rate_of_part(p));
  const double per_timeout = most_rate * std::chrono::duration<double>(plan.timeout).count();
  return static_cast<size_t>(
      std::max(std::min(per_timeout + 1024, kMostPending), 4.0 * static_cast<double>(connections)));
}

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return to <= from ? 0.0 : std::chrono::duration<double>(to - from).count();
}

// Cumulative counts of `h` (microseconds) at each bound (seconds).
void add_cumulative(const Histogram& h, const std::vector<double>& bounds,
                    std::vector<uint64_t>& out) {
  out.resize(bounds.size(), 0);
  h.for_each_nonempty([&](int64_t, int64_t high, uint64_t count) {
    const double seconds = static_cast<double>(high) / 1e6;
    for (size_t i = 0; i < bounds.size(); ++i) {
      if (seconds <= bounds[i]) out[i] += count;
    }
  });
}

}  // namespace

const std::vector<double>& live_latency_bounds() {
  static const std::vector<double> bounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return bounds;
}

SharedBudget::SharedBudget(uint64_t limit, uint64_t block) noexcept
    : limit_(limit), block_(std::max<uint64_t>(1, block)) {}

uint64_t SharedBudget::claim() noexcept {
  if (spent()) return 0;
  const uint64_t before = claimed_.fetch_add(block_, std::memory_order_relaxed);
  return before >= limit_ ? 0 : std::min(block_, limit_ - before);
}

SharedBudgets::SharedBudgets(const RunPlan& plan, uint32_t threads) {
  SharedBudget* counted = nullptr;
  if (plan.total_request_budget) {
    const uint64_t limit = *plan.total_request_budget;
    counted =
        budgets_.emplace_back(std::make_unique<SharedBudget>(limit, budget_block(limit, threads)))
            .get();
  }
  for (const Phase& p : plan.phases) {
    if (p.warmup && p.request_budget) {
      const uint64_t limit = *p.request_budget;
      by_phase_.push_back(
          budgets_.emplace_back(std::make_unique<SharedBudget>(limit, budget_block(limit, threads)))
              .get());
    } else {
      by_phase_.push_back(p.warmup ? nullptr : counted);
    }
  }
}

Worker::Worker(const RunPlan& plan, std::vector<tcp::endpoint> endpoints, asio::ssl::context* tls,
               const std::atomic<bool>& stop, bool live_metrics,
               std::shared_ptr<SharedBudgets> budgets)
    : plan_(plan),
      endpoints_(std::move(endpoints)),
      tls_(tls),
      stop_(stop),
      live_metrics_(live_metrics),
      budgets_(budgets ? std::move(budgets) : std::make_shared<SharedBudgets>(plan, 1)) {
  const uint64_t connection_count = std::max<uint64_t>(1, plan_.max_phase_connections());
  // HTTP/1.1 (plain or over TLS) runs on a loop of our own, h2c on io_uring
  // or Asio, HTTP/2 over TLS on Asio.
  plan_.engine = plan_.engine_used();
  if (plan_.engine == Engine::io_uring) {
    // A socket per HTTP/1.1 connection or HTTP/2 session, each its slot.
    uring_ = std::make_unique<UringLoop>(
        [this](SocketOwner owner, const UringLoop::Completion& done) {
          if (!sessions_.empty()) {
            return sessions_[owner.index]->on_uring_completion(owner.generation, done);
          }
          connections_[owner.index]->on_uring_completion(owner.generation, done);
        },
        [this](std::size_t alarm) { on_alarm(static_cast<Alarm>(alarm)); }, connection_count);
  } else if (plan_.engine == Engine::epoll) {
    loop_ = std::make_unique<EventLoop>(
        [this](SocketOwner owner, uint32_t events) {
          connections_[owner.index]->on_socket_event(owner.generation, events);
        },
        [this](std::size_t alarm) { on_alarm(static_cast<Alarm>(alarm)); });
  }
  const uint64_t lanes = plan_.lanes_per_connection();
  if (plan_.http2()) {
    sessions_.reserve(connection_count);
    for (uint64_t i = 0; i < connection_count; ++i) {
      sessions_.push_back(std::make_unique<H2Session>(*this, io_, static_cast<uint32_t>(i)));
    }
  }
  connections_.reserve(connection_count * lanes);
  for (uint64_t i = 0; i < connection_count * lanes; ++i) {
    H2Session* session = plan_.http2() ? sessions_[i / lanes].get() : nullptr;
    connections_.push_back(std::make_unique<Connection>(*this, static_cast<uint32_t>(i), session));
  }
  mix_current_.assign(plan_.requests.size(), 0);
  for (const RequestTemplate& r : plan_.requests) mix_total_ += r.weight;
  if (plan_.scenarios) {
    const ScenarioPlan& scenarios = *plan_.scenarios;
    for (const CompiledScenario& sc : scenarios.scenarios) {
      scenario_mix_.push_back(0);
      scenario_mix_total_ += sc.weight;
    }
    scenario_tallies_.resize(scenarios.scenarios.size());
    scenario_scratch_ = std::make_unique<ScenarioScratch>();
    data_cursors_ = std::make_unique<DataCursors>(scenarios, plan_.part);
    vus_.reserve(connections_.size());
    for (size_t lane = 0; lane < connections_.size(); ++lane) {
      // Numbered across the run: lane k of part p of P is p + P k.
      const uint64_t index = plan_.part.offset + plan_.part.stride * lane;
      vus_.emplace_back(scenarios, index, index * 0x9e3779b97f4a7c15ULL + 1);
      connections_[lane]->capture_responses(scenarios.max_body_bytes);
    }
    sleepers_.reserve(connections_.size());
    sleeping_.assign(connections_.size(), 0);
    vu_stopped_.assign(connections_.size(), 0);
  }

  const int stages = plan_.stage_count();
  stage_results_.resize(static_cast<size_t>(stages));
  stage_started_.assign(static_cast<size_t>(stages), Clock::time_point{});
  stage_ended_.assign(static_cast<size_t>(stages), Clock::time_point{});
  if (plan_.open_model) {
    for (Result& r : stage_results_) r.rate = RateCounts{};
    idle_.reserve(connections_.size());
    pending_.resize(pending_capacity(plan_, connection_count));
  }
  if (plan_.requests.size() > 1) request_results_.resize(plan_.requests.size());
  if (plan_.target.tls()) {
    for (Result& r : stage_results_) r.tls = TlsCounts{};
    for (Result& r : request_results_) r.tls = TlsCounts{};
  }
  snapshot_.requests.resize(plan_.requests.size());
}

Worker::~Worker() = default;

void Worker::run(Clock::time_point start) {
  const SigpipeBlocked sigpipe_blocked;
  // The ring's submitter is the thread that runs it, this one.
  if (uring_) uring_->start();
  begin_phase(0, start);
  arm_tick();
  if (plan_.open_model) {
    schedule_open();
  } else {
    advance_phases(Clock::now());
    wake_idle_connections();
  }
  if (uring_) {
    if (!finished_) uring_->run();
  } else if (loop_) {
    // Finished before it began (nothing to send): nothing stops it later.
    if (!finished_) loop_->run();
  } else {
    io_.run();
  }
}

void Worker::set_alarm(Alarm alarm, Clock::time_point at) {
  if (uring_) return uring_->set_alarm(alarm, at);
  if (loop_) return loop_->set_alarm(alarm, at);
  if (alarm == tick_alarm) {
    tick_timer_.expires_at(at);
    return tick_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) on_tick();
    });
  }
  if (alarm == wake_alarm) {
    wake_timer_.expires_at(at);
    return wake_timer_.async_wait(
        with_memory(wake_timer_memory_, [this](const boost::system::error_code& ec) {
          if (!ec) on_wake_alarm();
        }));
  }
  open_timer_.expires_at(at);
  open_timer_.async_wait(
      with_memory(open_timer_memory_, [this](const boost::system::error_code& ec) {
        if (!ec) on_open_timer();
      }));
}

void Worker::cancel_alarm(Alarm alarm) {
  if (uring_) return uring_->cancel_alarm(alarm);
  if (loop_) return loop_->cancel_alarm(alarm);
  (alarm == tick_alarm ? tick_timer_ : alarm == open_alarm ? open_timer_ : wake_timer_).cancel();
}

void Worker::on_alarm(Alarm alarm) {
  if (alarm == tick_alarm) return on_tick();
  if (alarm == wake_alarm) return on_wake_alarm();
  on_open_timer();
}

void Worker::begin_phase(size_t index, Clock::time_point at) {
  if (phase_index_ != index) {
    if (!phase().warmup) {
      stage_ended_[static_cast<size_t>(phase().stage_index)] = at;
      counted_arrivals_before_ += phase_arrivals_;
    }
    // Counted phases share one budget; what is left of the warm-up's is not theirs.
    if (budgets_->of_phase(index) != budgets_->of_phase(phase_index_)) permits_ = 0;
  }
  phase_index_ = index;
  phase_started_ = at;
  const Phase& p = phase();
  phase_ends_ = p.duration.count() > 0 ? at + p.duration : Clock::time_point::max();
  if (!p.warmup) stage_started_[static_cast<size_t>(p.stage_index)] = at;
  wake_pending_ = true;
  if (!plan_.open_model) return;

  // The arrivals of the whole sequence in this phase, which ends when its
  // time is up or its arrivals are: the same numbers in every part.
  constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();
  uint64_t by_count = kUnlimited;
  if (p.warmup && p.request_budget) by_count = *p.request_budget;
  if (!p.warmup && plan_.total_request_budget) {
    by_count = *plan_.total_request_budget -
               std::min(*plan_.total_request_budget, counted_arrivals_before_);
  }
  const uint64_t by_time =
      p.duration.count() > 0 ? arrivals_within(p.duration, p.rate) : kUnlimited;
  phase_arrivals_ = p.rate > 0 ? std::min(by_time, by_count) : 0;
  if (p.rate > 0 && by_count < by_time) phase_ends_ = at + arrival_offset(by_count, p.rate);
  turn_ = 0;
  next_intended_ = p.rate > 0 ? at + arrival_offset(arrival_index(0), p.rate) : phase_ends_;
}

void Worker::end_phase(Clock::time_point ended, bool by_time) {
  const Phase& p = phase();
  const bool counted_budget_spent =
      !p.warmup && plan_.total_request_budget &&
      (plan_.open_model ? counted_arrivals_before_ + phase_arrivals_ >= *plan_.total_request_budget
                        : !by_time);
  if (phase_index_ + 1 >= plan_.phases.size() || counted_budget_spent) {
    // A scenario run bounded by iterations lets those in progress end.
    finish_iterations_on_stop_ = counted_budget_spent;
    return begin_stopping(ended, by_time || plan_.open_model);
  }
  begin_phase(phase_index_ + 1, ended);
}

void Worker::advance_phases(Clock::time_point now) {
  while (!stopping_) {
    const bool time_up = now >= phase_ends_;
    const SharedBudget* budget = budgets_->of_phase(phase_index_);
    const bool budget_spent = budget != nullptr && permits_ == 0 && budget->spent();
    if (!time_up && !budget_spent) return;
    // A phase ended by time hands over at its planned end, so stage lengths
    // do not drift by the tick interval.
    end_phase(time_up ? phase_ends_ : now, time_up);
  }
}

uint32_t Worker::pick_request() noexcept {
  if (plan_.requests.size() == 1) return 0;
  size_t best = 0;
  for (size_t i = 0; i < plan_.requests.size(); ++i) {
    mix_current_[i] += plan_.requests[i].weight;
    if (mix_current_[i] > mix_current_[best]) best = i;
  }
  mix_current_[best] -= mix_total_;
  return static_cast<uint32_t>(best);
}

RequestSlot Worker::take_slot(Clock::time_point intended) noexcept {
  RequestSlot slot;
  // A scenario's arrival is an iteration: its steps pick their own rows.
  slot.request = plan_.scenarios ? 0 : pick_request();
  slot.outgoing = plan_.scenarios ? nullptr : &plan_.requests[slot.request];
  slot.stage = phase().warmup ? -1 : phase().stage_index;
  slot.intended = intended;
  ++in_flight_;
  return slot;
}

bool Worker::claim_permit() noexcept {
  SharedBudget* budget = budgets_->of_phase(phase_index_);
  if (budget == nullptr) return true;
  if (permits_ == 0) permits_ = budget->claim();
  if (permits_ == 0) return false;
  --permits_;
  return true;
}

void Worker::dispatch_closed(Connection& connection, Clock::time_point now) {
  if (connection.busy()) return;
  if (plan_.scenarios) return run_virtual_user(connection, now);
  advance_phases(now);
  while (!stopping_ && connection.index() < phase().connections * plan_.lanes_per_connection()) {
    if (claim_permit()) return connection.start(take_slot(now), now);
    // The phase's budget is spent: the next phase (or the end) begins now.
    advance_phases(now);
  }
}

void Worker::wake_idle_connections() {
  wake_pending_ = false;
  // A busy connection carries exactly one request: when every one is busy,
  // none is idle (the common case at every tick of a closed run).
  if (plan_.open_model || stopping_ || in_flight_ >= connections_.size()) return;
  const uint64_t wanted =
      std::min<uint64_t>(phase().connections * plan_.lanes_per_connection(), connections_.size());
  for (uint64_t i = 0; i < wanted && !stopping_; ++i) {
    // The clock read for each: a request that leaves on a kept-alive
    // connection takes its send time from it.
    Connection& connection = *connections_[i];
    if (!connection.busy()) dispatch_closed(connection, Clock::now());
  }
}

uint64_t Worker::arrival_index(uint64_t turn) const noexcept {
  return plan_.turns.offset + plan_.turns.stride * turn;
}

void Worker::schedule_open() {
  if (stopping_) return;
  set_alarm(open_alarm, arrival_index(turn_) < phase_arrivals_ ? next_intended_ : phase_ends_);
}

void Worker::on_open_timer() {
  const Clock::time_point now = Clock::now();
  while (!stopping_) {
    if (arrival_index(turn_) < phase_arrivals_) {
      if (next_intended_ > now) break;
      // A burst that catches up sends one request after another: each its own time.
      send_open(take_slot(next_intended_), Clock::now());
      ++turn_;
      // Intended times come from the phase start, so rounding never accumulates.
      next_intended_ = phase_started_ + arrival_offset(arrival_index(turn_), phase().rate);
      continue;
    }
    // This part's turns are over; the phase goes on until its planned end.
    if (phase_ends_ > now) break;
    end_phase(phase_ends_, true);
  }
  schedule_open();
}

void Worker::send_open(const RequestSlot& slot, Clock::time_point now) {
  Connection* connection = nullptr;
  if (!idle_.empty()) {
    connection = connections_[idle_.back()].get();
    idle_.pop_back();
  } else if (open_connections_used_ < connections_.size()) {
    connection = connections_[open_connections_used_++].get();
  }
  if (connection != nullptr) return start_open(*connection, slot, now);
  if (pending_size_ == pending_.size()) return drop(slot, now);
  pending_[(pending_head_ + pending_size_) % pending_.size()] = slot;
  ++pending_size_;
}

void Worker::start_open(Connection& connection, const RequestSlot& slot, Clock::time_point now) {
  if (slot.stage >= 0 && now - slot.intended >= kLateAfter) {
    ++stage_results_[static_cast<size_t>(slot.stage)].rate->late;
  }
  if (!plan_.scenarios) return connection.start(slot, now);
  // An arrival starts an iteration on this free virtual user; its first
  // step is due at the arrival's intended time.
  --in_flight_;  // take_slot counted it as a request; the step counts itself
  VirtualUser& vu = vus_[connection.index()];
  if (!vu.begin_iteration(pick_scenario(), slot.intended, slot.stage >= 0, *data_cursors_)) {
    // This part's unique rows ran out: it starts nothing more.
    idle_.push_back(connection.index());
    return begin_stopping(now, false);
  }
  ++active_iterations_;
  start_step(connection, slot.intended, now);
}

// Starts the oldest waiting request that is still within its timeout on
// `connection`; false when none is waiting.
bool Worker::start_next_pending(Connection& connection, Clock::time_point now) {
  expire_pending(now);
  if (pending_size_ == 0) return false;
  const RequestSlot next = pending_[pending_head_];
  pending_head_ = (pending_head_ + 1) % pending_.size();
  --pending_size_;
  start_open(connection, next, now);
  return true;
}

// Requests wait in arrival order, so the expired ones are at the head.
void Worker::expire_pending(Clock::time_point now) {
  while (pending_size_ > 0 && now - pending_[pending_head_].intended >= plan_.timeout) {
    const RequestSlot expired = pending_[pending_head_];
    pending_head_ = (pending_head_ + 1) % pending_.size();
    --pending_size_;
    drop(expired, now);
  }
}

void Worker::drop_all_pending(Clock::time_point now) {
  while (pending_size_ > 0) {
    const RequestSlot slot = pending_[pending_head_];
    pending_head_ = (pending_head_ + 1) % pending_.size();
    --pending_size_;
    drop(slot, now);
  }
}

// An intended request that was never sent is an error whose latency is the
// time it waited: a stalled server shows as errors and latency, never as a
// smaller count.
void Worker::drop(const RequestSlot& slot, Clock::time_point now) {
  Completion done;
  done.outcome = Outcome::dropped;
  done.timings.total_us = micros_between(slot.intended, now);
  --in_flight_;
  record(slot, done);
}

void Worker::on_complete(Connection& connection, const RequestSlot& slot, const Completion& done) {
  if (plan_.scenarios) return on_step_complete(connection, slot, done);
  --in_flight_;
  record(slot, done);
  if (plan_.open_model) {
    // Requests still waiting are sent in the drain too: they were intended.
    if (!start_next_pending(connection, done.ended_at)) idle_.push_back(connection.index());
  } else if (!stopping_ && done.outcome != Outcome::connect) {
    // After a failed connect the tick retries, which paces reconnection
    // attempts instead of spinning on a refused port.
    dispatch_closed(connection, done.ended_at);
  }
  if (stopping_) return finish_if_drained();
  if (wake_pending_) wake_idle_connections();
}

void Worker::record(const RequestSlot& slot, const Completion& done) {
  if (slot.stage < 0) {
    ++warmup_requests_;
    return;
  }
  add_completion(stage_results_[static_cast<size_t>(slot.stage)], done);
  if (!request_results_.empty()) add_completion(request_results_[slot.request], done);
}

uint32_t Worker::pick_scenario() noexcept {
  if (scenario_mix_.size() == 1) return 0;
  const auto& scenarios = plan_.scenarios->scenarios;
  size_t best = 0;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    scenario_mix_[i] += scenarios[i].weight;
    if (scenario_mix_[i] > scenario_mix_[best]) best = i;
  }
  scenario_mix_[best] -= scenario_mix_total_;
  return static_cast<uint32_t>(best);
}

void Worker::run_virtual_user(Connection& connection, Clock::time_point now) {
  const uint32_t lane = connection.index();
  if (sleeping_[lane] || vu_stopped_[lane]) return;
  VirtualUser& vu = vus_[lane];
  if (vu.in_iteration()) {
    if (iterations_may_continue()) start_step(connection, now, now);
    return;
  }
  advance_phases(now);
  while (!stopping_ && lane < phase().connections) {
    if (vu.iterations() > 0) {
      if (const auto paced = vu.paced_start(); paced && *paced > now) {
        return sleep_until(lane, *paced);
      }
    }
    if (!claim_permit()) {
      // The phase's budget is spent: the next phase (or the end) begins now.
      advance_phases(now);
      continue;
    }
    if (!vu.begin_iteration(pick_scenario(), now, !phase().warmup, *data_cursors_)) {
      vu_stopped_[lane] = 1;
      // Its unique rows ran out: when no virtual user of this part can go
      // on, the part is done (by count: the iterations in progress end).
      if (std::all_of(vu_stopped_.begin(),
                      vu_stopped_.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(
                                                phase().connections, vu_stopped_.size())),
                      [](uint8_t stopped) { return stopped != 0; })) {
        finish_iterations_on_stop_ = true;
        begin_stopping(now, false);
      }
      return;
    }
    ++active_iterations_;
    return start_step(connection, now, now);
  }
}

void Worker::start_step(Connection& connection, Clock::time_point intended, Clock::time_point now) {
  VirtualUser& vu = vus_[connection.index()];
  const CompiledStep& step = plan_.scenarios->scenarios[vu.scenario()].steps[vu.step()];
  RequestSlot slot;
  slot.request = step.row;
  slot.outgoing = &vu.outgoing();
  slot.stage = vu.iteration_counted() && !phase().warmup ? phase().stage_index : -1;
  slot.intended = intended;
  ++in_flight_;
  const int64_t unix_ms = unix_now_ms();
  if (vu.render_step(plan_.target, plan_.worker_index, unix_ms)) {
    return connection.start(slot, now);
  }
  // A variable it names has no value: the step fails unsent.
  Completion done;
  done.outcome = Outcome::extract;
  done.ended_at = now;
  on_step_complete(connection, slot, done);
}

void Worker::on_step_complete(Connection& connection, const RequestSlot& slot,
                              const Completion& done) {
  --in_flight_;
  VirtualUser& vu = vus_[connection.index()];
  const CompiledStep& step = plan_.scenarios->scenarios[vu.scenario()].steps[vu.step()];
  scenario::ResponseView view;
  const scenario::ResponseView* response = nullptr;
  if (done.response_complete) {
    const Http1ResponseParser::Capture& captured = connection.captured();
    split_header_fields(captured.head, scenario_scratch_->headers);
    view.status = static_cast<unsigned>(done.status);
    view.headers = scenario_scratch_->headers;
    view.body = captured.body;
    response = &view;
  }
  const int64_t unix_ms = unix_now_ms();
  const StepVerdict verdict = vu.finish_step(done.outcome, response, unix_ms, *scenario_scratch_);
  if (verdict.outcome == done.outcome) {
    record(slot, done);
  } else {
    Completion judged = done;
    judged.outcome = verdict.outcome;
    record(slot, judged);
  }
  if (verdict.iteration_ends) end_iteration(vu, done.ended_at, true);
  const auto think = vu.think_time(step.think_time);
  const uint32_t lane = connection.index();
  const bool unsent = !done.response_complete && done.outcome == Outcome::extract;
  if (done.outcome == Outcome::connect || unsent) {
    // A refused connect or a step that could not be rendered goes on a tick
    // later, not at once: a virtual user must not spin on them.
    sleep_until(lane, done.ended_at + kTickInterval);
  } else if (think.count() > 0 && iterations_may_continue() &&
             (vu.in_iteration() || !plan_.open_model)) {
    sleep_until(lane, done.ended_at + think);
  } else {
    continue_virtual_user(connection, done.ended_at);
  }
  if (stopping_) return finish_if_drained();
  if (wake_pending_) wake_idle_connections();
}

void Worker::continue_virtual_user(Connection& connection, Clock::time_point now) {
  VirtualUser& vu = vus_[connection.index()];
  if (vu.in_iteration() && !iterations_may_continue()) {
    // The run ended by time or was interrupted: the iteration is cut short.
    end_iteration(vu, now, false);
  }
  if (!plan_.open_model) return run_virtual_user(connection, now);
  if (vu.in_iteration()) return start_step(connection, now, now);
  // Free again: the oldest arrival still waiting starts its iteration here.
  if (stopping_ && !finish_iterations_on_stop_) drop_all_pending(now);
  if (!start_next_pending(connection, now)) idle_.push_back(connection.index());
}

void Worker::end_iteration(VirtualUser& vu, Clock::time_point ended, bool completed) {
  if (!vu.in_iteration()) return;
  vu.end_iteration();
  --active_iterations_;
  if (!completed || !vu.iteration_counted()) return;
  ScenarioTally& tally = scenario_tallies_[vu.scenario()];
  ++tally.iterations;
  if (vu.iteration_failed()) ++tally.failed;
  tally.duration.record(micros_between(vu.iteration_started(), ended));
}

void Worker::sleep_until(uint32_t lane, Clock::time_point at) {
  sleeping_[lane] = 1;
  sleepers_.emplace_back(at, lane);
  std::push_heap(sleepers_.begin(), sleepers_.end(), std::greater<>{});
  if (sleepers_.front().second == lane) set_alarm(wake_alarm, at);
}

void Worker::on_wake_alarm() {
  const Clock::time_point now = Clock::now();
  while (!sleepers_.empty() && sleepers_.front().first <= now) {
    const auto [due, lane] = sleepers_.front();
    std::pop_heap(sleepers_.begin(), sleepers_.end(), std::greater<>{});
    sleepers_.pop_back();
    sleeping_[lane] = 0;
    Connection& connection = *connections_[lane];
    VirtualUser& vu = vus_[lane];
    if (plan_.open_model && vu.in_iteration() && iterations_may_continue()) {
      // The next step was due at the end of its think time: its latency
      // counts from then (coordinated omission).
      start_step(connection, due, now);
    } else {
      continue_virtual_user(connection, now);
    }
  }
  if (!sleepers_.empty()) set_alarm(wake_alarm, sleepers_.front().first);
  if (stopping_) finish_if_drained();
}

void Worker::arm_tick() {
  set_alarm(tick_alarm, Clock::now() + kTickInterval);
}

void Worker::on_tick() {
  const Clock::time_point now = Clock::now();
  if (stop_.load(std::memory_order_relaxed) && !interrupted_) {
    interrupted_ = true;
    finish_iterations_on_stop_ = false;
    for (auto& c : connections_) c->clamp_deadline(now + kInterruptGrace);
    next_deadline_ = std::min(next_deadline_, now + kInterruptGrace);
    // An interrupted run sends nothing more: what still waits is dropped.
    drop_all_pending(now);
    begin_stopping(now, true);
  }
  if (plan_.open_model) {
    expire_pending(now);
  } else {
    advance_phases(now);
  }
  if (now >= next_deadline_) {
    // A request started from now on has its deadline no earlier than this.
    next_deadline_ = now + plan_.timeout;
    for (auto& c : connections_) {
      next_deadline_ = std::min(next_deadline_, c->enforce_deadline(now));
    }
  }
  wake_idle_connections();
  if (++ticks_ % kTicksPerSnapshot == 0) publish_snapshot(ticks_ % kTicksPerLatencySnapshot == 0);
  if (stopping_) finish_if_drained();
  if (!finished_) arm_tick();
}

void Worker::begin_stopping(Clock::time_point ended, bool by_time) {
  if (stopping_) return;
  stopping_ = true;
  stopped_at_ = ended;
  stopped_by_time_ = by_time;
  if (by_time && !phase().warmup) stage_ended_[static_cast<size_t>(phase().stage_index)] = ended;
  cancel_alarm(open_alarm);
  finish_if_drained();
}

void Worker::finish_if_drained() {
  if (!stopping_ || in_flight_ > 0 || finished_) return;
  if (finish_iterations_on_stop_ && active_iterations_ > 0) return;
  finished_ = true;
  const Clock::time_point now = Clock::now();
  if (stopped_by_time_) {
    drain_seconds_ = seconds_between(stopped_at_, now);
  } else if (!phase().warmup) {
    // A run ended by count lasts until its last request ended.
    stage_ended_[static_cast<size_t>(phase().stage_index)] = now;
  }
  for (auto& c : connections_) c->close();
  cancel_alarm(tick_alarm);
  cancel_alarm(open_alarm);
  cancel_alarm(wake_alarm);
  if (loop_) loop_->stop();
  if (uring_) uring_->stop();
  publish_snapshot(true);
}

void Worker::publish_snapshot(bool with_latency) {
  LiveSnapshot s;
  s.requests.resize(plan_.requests.size());
  auto fill = [&](LiveSnapshot::PerRequest& row, const Result& r) {
    row.requests += r.requests;
    for (const auto& [code, count] : r.status_codes) row.status_codes[code] += count;
    row.errors.add(r.errors);
    row.bytes_received += r.bytes_received;
    row.bytes_sent += r.bytes_sent;
    if (with_latency && live_metrics_) {
      add_cumulative(r.latency, live_latency_bounds(), row.latency_buckets);
      row.latency_sum_seconds +=
          r.latency.mean() * static_cast<double>(r.latency.total_count()) / 1e6;
      row.latency_count += r.latency.total_count();
    }
  };
  if (request_results_.empty()) {
    for (const Result& r : stage_results_) fill(s.requests[0], r);
  } else {
    for (size_t i = 0; i < request_results_.size(); ++i) fill(s.requests[i], request_results_[i]);
  }
  s.scenarios.resize(scenario_tallies_.size());
  for (size_t i = 0; i < scenario_tallies_.size(); ++i) {
    const ScenarioTally& tally = scenario_tallies_[i];
    LiveSnapshot::PerScenario& row = s.scenarios[i];
    row.iterations = tally.iterations;
    row.failed = tally.failed;
    if (with_latency && live_metrics_) {
      add_cumulative(tally.duration, live_latency_bounds(), row.duration_buckets);
      row.duration_sum_seconds =
          tally.duration.mean() * static_cast<double>(tally.duration.total_count()) / 1e6;
      row.duration_count = tally.duration.total_count();
    }
  }
  for (const Result& r : stage_results_) {
    if (r.rate) s.late += r.rate->late;
    s.dropped += r.errors.dropped;
  }
  const Clock::time_point now = Clock::now();
  for (size_t i = 0; i < stage_started_.size(); ++i) {
    if (stage_started_[i] == Clock::time_point{}) continue;
    const Clock::time_point end = stage_ended_[i] == Clock::time_point{} ? now : stage_ended_[i];
    s.counted_seconds += seconds_between(stage_started_[i], end);
  }
  s.warmup_requests = warmup_requests_;
  s.connections_open = connections_open_;
  s.in_flight = in_flight_;
  s.stage = phase().warmup ? -1 : phase().stage_index;
  s.target_rate = plan_.open_model && !stopping_ ? plan_.rate_of_part(phase()) : 0;
  s.done = finished_;
  std::lock_guard lock(snapshot_mutex_);
  if (!with_latency) {
    // Keep the last latency buckets: they are refreshed less often.
    for (size_t i = 0; i < s.requests.size() && i < snapshot_.requests.size(); ++i) {
      s.requests[i].latency_buckets = std::move(snapshot_.requests[i].latency_buckets);
      s.requests[i].latency_sum_seconds = snapshot_.requests[i].latency_sum_seconds;
      s.requests[i].latency_count = snapshot_.requests[i].latency_count;
    }
    for (size_t i = 0; i < s.scenarios.size() && i < snapshot_.scenarios.size(); ++i) {
      s.scenarios[i].duration_buckets = std::move(snapshot_.scenarios[i].duration_buckets);
      s.scenarios[i].duration_sum_seconds = snapshot_.scenarios[i].duration_sum_seconds;
      s.scenarios[i].duration_count = snapshot_.scenarios[i].duration_count;
    }
  }
  snapshot_ = std::move(s);
}

LiveSnapshot Worker::snapshot() const {
  std::lock_guard lock(snapshot_mutex_);
  return snapshot_;
}

void Worker::on_first_response(std::string server, uint64_t body_length) {
  first_response_seen_ = true;
  std::lock_guard lock(snapshot_mutex_);
  first_response_ = FirstResponse{std::move(server), body_length, true};
}

FirstResponse Worker::first_response() const {
  std::lock_guard lock(snapshot_mutex_);
  return first_response_;
}

RunResult Worker::result() const {
  RunResult run;
  run.warmup_requests = warmup_requests_;
  run.finished = finished_;
  Result total;
  double intended_requests = 0;
  for (size_t i = 0; i < stage_results_.size(); ++i) {
    const Phase* phase_of_stage = nullptr;
    for (const Phase& p : plan_.phases) {
      if (!p.warmup && p.stage_index == static_cast<int>(i)) phase_of_stage = &p;
    }
    StageResult row;
    row.index = static_cast<int>(i);
    row.result = stage_results_[i];
    row.result.duration_seconds = seconds_between(stage_started_[i], stage_ended_[i]);
    if (!phase().warmup && phase().stage_index == static_cast<int>(i)) {
      row.result.drain_seconds = drain_seconds_;
    }
    if (phase_of_stage != nullptr) {
      row.duration_seconds_planned =
          std::chrono::duration<double>(phase_of_stage->duration).count();
      if (plan_.open_model) {
        const double rate = plan_.rate_of_part(*phase_of_stage);
        row.rate = rate;
        row.result.rate->target = rate;
        intended_requests += rate * row.result.duration_seconds;
      } else {
        row.connections = phase_of_stage->connections;
      }
    }
    // Stages run one after another: their lengths add up.
    const double elapsed = total.duration_seconds + row.result.duration_seconds;
    total.merge(row.result);
    total.duration_seconds = elapsed;
    run.stages.push_back(std::move(row));
  }
  total.drain_seconds = drain_seconds_;
  if (total.rate) {
    total.rate->target =
        total.duration_seconds > 0 ? intended_requests / total.duration_seconds : 0;
  }
  run.result = total;
  for (size_t i = 0; i < scenario_tallies_.size(); ++i) {
    const ScenarioTally& tally = scenario_tallies_[i];
    ScenarioResult row;
    row.name = plan_.scenarios->scenarios[i].name;
    row.iterations = tally.iterations;
    row.iterations_failed = tally.failed;
    row.duration = tally.duration;
    run.scenarios.push_back(std::move(row));
  }
  if (request_results_.empty()) {
    Result only = total;
    only.rate.reset();
    run.request_results.push_back(NamedResult{plan_.requests.front().name, std::move(only)});
  } else {
    for (size_t i = 0; i < request_results_.size(); ++i) {
      Result r = request_results_[i];
      r.duration_seconds = total.duration_seconds;
      r.drain_seconds = total.drain_seconds;
      run.request_results.push_back(NamedResult{plan_.requests[i].name, std::move(r)});
    }
  }
  return run;
}

}  // namespace kubeload::loadgen
