#pragma once
// The operator's side of the worker protocol (loadgen/worker_server/worker_server.hpp):
// start the barrier, pull results, acknowledge the final one. Plain HTTP to
// the worker pods' IPs; every call is bounded by a timeout.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kubeload/api/result_limits.hpp"
#include "operator/byte_budget.hpp"
#include "operator/worker_result_parser.hpp"

namespace kubeload::controller {

struct WorkerAddress {
  std::string ip;
  uint16_t port = 8080;
  std::string token;  // the run's token (worker_token), sent as a bearer token
  std::string base_url() const;
};

// What of a worker's error answer is quoted in the operator's messages.
inline constexpr std::size_t kMaxQuotedWorkerBytes = 256;
// What one read of an answer takes at most.
inline constexpr std::size_t kAnswerReadBytes = 64 * 1024;
// The longest answer header read (a worker's is a few hundred bytes).
inline constexpr std::size_t kAnswerHeaderBytes = 8 * 1024;
// What a call holds before its answer's header says how long the body is:
// the read buffer and the header. A /result call leases this from the budget
// before it connects.
inline constexpr std::size_t kResultCallBytes = kAnswerReadBytes + kAnswerHeaderBytes;

// One connection per call, made and read on the calling thread with
// Boost.Beast (the controller's pass runs up to --worker-calls of them at
// once): no thread hand-off per read, as cpprestsdk's tasks had (the
// operator's CPU at 1,000 workers: docs/benchmarks.md).
class WorkerClient {
 public:
  explicit WorkerClient(std::chrono::milliseconds timeout = std::chrono::seconds(5))
      : timeout_(timeout), results_(std::make_unique<WorkerResultParser>()) {}

  // Each returns nullopt/false with `error` set ("10.0.0.3:8080: connection refused").
  bool start(const WorkerAddress& worker, int64_t start_at_unix_ms, std::string& error) const;
  // /result within `limits` (api::result_limits of the run's spec): a longer
  // answer is refused as its header or its body passes the byte limit, and one
  // with more values or deeper nesting than the spec's rows allow as the
  // parse meets them, before more of it is built (WorkerResultParser, as
  // api::parse_bounded_result). `token_refused`, when given, says whether the worker answered 401
  // or 403: it refused the token, so it was started by an operator with another key. A `wait` asks
  // a worker whose run is not over to answer when it is, or after `wait` with its partial result
  // (GET /result?wait=): the whole call, connect included, may then take its timeout plus `wait`.
  // `lease`, when given, holds kResultCallBytes until the answer's header arrives and is then
  // resized to what the answer will hold (kResultCallBytes plus WorkerResultParser::peak_bytes of
  // its Content-Length, or of the byte limit when it has none) before the body is read: a worker
  // that holds its answer until its run ends holds little of the budget, and a 15 KB answer takes
  // no more of it than it needs. Waiting for the budget does not count against the timeout.
  std::optional<nlohmann::json> result(const WorkerAddress& worker, const api::ResultLimits& limits,
                                       std::string& error, bool* token_refused = nullptr,
                                       std::chrono::milliseconds wait = {},
                                       ByteBudget::Lease* lease = nullptr) const;
  bool finish(const WorkerAddress& worker, std::string& error) const;

 private:
  // A /result call's lease and the limits its answer is read within; `{}`: none.
  struct AnswerLease {
    ByteBudget::Lease* lease;
    const api::ResultLimits* limits;
  };
  // The answer's body, at most `max_bytes` of it, within the timeout plus `wait`; the lease
  // resized as result() says.
  std::optional<std::string> call(const WorkerAddress& worker, const std::string& method,
                                  const std::string& path, std::size_t max_bytes, int& status,
                                  std::string& error, std::chrono::milliseconds wait = {},
                                  AnswerLease lease = {}) const;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<WorkerResultParser> results_;
};

}  // namespace kubeload::controller
