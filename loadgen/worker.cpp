#include "loadgen/worker.hpp"

#include <algorithm>

namespace kubeload::loadgen {
namespace {

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
  }
  if (done.response_complete) {
    ++r.status_codes[done.status];
    r.latency.record(done.timings.total_us);
    r.waiting.record(done.timings.waiting_us);
    r.connect.record(done.timings.connect_us);
  }
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

Worker::Worker(const RunPlan& plan, std::vector<tcp::endpoint> endpoints, asio::ssl::context* tls,
               const std::atomic<bool>& stop, bool live_metrics)
    : plan_(plan),
      endpoints_(std::move(endpoints)),
      tls_(tls),
      stop_(stop),
      live_metrics_(live_metrics) {
  const uint64_t connection_count = std::max<uint64_t>(1, plan_.max_phase_connections());
  connections_.reserve(connection_count);
  for (uint64_t i = 0; i < connection_count; ++i) {
    connections_.push_back(std::make_unique<Connection>(*this, io_, static_cast<uint32_t>(i)));
  }
  mix_current_.assign(plan_.requests.size(), 0);
  for (const RequestTemplate& r : plan_.requests) mix_total_ += r.weight;

  const int stages = plan_.stage_count();
  stage_results_.resize(static_cast<size_t>(stages));
  stage_started_.assign(static_cast<size_t>(stages), Clock::time_point{});
  stage_ended_.assign(static_cast<size_t>(stages), Clock::time_point{});
  if (plan_.open_model) {
    for (Result& r : stage_results_) r.rate = RateCounts{};
    idle_.reserve(connection_count);
    pending_.resize(std::max<uint64_t>(1024, 4 * connection_count));
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
  begin_phase(0, start);
  arm_tick();
  if (plan_.open_model) {
    schedule_open();
  } else {
    wake_idle_connections();
  }
  io_.run();
}

void Worker::begin_phase(size_t index, Clock::time_point now) {
  if (!phase().warmup && phase_index_ != index) {
    stage_ended_[static_cast<size_t>(phase().stage_index)] = now;
  }
  phase_index_ = index;
  phase_started_ = now;
  phase_issued_ = 0;
  phase_ends_ = phase().duration.count() > 0 ? now + phase().duration : Clock::time_point::max();
  if (!phase().warmup) stage_started_[static_cast<size_t>(phase().stage_index)] = now;
  next_intended_ = now;
  wake_pending_ = true;
}

void Worker::advance_phases(Clock::time_point now) {
  while (!stopping_) {
    const Phase& p = phase();
    if (!p.warmup && plan_.total_request_budget && counted_issued_ >= *plan_.total_request_budget) {
      return begin_stopping();
    }
    const bool time_up = now >= phase_ends_;
    const bool budget_spent = p.request_budget && phase_issued_ >= *p.request_budget;
    if (!time_up && !budget_spent) return;
    if (phase_index_ + 1 >= plan_.phases.size()) return begin_stopping();
    // A phase ended by time hands over at its planned end, so stage lengths
    // do not drift by the tick interval.
    begin_phase(phase_index_ + 1,
                time_up && phase_ends_ != Clock::time_point::max() ? phase_ends_ : now);
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

bool Worker::take_slot(uint32_t connection_index, Clock::time_point intended, RequestSlot& out) {
  advance_phases(Clock::now());
  if (stopping_) return false;
  const Phase& p = phase();
  if (!plan_.open_model && connection_index >= p.connections) return false;
  out.request = pick_request();
  out.stage = p.warmup ? -1 : p.stage_index;
  out.intended = plan_.open_model ? intended : Clock::now();
  ++phase_issued_;
  if (!p.warmup) ++counted_issued_;
  ++in_flight_;
  return true;
}

void Worker::dispatch_closed(Connection& connection) {
  if (connection.busy()) return;
  RequestSlot slot;
  if (take_slot(connection.index(), {}, slot)) connection.start(slot);
}

void Worker::wake_idle_connections() {
  wake_pending_ = false;
  if (plan_.open_model || stopping_) return;
  const uint64_t wanted = std::min<uint64_t>(phase().connections, connections_.size());
  for (uint64_t i = 0; i < wanted && !stopping_; ++i) dispatch_closed(*connections_[i]);
}

void Worker::schedule_open() {
  if (stopping_) return;
  open_timer_.expires_at(next_intended_);
  open_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) on_open_timer();
  });
}

void Worker::on_open_timer() {
  const Clock::time_point now = Clock::now();
  advance_phases(now);
  while (!stopping_ && next_intended_ <= now) {
    RequestSlot slot;
    if (!take_slot(0, next_intended_, slot)) break;
    send_open(slot);
    // Intended times come from the phase start, so rounding never accumulates.
    const double rate = std::max(phase().rate, 1e-9);
    next_intended_ = phase_started_ + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(phase_issued_ / rate));
    advance_phases(now);
  }
  schedule_open();
}

void Worker::send_open(const RequestSlot& slot) {
  Connection* connection = nullptr;
  if (!idle_.empty()) {
    connection = connections_[idle_.back()].get();
    idle_.pop_back();
  } else if (open_connections_used_ < connections_.size()) {
    connection = connections_[open_connections_used_++].get();
  }
  if (connection != nullptr) return start_open(*connection, slot);
  if (pending_size_ == pending_.size()) {
    --in_flight_;
    if (slot.stage >= 0) ++stage_results_[static_cast<size_t>(slot.stage)].rate->dropped;
    return;
  }
  pending_[(pending_head_ + pending_size_) % pending_.size()] = slot;
  ++pending_size_;
}

void Worker::start_open(Connection& connection, const RequestSlot& slot) {
  if (slot.stage >= 0 && Clock::now() - slot.intended >= kLateAfter) {
    ++stage_results_[static_cast<size_t>(slot.stage)].rate->late;
  }
  connection.start(slot);
}

void Worker::on_complete(Connection& connection, const RequestSlot& slot, const Completion& done) {
  --in_flight_;
  record(slot, done);
  if (stopping_) return finish_if_drained();
  if (plan_.open_model) {
    if (pending_size_ > 0) {
      const RequestSlot next = pending_[pending_head_];
      pending_head_ = (pending_head_ + 1) % pending_.size();
      --pending_size_;
      start_open(connection, next);
    } else {
      idle_.push_back(connection.index());
    }
  } else if (done.outcome != Outcome::connect) {
    // After a failed connect the tick retries, which paces reconnection
    // attempts instead of spinning on a refused port.
    dispatch_closed(connection);
  }
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

void Worker::arm_tick() {
  tick_timer_.expires_after(kTickInterval);
  tick_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) on_tick();
  });
}

void Worker::on_tick() {
  const Clock::time_point now = Clock::now();
  if (stop_.load(std::memory_order_relaxed) && !interrupted_) {
    interrupted_ = true;
    for (auto& c : connections_) c->clamp_deadline(now + kInterruptGrace);
    begin_stopping();
  }
  advance_phases(now);
  for (auto& c : connections_) c->enforce_deadline(now);
  wake_idle_connections();
  if (++ticks_ % kTicksPerSnapshot == 0) publish_snapshot(ticks_ % kTicksPerLatencySnapshot == 0);
  if (!finished_) arm_tick();
}

void Worker::begin_stopping() {
  if (stopping_) return;
  stopping_ = true;
  open_timer_.cancel();
  // Requests still waiting for a connection will never be sent.
  for (; pending_size_ > 0; --pending_size_) {
    const RequestSlot& slot = pending_[pending_head_];
    pending_head_ = (pending_head_ + 1) % pending_.size();
    --in_flight_;
    if (slot.stage >= 0) ++stage_results_[static_cast<size_t>(slot.stage)].rate->dropped;
  }
  finish_if_drained();
}

void Worker::finish_if_drained() {
  if (!stopping_ || in_flight_ > 0 || finished_) return;
  finished_ = true;
  const Clock::time_point now = Clock::now();
  if (!phase().warmup) stage_ended_[static_cast<size_t>(phase().stage_index)] = now;
  for (auto& c : connections_) c->close();
  tick_timer_.cancel();
  open_timer_.cancel();
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
  for (const Result& r : stage_results_) {
    if (r.rate) {
      s.late += r.rate->late;
      s.dropped += r.rate->dropped;
    }
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
  s.target_rate = plan_.open_model && !stopping_ ? phase().rate : 0;
  s.done = finished_;
  std::lock_guard lock(snapshot_mutex_);
  if (!with_latency) {
    // Keep the last latency buckets: they are refreshed less often.
    for (size_t i = 0; i < s.requests.size() && i < snapshot_.requests.size(); ++i) {
      s.requests[i].latency_buckets = std::move(snapshot_.requests[i].latency_buckets);
      s.requests[i].latency_sum_seconds = snapshot_.requests[i].latency_sum_seconds;
      s.requests[i].latency_count = snapshot_.requests[i].latency_count;
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
    if (phase_of_stage != nullptr) {
      row.duration_seconds_planned =
          std::chrono::duration<double>(phase_of_stage->duration).count();
      if (plan_.open_model) {
        row.rate = phase_of_stage->rate;
        row.result.rate->target = phase_of_stage->rate;
        intended_requests += phase_of_stage->rate * row.result.duration_seconds;
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
  if (total.rate) {
    total.rate->target =
        total.duration_seconds > 0 ? intended_requests / total.duration_seconds : 0;
  }
  run.result = total;
  if (request_results_.empty()) {
    Result only = total;
    only.rate.reset();
    run.request_results.push_back(NamedResult{plan_.requests.front().name, std::move(only)});
  } else {
    for (size_t i = 0; i < request_results_.size(); ++i) {
      Result r = request_results_[i];
      r.duration_seconds = total.duration_seconds;
      run.request_results.push_back(NamedResult{plan_.requests[i].name, std::move(r)});
    }
  }
  return run;
}

}  // namespace kubeload::loadgen
