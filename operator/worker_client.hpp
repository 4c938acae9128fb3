#pragma once
// The operator's side of the worker protocol (loadgen/worker_server.hpp):
// start the barrier, pull results, acknowledge the final one. Plain HTTP to
// the worker pods' IPs; every call is bounded by a timeout.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kubeload::controller {

struct WorkerAddress {
  std::string ip;
  uint16_t port = 8080;
  std::string base_url() const;
};

class WorkerClient {
 public:
  explicit WorkerClient(std::chrono::milliseconds timeout = std::chrono::seconds(5))
      : timeout_(timeout) {}

  // Each returns nullopt/false with `error` set ("10.0.0.3:8080: connection refused").
  bool start(const WorkerAddress& worker, int64_t start_at_unix_ms, std::string& error) const;
  std::optional<nlohmann::json> result(const WorkerAddress& worker, std::string& error) const;
  bool finish(const WorkerAddress& worker, std::string& error) const;

 private:
  std::optional<std::string> call(const WorkerAddress& worker, const std::string& method,
                                  const std::string& path, int& status, std::string& error) const;
  std::chrono::milliseconds timeout_;
};

}  // namespace kubeload::controller
