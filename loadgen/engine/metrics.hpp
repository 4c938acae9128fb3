#pragma once
// Live Prometheus metrics of a running load generator (names in api.md),
// served with prometheus-cpp's exposer. The controller thread feeds them from
// the workers' snapshots; the hot path never touches them.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "loadgen/engine/worker.hpp"

namespace prometheus {
class Exposer;
class Registry;
}  // namespace prometheus

namespace kubeload::loadgen {

struct MetricLabels {
  std::string loadtest;  // the LoadTest (or "local")
  std::string namespace_;
  std::string worker;              // worker index in a distributed run, "0" locally
  std::string protocol = "http1";  // spec.target.protocol: http1 | http2 | h2c
  std::string engine = "epoll";    // io_uring | epoll | asio (engine_choice.hpp)
};

class LiveMetrics {
 public:
  // The status codes of one request that get a `code` series of their own:
  // the first this many seen. A target answering with ever new codes (any
  // 100-999 parses) adds no series beyond them: the rest count as
  // code="other", so one target cannot grow a worker's series without bound.
  static constexpr std::size_t kMaxCodeSeries = 16;

  // Throws std::runtime_error naming the address when it cannot listen.
  // `scenario_names`: a scenario run's scenarios, whose iterations get
  // series of their own (label `scenario`); the steps are the requests.
  LiveMetrics(const std::string& listen_address, MetricLabels labels,
              std::vector<std::string> request_names, std::vector<std::string> scenario_names = {});
  // Without an exposer, for callers that serve the registry themselves.
  LiveMetrics(MetricLabels labels, std::vector<std::string> request_names,
              std::vector<std::string> scenario_names = {});
  ~LiveMetrics();
  LiveMetrics(const LiveMetrics&) = delete;
  LiveMetrics& operator=(const LiveMetrics&) = delete;

  // The sum of all workers' snapshots; counters only move forward.
  void update(const LiveSnapshot& total);
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }
  // The port actually bound (useful with port 0).
  uint16_t port() const;

 private:
  struct Families;
  MetricLabels labels_;
  std::vector<std::string> request_names_;
  std::vector<std::string> scenario_names_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> families_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  LiveSnapshot last_;
  std::vector<std::set<int>> coded_;  // per request: the codes with a series of their own
};

// Adds `part` into `total` (per request index, plus the scalars).
void add_snapshot(LiveSnapshot& total, const LiveSnapshot& part);

}  // namespace kubeload::loadgen
