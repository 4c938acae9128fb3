#pragma once
// A RunPlan is everything one loadgen process needs to run: the target, the
// requests serialized once, and the phases (warm-up, then one or more stages).
// The CLI and `loadgen run` both build one; workers only read it.

#include <bitset>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeload/spec.hpp"

namespace kubeload::loadgen {

struct Target {
  std::string url;
  std::string scheme;  // "http" | "https"
  std::string host;
  uint16_t port = 80;
  std::string path;  // path and query, at least "/"
  bool tls() const { return scheme == "https"; }
  std::string host_header() const;  // host[:port], port omitted when default
};

// Parses an http:// or https:// URL; nullopt with `error` set otherwise.
std::optional<Target> parse_target(std::string_view url, std::string& error);

struct RequestTemplate {
  std::string name;
  std::string method = "GET";
  std::string wire;  // the request exactly as sent, built once
  bool head = false;
  uint32_t weight = 1;
  std::bitset<600> expected_status;  // empty: 2xx and 3xx succeed
  std::optional<uint64_t> expected_length;

  bool is_success_status(int status) const noexcept;
};

// Builds the wire form: request line, Host, User-Agent, Connection (when not
// keep-alive), the given headers, Content-Length for a body, then the body.
RequestTemplate make_request(const Target& target, std::string name, std::string method,
                             std::string path,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             const std::string& body, bool keep_alive);

// How https connections are made. Certificates are verified by default: the
// requests may carry credentials (headers from Secrets).
struct TlsOptions {
  bool verify = true;   // false: --insecure / spec.target.tls.insecureSkipVerify
  std::string ca_file;  // PEM CA bundle to verify against instead of the system store
  bool resume = true;   // reuse the TLS session on reconnect (false: --no-tls-resume)
};

// RFC 9110 section 9.2.2: a request with one of these methods may be sent
// again when the connection failed before any response arrived.
bool is_idempotent_method(std::string_view method) noexcept;

struct Phase {
  bool warmup = false;
  int stage_index = 0;                     // the result row; unused for warm-up
  std::chrono::nanoseconds duration{0};    // 0: no time limit (ends by count)
  std::optional<uint64_t> request_budget;  // ends after this many requests
  uint64_t connections = 0;                // closed model
  double rate = 0;                         // open model, requests/s
};

struct RunPlan {
  Target target;
  TlsOptions tls;
  // Also resend POST and PATCH on a stale keep-alive connection (the server
  // may have processed them): --retry-non-idempotent.
  bool retry_non_idempotent = false;
  std::vector<RequestTemplate> requests;
  bool open_model = false;
  uint64_t max_connections = 0;                  // open model cap
  std::vector<Phase> phases;                     // warm-up first when there is one
  std::optional<uint64_t> total_request_budget;  // -n across all counted phases
  std::chrono::nanoseconds timeout = std::chrono::seconds(30);
  bool keep_alive = true;
  uint32_t threads = 1;

  int stage_count() const;
  uint64_t max_phase_connections() const;  // connections to preallocate
  // `threads`, capped in the closed model at the connections of its smallest
  // phase: a thread without a connection would still get a share of the
  // request budget and could never send it.
  uint32_t usable_threads() const;
};

// The share of `total` that part `index` of `parts` takes: shares differ by at
// most one and add up to `total` exactly.
uint64_t share_of(uint64_t total, uint32_t index, uint32_t parts) noexcept;
double rate_share(double total, uint32_t parts) noexcept;

// The part of a plan that one worker thread (or pod) runs: connections, rate
// and request budgets split exactly.
RunPlan split_plan(const RunPlan& plan, uint32_t index, uint32_t parts);

// A LoadTest spec (already validated) as a local plan. `target_url` is the
// resolved target (the spec's url, or a service address made reachable).
RunPlan plan_from_spec(const LoadTestSpec& spec, const Target& target, uint32_t threads);

}  // namespace kubeload::loadgen
