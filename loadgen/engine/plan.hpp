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

#include <memory>
#include "loadgen/engine/engine_choice.hpp"

namespace kubeload::loadgen {

struct ScenarioPlan;

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
  // The same request as HTTP/2 fields: pseudo-headers first (:method,
  // :scheme, :authority, :path), then the headers with lower-case names
  // (no connection-specific ones, RFC 9113 section 8.2.2), and the body.
  std::vector<std::pair<std::string, std::string>> h2_fields;
  std::string body;

  bool is_success_status(int status) const noexcept;
};

// The header lines every request carries before its own: Host, User-Agent
// and Accept unless `headers` has them, and `Connection: close` without
// keep-alive. One spelling for fixed requests and scenario steps.
std::string standard_header_lines(const Target& target,
                                  const std::vector<std::pair<std::string, std::string>>& headers,
                                  bool keep_alive);
// Whether a header is one the request framing writes itself (Content-Length,
// Connection), so a given one is left out.
bool is_framing_header(std::string_view name) noexcept;

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
  int stage_index = 0;                   // the result row; unused for warm-up
  std::chrono::nanoseconds duration{0};  // 0: no time limit (ends by count)
  // Ends after this many requests (the warm-up's; counted phases share
  // RunPlan::total_request_budget).
  std::optional<uint64_t> request_budget;
  uint64_t connections = 0;  // closed model, this part's
  // Open model: the rate of the whole arrival sequence (every worker and
  // thread together); a part sends only its turns of it (ArrivalTurns).
  double rate = 0;
};

// The open model's one arrival sequence: arrival k of a phase is intended at
// phase start + k / rate. A part (worker pod, thread) takes the arrivals
// k = offset, offset + stride, offset + 2 stride, ...: the parts interleave
// instead of each following the whole schedule, so any window holds
// rate x window arrivals, +-1, however many parts there are.
struct ArrivalTurns {
  uint64_t offset = 0;
  uint64_t stride = 1;
  bool operator==(const ArrivalTurns&) const = default;
};

struct RunPlan {
  Target target;
  TlsOptions tls;
  // Also resend POST and PATCH on a stale keep-alive connection (the server
  // may have processed them): --retry-non-idempotent.
  bool retry_non_idempotent = false;
  std::vector<RequestTemplate> requests;
  bool open_model = false;
  uint64_t max_connections = 0;  // open model cap
  std::vector<Phase> phases;     // warm-up first when there is one
  // -n across all counted phases. Closed model: this part's share (the
  // threads of a process claim it from one counter); open model: the index
  // in the whole arrival sequence at which counted arrivals stop.
  std::optional<uint64_t> total_request_budget;
  ArrivalTurns turns;  // open model
  // Which part of the whole run this plan is, in both models: part `offset`
  // of `stride` (worker pods x threads, as split_plan and
  // split_plan_for_thread compose it). Scenarios number their virtual users
  // and hand out `unique` data rows by it.
  ArrivalTurns part;
  uint32_t worker_index = 0;  // the worker pod (split_plan's index): ${worker}
  // The compiled scenarios (scenario_plan.hpp); null for a run of fixed
  // requests. Then `requests` holds one row per step name.
  std::shared_ptr<const ScenarioPlan> scenarios;
  std::chrono::nanoseconds timeout = std::chrono::seconds(30);
  bool keep_alive = true;
  uint32_t threads = 1;
  Protocol protocol = Protocol::http1;
  uint32_t max_streams = 1;  // HTTP/2: concurrent streams per connection
  // --allow-http1: with http2, a server that negotiates http/1.1 (ALPN) is
  // loaded over HTTP/1.1 instead of stopping the run.
  bool allow_http1 = false;
  // The loop asked for (engine_choice.hpp decides it once per process);
  // engine_used() is what carries the run.
  Engine engine = Engine::epoll;

  bool http2() const noexcept { return protocol != Protocol::http1; }
  Traffic traffic() const noexcept {
    if (target.tls()) return http2() ? Traffic::h2_tls : Traffic::tls_http1;
    return http2() ? Traffic::h2c : Traffic::plain_http1;
  }
  // What carries the connections, as the result, the reports and the
  // metrics name it: `engine` where it can (io_uring for HTTP/1.1, plain or
  // over TLS, and h2c; epoll for HTTP/1.1), Asio for the rest (HTTP/2 over
  // TLS; h2c off io_uring). Read after the TLS check: an http2 target whose
  // server chose HTTP/1.1 (--allow-http1) runs as HTTP/1.1 over TLS, on
  // epoll (its engine was decided for HTTP/2 over TLS: Asio).
  Engine engine_used() const noexcept {
    switch (traffic()) {
      case Traffic::tls_http1:
        return engine == Engine::io_uring ? Engine::io_uring : Engine::epoll;
      case Traffic::h2_tls:
        return Engine::asio;
      case Traffic::h2c:
        return engine == Engine::io_uring ? Engine::io_uring : Engine::asio;
      case Traffic::plain_http1:
        break;
    }
    return engine;
  }
  // What the workers schedule requests on: one per connection for
  // HTTP/1.1, max_streams per connection for HTTP/2.
  uint64_t lanes_per_connection() const noexcept { return http2() ? max_streams : 1; }

  int stage_count() const;
  uint64_t max_phase_connections() const;  // connections to preallocate
  // `threads`, capped at the connections the plan can use at once: in the
  // closed model those of its largest phase (a phase with fewer connections
  // leaves some threads idle, and they claim none of the request budget), in
  // the open model max_connections (each thread needs one of its own).
  uint32_t usable_threads() const;
  // Open model: this part's share of the arrival rate of `phase`.
  double rate_of_part(const Phase& phase) const noexcept;
};

// The share of `total` that part `index` of `parts` takes: shares differ by at
// most one and add up to `total` exactly.
uint64_t share_of(uint64_t total, uint32_t index, uint32_t parts) noexcept;
// `total` split in proportion to `weights` (largest remainders, ties to the
// lower index): the shares add up to `total` exactly; all-zero weights split
// evenly (share_of).
uint64_t proportional_share(uint64_t total, const std::vector<uint64_t>& weights,
                            uint32_t index) noexcept;

// The part of a plan that worker pod `index` of `parts` runs. Closed model:
// each phase's connections split by share_of, request budgets in proportion
// to the connections that send them (a pod with few connections must not
// hold back a large share). Open model: the pod's turns in the arrival
// sequence; rates and budgets stay those of the whole sequence.
RunPlan split_plan(const RunPlan& plan, uint32_t index, uint32_t parts);
// The part of a process's plan that thread `index` of `parts` runs:
// connections and arrival turns split like split_plan, request budgets not at
// all (the threads claim them from one counter, see SharedBudgets).
RunPlan split_plan_for_thread(const RunPlan& plan, uint32_t index, uint32_t parts);

// How many requests a thread claims from a shared budget at once: small
// blocks, so no thread holds back much of the end of a budget, and no atomic
// operation per request on large budgets.
uint64_t budget_block(uint64_t budget, uint32_t threads) noexcept;

// Open model: offset of arrival `k` from its phase start at `rate`.
std::chrono::nanoseconds arrival_offset(uint64_t k, double rate) noexcept;
// Open model: how many arrivals of the whole sequence fall in [0, length).
uint64_t arrivals_within(std::chrono::nanoseconds length, double rate) noexcept;

// The result rows of the scenarios' steps, one per distinct step name in
// order of first appearance (steps of several scenarios that share a name
// share a row, as JMeter's samplers with one label do).
std::vector<std::string> step_rows(const LoadTestSpec& spec);

// A LoadTest spec (already validated) as a local plan. `target_url` is the
// resolved target (the spec's url, or a service address made reachable).
RunPlan plan_from_spec(const LoadTestSpec& spec, const Target& target, uint32_t threads);

}  // namespace kubeload::loadgen
