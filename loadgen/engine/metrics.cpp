#include "loadgen/engine/metrics.hpp"

#include <stdexcept>

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace kubeload::loadgen {

struct LiveMetrics::Families {
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Counter>& errors;
  prometheus::Family<prometheus::Histogram>& duration;
  prometheus::Family<prometheus::Counter>& bytes_received;
  prometheus::Family<prometheus::Counter>& bytes_sent;
  prometheus::Family<prometheus::Gauge>& connections_open;
  prometheus::Family<prometheus::Gauge>& in_flight;
  prometheus::Family<prometheus::Gauge>& target_rate;
  prometheus::Family<prometheus::Counter>& late;
  prometheus::Family<prometheus::Counter>& dropped;
  prometheus::Family<prometheus::Gauge>& stage;
  prometheus::Family<prometheus::Counter>& iterations;
  prometheus::Family<prometheus::Counter>& failed_iterations;
  prometheus::Family<prometheus::Histogram>& iteration_duration;
};

namespace {

template <typename Builder>
auto& family(Builder builder, const char* name, const char* help, prometheus::Registry& registry) {
  return builder.Name(name).Help(help).Register(registry);
}

// Requests that ended without a complete response (connect, timeout, read
// and write errors): kubeload_requests_total{code="0"}.
uint64_t failed_before_status(const LiveSnapshot::PerRequest& row) {
  uint64_t with_status = 0;
  for (const auto& [code, count] : row.status_codes) with_status += count;
  return row.requests > with_status ? row.requests - with_status : 0;
}

// Adds to `histogram` what cumulative bucket counts `now` (at
// live_latency_bounds(), `count` values in all, `sum` seconds) hold beyond
// `before`: prometheus-cpp takes per-bucket increments (+Inf last).
void observe_increase(prometheus::Histogram& histogram, const std::vector<uint64_t>& now,
                      uint64_t now_count, double now_sum, const std::vector<uint64_t>& before,
                      uint64_t before_count, double before_sum) {
  const auto& bounds = live_latency_bounds();
  if (now.size() != bounds.size()) return;
  std::vector<double> increments(bounds.size() + 1, 0.0);
  uint64_t previous_now = 0, previous_before = 0;
  bool any = false;
  for (size_t b = 0; b < bounds.size(); ++b) {
    const uint64_t before_cumulative = before.size() == bounds.size() ? before[b] : 0;
    const uint64_t in_bucket_now = now[b] - previous_now;
    const uint64_t in_bucket_before = before_cumulative - previous_before;
    if (in_bucket_now > in_bucket_before) {
      increments[b] = static_cast<double>(in_bucket_now - in_bucket_before);
      any = true;
    }
    previous_now = now[b];
    previous_before = before_cumulative;
  }
  const uint64_t over_now = now_count - previous_now;
  const uint64_t over_before = before_count - previous_before;
  if (over_now > over_before) {
    increments.back() = static_cast<double>(over_now - over_before);
    any = true;
  }
  const double sum_increase = now_sum - before_sum;
  if (any || sum_increase > 0) histogram.ObserveMultiple(increments, std::max(0.0, sum_increase));
}

}  // namespace

LiveMetrics::LiveMetrics(MetricLabels labels, std::vector<std::string> request_names,
                         std::vector<std::string> scenario_names)
    : labels_(std::move(labels)),
      request_names_(std::move(request_names)),
      scenario_names_(std::move(scenario_names)),
      registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  families_ = std::make_unique<Families>(Families{
      family(prometheus::BuildCounter(), "kubeload_requests_total",
             "Completed requests by status code (code 0: no complete response).", r),
      family(prometheus::BuildCounter(), "kubeload_request_errors_total",
             "Failed requests by kind.", r),
      family(prometheus::BuildHistogram(), "kubeload_request_duration_seconds",
             "Request latency, from the intended send time to the last response byte.", r),
      family(prometheus::BuildCounter(), "kubeload_bytes_received_total",
             "Bytes read from the target, headers included.", r),
      family(prometheus::BuildCounter(), "kubeload_bytes_sent_total", "Bytes sent to the target.",
             r),
      family(prometheus::BuildGauge(), "kubeload_connections_open", "Open connections.", r),
      family(prometheus::BuildGauge(), "kubeload_requests_in_flight",
             "Requests sent and not yet complete.", r),
      family(prometheus::BuildGauge(), "kubeload_target_requests_per_second",
             "Open model: the requests/s asked for.", r),
      family(prometheus::BuildCounter(), "kubeload_requests_late_total",
             "Open model: requests sent 1 ms or more after their intended time.", r),
      family(prometheus::BuildCounter(), "kubeload_requests_dropped_total",
             "Open model: requests intended but never sent.", r),
      family(prometheus::BuildGauge(), "kubeload_stage", "Current stage index (-1: warm-up).", r),
      family(prometheus::BuildCounter(), "kubeload_iterations_total",
             "Scenarios: iterations ended, by scenario.", r),
      family(prometheus::BuildCounter(), "kubeload_iterations_failed_total",
             "Scenarios: iterations with a failed step, by scenario.", r),
      family(prometheus::BuildHistogram(), "kubeload_iteration_duration_seconds",
             "Scenarios: iteration durations, from the (intended) start to the end of the last "
             "step.",
             r),
  });
  last_.requests.resize(request_names_.size());
  coded_.resize(request_names_.size());
  // Every series a dashboard expects exists from the first scrape, at zero.
  for (const std::string& name : request_names_) {
    prometheus::Labels l = {{"loadtest", labels_.loadtest}, {"namespace", labels_.namespace_},
                            {"worker", labels_.worker},     {"protocol", labels_.protocol},
                            {"engine", labels_.engine},     {"request", name}};
    families_->duration.Add(l, prometheus::Histogram::BucketBoundaries(live_latency_bounds()));
    prometheus::Labels no_status = l;
    no_status.emplace("code", "0");
    families_->requests.Add(no_status);
    families_->bytes_received.Add(l);
    families_->bytes_sent.Add(l);
  }
  last_.scenarios.resize(scenario_names_.size());
  for (const std::string& name : scenario_names_) {
    prometheus::Labels l = {{"loadtest", labels_.loadtest}, {"namespace", labels_.namespace_},
                            {"worker", labels_.worker},     {"protocol", labels_.protocol},
                            {"engine", labels_.engine},     {"scenario", name}};
    families_->iterations.Add(l);
    families_->failed_iterations.Add(l);
    families_->iteration_duration.Add(
        l, prometheus::Histogram::BucketBoundaries(live_latency_bounds()));
  }
}

LiveMetrics::LiveMetrics(const std::string& listen_address, MetricLabels labels,
                         std::vector<std::string> request_names,
                         std::vector<std::string> scenario_names)
    : LiveMetrics(std::move(labels), std::move(request_names), std::move(scenario_names)) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen_address);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot serve metrics on \"" + listen_address + "\": " + e.what());
  }
  exposer_->RegisterCollectable(registry_);
}

LiveMetrics::~LiveMetrics() = default;

uint16_t LiveMetrics::port() const {
  if (!exposer_) return 0;
  const auto ports = exposer_->GetListeningPorts();
  return ports.empty() ? 0 : static_cast<uint16_t>(ports.front());
}

void LiveMetrics::update(const LiveSnapshot& total) {
  const prometheus::Labels base = {{"loadtest", labels_.loadtest},
                                   {"namespace", labels_.namespace_},
                                   {"worker", labels_.worker},
                                   {"protocol", labels_.protocol},
                                   {"engine", labels_.engine}};
  auto with = [&](std::initializer_list<std::pair<const std::string, std::string>> extra) {
    prometheus::Labels l = base;
    l.insert(extra);
    return l;
  };
  auto increase = [](prometheus::Counter& c, uint64_t now, uint64_t before) {
    if (now > before) c.Increment(static_cast<double>(now - before));
  };
  const LiveSnapshot::PerRequest empty;
  for (size_t i = 0; i < request_names_.size() && i < total.requests.size(); ++i) {
    const auto& now = total.requests[i];
    const auto& before = i < last_.requests.size() ? last_.requests[i] : empty;
    const std::string& name = request_names_[i];
    std::set<int>& coded = coded_[i];
    uint64_t other_now = 0, other_before = 0;
    for (const auto& [code, count] : now.status_codes) {
      const auto it = before.status_codes.find(code);
      const uint64_t was = it == before.status_codes.end() ? 0 : it->second;
      if (!coded.contains(code) && coded.size() >= kMaxCodeSeries) {
        other_now += count;
        other_before += was;
        continue;
      }
      coded.insert(code);
      increase(families_->requests.Add(with({{"request", name}, {"code", std::to_string(code)}})),
               count, was);
    }
    if (other_now > 0) {
      increase(families_->requests.Add(with({{"request", name}, {"code", "other"}})), other_now,
               other_before);
    }
    increase(families_->requests.Add(with({{"request", name}, {"code", "0"}})),
             failed_before_status(now), failed_before_status(before));
    for (ErrorKind kind : kAllErrorKinds) {
      increase(families_->errors.Add(with({{"request", name}, {"kind", to_string(kind)}})),
               now.errors[kind], before.errors[kind]);
    }
    increase(families_->bytes_received.Add(with({{"request", name}})), now.bytes_received,
             before.bytes_received);
    increase(families_->bytes_sent.Add(with({{"request", name}})), now.bytes_sent,
             before.bytes_sent);
    observe_increase(
        families_->duration.Add(with({{"request", name}}),
                                prometheus::Histogram::BucketBoundaries(live_latency_bounds())),
        now.latency_buckets, now.latency_count, now.latency_sum_seconds, before.latency_buckets,
        before.latency_count, before.latency_sum_seconds);
  }
  const LiveSnapshot::PerScenario no_iterations;
  for (size_t i = 0; i < scenario_names_.size() && i < total.scenarios.size(); ++i) {
    const auto& now = total.scenarios[i];
    const auto& before = i < last_.scenarios.size() ? last_.scenarios[i] : no_iterations;
    const auto labels = with({{"scenario", scenario_names_[i]}});
    increase(families_->iterations.Add(labels), now.iterations, before.iterations);
    increase(families_->failed_iterations.Add(labels), now.failed, before.failed);
    observe_increase(families_->iteration_duration.Add(
                         labels, prometheus::Histogram::BucketBoundaries(live_latency_bounds())),
                     now.duration_buckets, now.duration_count, now.duration_sum_seconds,
                     before.duration_buckets, before.duration_count, before.duration_sum_seconds);
  }
  families_->connections_open.Add(base).Set(static_cast<double>(total.connections_open));
  families_->in_flight.Add(base).Set(static_cast<double>(total.in_flight));
  families_->target_rate.Add(base).Set(total.target_rate);
  increase(families_->late.Add(base), total.late, last_.late);
  increase(families_->dropped.Add(base), total.dropped, last_.dropped);
  families_->stage.Add(base).Set(total.stage);
  last_ = total;
}

void add_snapshot(LiveSnapshot& total, const LiveSnapshot& part) {
  if (total.requests.size() < part.requests.size()) total.requests.resize(part.requests.size());
  for (size_t i = 0; i < part.requests.size(); ++i) {
    auto& t = total.requests[i];
    const auto& p = part.requests[i];
    t.requests += p.requests;
    for (const auto& [code, count] : p.status_codes) t.status_codes[code] += count;
    t.errors.add(p.errors);
    t.bytes_received += p.bytes_received;
    t.bytes_sent += p.bytes_sent;
    if (t.latency_buckets.size() < p.latency_buckets.size()) {
      t.latency_buckets.resize(p.latency_buckets.size(), 0);
    }
    for (size_t b = 0; b < p.latency_buckets.size(); ++b)
      t.latency_buckets[b] += p.latency_buckets[b];
    t.latency_sum_seconds += p.latency_sum_seconds;
    t.latency_count += p.latency_count;
  }
  if (total.scenarios.size() < part.scenarios.size()) total.scenarios.resize(part.scenarios.size());
  for (size_t i = 0; i < part.scenarios.size(); ++i) {
    auto& t = total.scenarios[i];
    const auto& p = part.scenarios[i];
    t.iterations += p.iterations;
    t.failed += p.failed;
    if (t.duration_buckets.size() < p.duration_buckets.size()) {
      t.duration_buckets.resize(p.duration_buckets.size(), 0);
    }
    for (size_t b = 0; b < p.duration_buckets.size(); ++b)
      t.duration_buckets[b] += p.duration_buckets[b];
    t.duration_sum_seconds += p.duration_sum_seconds;
    t.duration_count += p.duration_count;
  }
  total.warmup_requests += part.warmup_requests;
  total.connections_open += part.connections_open;
  total.in_flight += part.in_flight;
  total.late += part.late;
  total.dropped += part.dropped;
  total.stage = std::max(total.stage, part.stage);
  // Threads run side by side, so the run has been counting as long as the longest.
  total.counted_seconds = std::max(total.counted_seconds, part.counted_seconds);
  total.target_rate += part.target_rate;
  total.done = total.done && part.done;
}

}  // namespace kubeload::loadgen
