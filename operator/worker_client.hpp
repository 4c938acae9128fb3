#pragma once
// The operator's side of the worker protocol (loadgen/worker_server/worker_server.hpp):
// start the barrier, pull results, acknowledge the final one. Plain HTTP to
// the worker pods' IPs; every call is bounded by a timeout.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kubeload::controller {

struct WorkerAddress {
  std::string ip;
  uint16_t port = 8080;
  std::string token;  // the run's token (worker_token), sent as a bearer token
  std::string base_url() const;
};

// A worker's /result: its size is capped before anything is parsed (the rows and
// histogram layouts are checked by run_result_from_json). 200 rows of three
// dense default-layout histograms stay well under it.
inline constexpr std::size_t kMaxWorkerResponseBytes = 64 * 1024 * 1024;
// What of a worker's error answer is quoted in the operator's messages.
inline constexpr std::size_t kMaxQuotedWorkerBytes = 256;

// One connection per call, made and read on the calling thread with
// Boost.Beast (the controller's pass runs up to --worker-calls of them at
// once): no thread hand-off per read, as cpprestsdk's tasks had (the
// operator's CPU at 1,000 workers: docs/benchmarks.md).
class WorkerClient {
 public:
  explicit WorkerClient(std::chrono::milliseconds timeout = std::chrono::seconds(5),
                        std::size_t max_response_bytes = kMaxWorkerResponseBytes)
      : timeout_(timeout), max_response_bytes_(max_response_bytes) {}

  // Each returns nullopt/false with `error` set ("10.0.0.3:8080: connection refused").
  bool start(const WorkerAddress& worker, int64_t start_at_unix_ms, std::string& error) const;
  // `token_refused`, when given, says whether the worker answered 401 or 403:
  // it refused the token, so it was started by an operator with another key.
  std::optional<nlohmann::json> result(const WorkerAddress& worker, std::string& error,
                                       bool* token_refused = nullptr) const;
  bool finish(const WorkerAddress& worker, std::string& error) const;

 private:
  std::optional<std::string> call(const WorkerAddress& worker, const std::string& method,
                                  const std::string& path, int& status, std::string& error) const;
  std::chrono::milliseconds timeout_;
  std::size_t max_response_bytes_;
};

}  // namespace kubeload::controller
