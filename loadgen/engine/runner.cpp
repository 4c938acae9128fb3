#include "loadgen/engine/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "loadgen/engine/cpu_meter.hpp"
#include "loadgen/engine/metrics.hpp"
#include "loadgen/engine/network.hpp"
#include "loadgen/engine/worker.hpp"

namespace kubeload::loadgen {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr auto kProgressInterval = std::chrono::seconds(1);

class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled), tty_(isatty(STDERR_FILENO) == 1) {}

  void show(const LiveSnapshot& s, double elapsed_seconds, int stage_count) {
    if (!enabled_) return;
    uint64_t requests = 0, errors = 0;
    for (const auto& r : s.requests) {
      requests += r.requests;
      errors += r.errors.total();
    }
    const double rps =
        elapsed_seconds > 0 ? (requests - last_requests_) / (elapsed_seconds - last_elapsed_) : 0;
    last_requests_ = requests;
    last_elapsed_ = elapsed_seconds;
    char stage[48] = "";
    if (s.stage < 0) {
      std::snprintf(stage, sizeof stage, "warm-up (%" PRIu64 " sent)  ", s.warmup_requests);
    } else if (stage_count > 1) {
      std::snprintf(stage, sizeof stage, "stage %d/%d  ", s.stage + 1, stage_count);
    }
    if (tty_) {
      std::fprintf(stderr,
                   "\r[%6.1fs] %s%" PRIu64 " requests  %.0f req/s  %" PRIu64 " errors  %" PRIu64
                   " open   ",
                   elapsed_seconds, stage, requests, rps, errors, s.connections_open);
    } else {
      std::fprintf(stderr, "[%6.1fs] %sCompleted %" PRIu64 " requests (%" PRIu64 " errors)\n",
                   elapsed_seconds, stage, requests, errors);
    }
    std::fflush(stderr);
  }

  void done() {
    if (enabled_ && tty_) std::fputc('\n', stderr);
  }

 private:
  bool enabled_;
  bool tty_;
  uint64_t last_requests_ = 0;
  double last_elapsed_ = 0;
};

}  // namespace

RunOutcome run_plan(const RunPlan& planned, const RunOptions& options) {
  const TargetAccess access = prepare_target(planned, options.target_policy);
  // An http2 target that negotiated http/1.1 is loaded over HTTP/1.1 (--allow-http1).
  RunPlan plan = planned;
  plan.protocol = access.protocol;

  const std::atomic<bool> never(false);
  const std::atomic<bool>& stop = options.stop != nullptr ? *options.stop : never;
  const uint32_t threads = plan.usable_threads();
  const auto budgets = std::make_shared<SharedBudgets>(plan, threads);
  std::vector<std::unique_ptr<Worker>> workers;
  for (uint32_t i = 0; i < threads; ++i) {
    workers.push_back(std::make_unique<Worker>(split_plan_for_thread(plan, i, threads),
                                               access.endpoints, access.tls.get(), stop,
                                               options.metrics != nullptr, budgets));
  }

  // The CPU is measured over the counted run: a warm-up's, with connections
  // still opening, is not the load the results describe.
  const CpuAllowance cpu_allowance = read_cpu_allowance();
  const bool has_warmup = !plan.phases.empty() && plan.phases.front().warmup;
  std::optional<CpuReading> cpu_start;
  if (!has_warmup) cpu_start = read_cpu();

  std::atomic<uint32_t> running(threads);
  std::vector<std::thread> pool;
  const Clock::time_point start = Clock::now();
  for (auto& worker : workers) {
    pool.emplace_back([&worker, &running, start] {
      worker->run(start);
      running.fetch_sub(1);
    });
  }

  Progress progress(options.progress);
  Clock::time_point next_progress = start + kProgressInterval;
  auto collect = [&] {
    LiveSnapshot total;
    total.done = true;
    for (const auto& worker : workers) add_snapshot(total, worker->snapshot());
    return total;
  };
  // Every thread has left the warm-up (or ended): the counted run began.
  const auto warmup_over = [&] {
    return std::all_of(workers.begin(), workers.end(), [](const auto& worker) {
      const LiveSnapshot s = worker->snapshot();
      return s.stage >= 0 || s.done;
    });
  };
  while (running.load() > 0) {
    std::this_thread::sleep_for(kPollInterval);
    if (!cpu_start && warmup_over()) cpu_start = read_cpu();
    const Clock::time_point now = Clock::now();
    if (now < next_progress) continue;
    next_progress += kProgressInterval;
    const LiveSnapshot total = collect();
    if (options.metrics != nullptr) options.metrics->update(total);
    if (options.on_progress) options.on_progress(total);
    progress.show(total, std::chrono::duration<double>(now - start).count(), plan.stage_count());
  }
  for (auto& t : pool) t.join();
  const CpuReading cpu_end = read_cpu();
  progress.done();
  const LiveSnapshot final_numbers = collect();
  if (options.metrics != nullptr) options.metrics->update(final_numbers);
  if (options.on_progress) options.on_progress(final_numbers);

  RunOutcome outcome;
  outcome.interrupted = stop.load();
  if (cpu_start && cpu_end.at > cpu_start->at) {
    outcome.cpu = cpu_use_between(*cpu_start, cpu_end, cpu_allowance);
  }
  for (const auto& worker : workers) {
    if (const int error = worker->registered_files_error(); error != 0) {
      const char* name = strerrorname_np(error);
      outcome.engine_note =
          std::string("io_uring: the kernel refused a registered file table (") +
          (name != nullptr ? name : std::to_string(error).c_str()) +
          (error == EMFILE ? ": more connections per thread than RLIMIT_NOFILE's hard limit or "
                             "the kernel's table allow"
                           : "") +
          "): the sockets are ordinary descriptors, looked up for every operation";
      break;
    }
  }
  outcome.result = workers.front()->result();
  for (size_t i = 1; i < workers.size(); ++i) outcome.result.merge(workers[i]->result());

  RunInfo& info = outcome.info;
  info.url = plan.target.url;
  info.scheme = plan.target.scheme;
  info.host = plan.target.host;
  info.port = plan.target.port;
  info.path = plan.target.path;
  info.threads = threads;
  info.keep_alive = plan.keep_alive;
  info.protocol = to_string(plan.protocol);
  info.max_streams = static_cast<uint32_t>(plan.lanes_per_connection());
  info.tls_protocol = access.tls_description;
  info.engine = to_string(plan.engine_used());
  for (const Phase& phase : plan.phases) {
    if (phase.warmup) continue;
    if (plan.open_model) {
      info.rate = plan.rate_of_part(phase);
    } else {
      info.connections = phase.connections;
    }
    break;
  }
  for (const auto& worker : workers) {
    const FirstResponse first = worker->first_response();
    if (first.seen) {
      info.server_software = first.server;
      info.document_length = first.body_length;
      break;
    }
  }
  return outcome;
}

}  // namespace kubeload::loadgen
