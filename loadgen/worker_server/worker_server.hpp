#pragma once
// `loadgen worker`: the pod side of a distributed run. The worker takes its
// share of a LoadTest (index i of n), serves its state over HTTP and runs when
// the operator says so, so that all workers start together:
//   GET  /healthz, /readyz   200 once the worker can run
//   POST /start[?at=UNIX_MS] starts the run (at that wall-clock time, if given)
//   GET  /result[?wait=MS]   the result document: partial while running, final after
//                            (the final one written row by row as it is sent, with its length);
//                            with wait, a running worker answers when its run ends,
//                            or after MS with the partial document
//   POST /finish             the final result is safely stored: the worker may exit
//   GET  /metrics            live Prometheus metrics
// /start, /result and /finish need the run's token (`Authorization: Bearer
// TOKEN`; 401 without it, 403 with another): the operator derives one per
// LoadTest and hands it to the pods through a Secret, so no other pod in the
// cluster can drive or read a worker. The control server bounds what a client
// may cost it: request size, concurrent connections, and time per request.
// After the run it writes a compact summary to the termination log and stays
// up until the operator acknowledged the final result (or a bounded wait ends),
// so an operator restarted mid-collection can still fetch it.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kubeload/spec.hpp"
#include "kubeload/target_policy.hpp"

namespace kubeload::loadgen {

// A start time further than this from the worker's clock (either way) is refused:
// the operator sends "now + a few seconds", so anything else is not from it.
inline constexpr std::chrono::minutes kMaxStartSkew{10};
// Limits of the control server.
inline constexpr std::size_t kMaxControlRequestBytes = 16 * 1024;  // headers and body
inline constexpr std::size_t kMaxControlConnections = 64;
inline constexpr std::chrono::seconds kControlRequestTimeout{10};

enum class ControlAuth { ok, missing, wrong };
// Checks an Authorization header value against the token, in constant time.
ControlAuth check_control_token(std::string_view authorization, std::string_view token);
// What the control server answers a request's header with, before its body
// is read: the control paths (/start, /result, /finish) need the run's token
// (401 without one, 403 with another); every other path goes on.
bool is_control_path(std::string_view target);
enum class ControlHeaderAnswer { proceed, unauthorized, forbidden };
ControlHeaderAnswer control_header_answer(std::string_view target, std::string_view authorization,
                                          std::string_view token);
// POST /start[?at=UNIX_MS]: the wall-clock start it asks for, 0 for "at once";
// nullopt when `at` is not a whole number of milliseconds.
std::optional<int64_t> requested_start_ms(std::string_view target);
// Why POST /start?at=AT_MS is refused at NOW_MS, or nullopt when it is fine.
std::optional<std::string> start_time_problem(int64_t at_ms, int64_t now_ms);
// The longest a GET /result?wait= is held: the operator asks this way from
// just before a run's planned end, so that each worker's final result
// reaches it the moment the worker has it, not at its next poll.
inline constexpr std::chrono::milliseconds kMaxResultWait{10'000};
// GET /result[?wait=MS]: how long the answer may wait for the final result
// (0 without `wait`; more than kMaxResultWait is kMaxResultWait); nullopt
// when `wait` is not a whole, non-negative number of milliseconds.
std::optional<std::chrono::milliseconds> requested_result_wait(std::string_view target);

struct WorkerConfig {
  std::string listen = "0.0.0.0:8080";
  std::string token;  // required on /start, /result and /finish; never empty
  // The admin's target policy, when the operator passes one: checked when the
  // worker starts (a refused target makes it exit with the reason in its
  // termination message) and again on the addresses the run connects to.
  std::optional<TargetPolicy> target_policy;
  LoadTestSpec spec;
  std::string target_url;  // the resolved target (url, or the Service's URL)
  uint32_t index = 0;      // this worker's index
  uint32_t count = 1;      // how many workers share the load
  uint32_t threads = 1;
  std::string ca_file;  // --cacert: spec.target.tls.caFrom as mounted by the operator
  std::string termination_log = "/dev/termination-log";
  std::chrono::seconds linger{300};  // how long to wait for POST /finish after the run
  // The LoadTest's metadata.uid, served in /result as loadTestUid so the
  // operator merges only its own run's documents.
  std::string loadtest_uid;
};

// Returns the process exit status: 0 after a complete run, 1 when a stop
// signal cut the run short or came before the start. Throws std::runtime_error when it cannot
// listen or the target is invalid.
int run_worker(const WorkerConfig& config, const std::atomic<bool>& stop);

}  // namespace kubeload::loadgen
