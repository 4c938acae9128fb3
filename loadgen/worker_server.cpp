#include "loadgen/worker_server.hpp"

#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "loadgen/asio.hpp"
#include "loadgen/metrics.hpp"
#include "loadgen/runner.hpp"

namespace kubeload::loadgen {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using nlohmann::json;

int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

tcp::endpoint parse_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    throw std::runtime_error("--listen: must be HOST:PORT, got \"" + listen + "\"");
  }
  std::string host = listen.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  unsigned long port = 0;
  try {
    port = std::stoul(listen.substr(colon + 1));
  } catch (const std::exception&) {
    port = 70000;
  }
  if (ec || port > 65535) throw std::runtime_error("--listen: invalid address \"" + listen + "\"");
  return tcp::endpoint(address, static_cast<uint16_t>(port));
}

// The result document while the run is going: counters only (histograms
// arrive with the final result).
json partial_document(const LiveSnapshot& s) {
  Result r;
  // Counted stages only, so the live rate is not diluted by the warm-up.
  r.duration_seconds = s.counted_seconds;
  for (const auto& row : s.requests) {
    r.requests += row.requests;
    for (const auto& [code, count] : row.status_codes) r.status_codes[code] += count;
    r.errors.add(row.errors);
    r.bytes_received += row.bytes_received;
    r.bytes_sent += row.bytes_sent;
  }
  json out;
  out["version"] = RunResult::kVersion;
  out["finished"] = false;
  out["warmupRequests"] = s.warmup_requests;
  to_json(out["result"], r, false);
  out["stage"] = s.stage;
  return out;
}

// What was planned for this worker's share, for "interrupted after N of M".
std::string planned_share(const RunPlan& plan) {
  std::chrono::nanoseconds time{0};
  std::optional<uint64_t> requests = plan.total_request_budget;
  bool unbounded_time = false;
  for (const Phase& phase : plan.phases) {
    if (phase.warmup) continue;
    if (phase.duration.count() == 0) unbounded_time = true;
    time += phase.duration;
  }
  std::string out;
  if (requests) out = std::to_string(*requests) + " requests";
  if (!unbounded_time && time.count() > 0) {
    if (!out.empty()) out += " or ";
    char seconds[64];
    std::snprintf(seconds, sizeof seconds, "%.1fs", std::chrono::duration<double>(time).count());
    out += seconds;
  }
  return out.empty() ? "the planned load" : out;
}

// A few headline numbers; a termination message is limited to 4 KiB.
std::string termination_summary(const RunResult& run, const std::string& error) {
  const Result& r = run.result;
  const LatencySummary latency = LatencySummary::of(r.latency);
  json out = {{"requests", r.requests},
              {"failures", r.failures()},
              {"rps", r.rps()},
              {"durationSeconds", r.duration_seconds},
              {"p50Ms", latency.p50},
              {"p99Ms", latency.p99},
              {"maxMs", latency.max},
              {"warmupRequests", run.warmup_requests},
              {"bytesReceived", r.bytes_received}};
  if (!error.empty()) out["error"] = error;
  return out.dump();
}

class WorkerService {
 public:
  WorkerService(const WorkerConfig& config, RunPlan plan)
      : config_(config), plan_(std::move(plan)) {
    std::vector<std::string> names;
    for (const auto& r : plan_.requests) names.push_back(r.name);
    metrics_ = std::make_unique<LiveMetrics>(
        MetricLabels{config.spec.name, config.spec.namespace_, std::to_string(config.index)},
        names);
  }
  ~WorkerService() {
    if (run_thread_.joinable()) run_thread_.join();
  }
  WorkerService(const WorkerService&) = delete;
  WorkerService& operator=(const WorkerService&) = delete;

  http::response<http::string_body> handle(const http::request<http::string_body>& request,
                                           const std::atomic<bool>& stop) {
    const std::string target(request.target());
    const std::string path = target.substr(0, target.find('?'));
    if (path == "/healthz" || path == "/readyz")
      return reply(http::status::ok, "ok\n", "text/plain");
    if (path == "/metrics") {
      std::ostringstream text;
      prometheus::TextSerializer().Serialize(text, metrics_->registry()->Collect());
      return reply(http::status::ok, text.str(), "text/plain; version=0.0.4");
    }
    if (path == "/start") {
      if (request.method() != http::verb::post) {
        return reply(http::status::method_not_allowed, "use POST /start\n", "text/plain");
      }
      return start(target, stop);
    }
    if (path == "/result") return result();
    if (path == "/finish") {
      if (request.method() != http::verb::post) {
        return reply(http::status::method_not_allowed, "use POST /finish\n", "text/plain");
      }
      return finish();
    }
    return reply(http::status::not_found, "no such path: " + path + "\n", "text/plain");
  }

  bool finished() const {
    std::lock_guard lock(mutex_);
    return final_.has_value();
  }
  bool started() const {
    std::lock_guard lock(mutex_);
    return started_;
  }
  bool collected() const {
    std::lock_guard lock(mutex_);
    return collected_;
  }
  bool failed() const {
    std::lock_guard lock(mutex_);
    return !error_.empty();
  }

 private:
  static http::response<http::string_body> reply(http::status status, std::string body,
                                                 const char* type) {
    http::response<http::string_body> response(status, 11);
    response.set(http::field::content_type, type);
    response.set(http::field::server, "kubeload-loadgen");
    response.body() = std::move(body);
    response.prepare_payload();
    return response;
  }

  http::response<http::string_body> start(const std::string& target,
                                          const std::atomic<bool>& stop) {
    int64_t at_ms = 0;
    if (const auto at = target.find("at="); at != std::string::npos) {
      try {
        at_ms = std::stoll(target.substr(at + 3));
      } catch (const std::exception&) {
        return reply(http::status::bad_request, "invalid start time in \"" + target + "\"\n",
                     "text/plain");
      }
    }
    std::lock_guard lock(mutex_);
    if (!started_) {
      started_ = true;
      run_thread_ = std::thread([this, at_ms, &stop] { run(at_ms, stop); });
    }
    json body = {{"started", true}, {"worker", config_.index}, {"startAt", at_ms}};
    return reply(http::status::accepted, body.dump() + "\n", "application/json");
  }

  void run(int64_t at_ms, const std::atomic<bool>& stop) {
    // Sleep in short steps so a stop during the wait is honoured.
    while (at_ms > unix_ms_now() && !stop.load()) {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::min<int64_t>(at_ms - unix_ms_now(), 50)));
    }
    {
      std::lock_guard lock(mutex_);
      started_at_ms_ = unix_ms_now();
    }
    RunOptions options;
    options.progress = false;
    options.stop = &stop;
    options.metrics = metrics_.get();
    options.on_progress = [this](const LiveSnapshot& s) {
      std::lock_guard lock(mutex_);
      latest_ = s;
    };
    RunResult result;
    std::string error;
    try {
      RunOutcome outcome = run_plan(plan_, options);
      result = std::move(outcome.result);
      if (outcome.interrupted) {
        // Eviction, node shutdown, preemption, a deleted pod: the share was
        // not run in full, so this worker failed, whatever it measured.
        char measured[64];
        std::snprintf(measured, sizeof measured, "%.1fs", result.result.duration_seconds);
        error = "interrupted (SIGTERM) after " + std::to_string(result.result.requests) +
                " requests in " + measured + " of " + planned_share(plan_);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::ofstream(config_.termination_log) << termination_summary(result, error);
    std::lock_guard lock(mutex_);
    error_ = std::move(error);
    final_ = std::move(result);
  }

  http::response<http::string_body> result() {
    std::lock_guard lock(mutex_);
    json document;
    if (final_) {
      document = to_json(*final_);
    } else {
      document = partial_document(latest_);
    }
    document["worker"] = config_.index;
    document["loadTestUid"] = config_.loadtest_uid;
    document["startedAtMs"] = started_at_ms_;
    if (!error_.empty()) document["error"] = error_;
    return reply(http::status::ok, document.dump() + "\n", "application/json");
  }

  // The operator acknowledges the final result once it is safely in the
  // LoadTest's status; until then the worker keeps serving it.
  http::response<http::string_body> finish() {
    std::lock_guard lock(mutex_);
    if (!final_) return reply(http::status::conflict, "the run has not finished\n", "text/plain");
    collected_ = true;
    return reply(http::status::ok, "{\"finished\":true}\n", "application/json");
  }

  const WorkerConfig& config_;
  RunPlan plan_;
  std::unique_ptr<LiveMetrics> metrics_;
  mutable std::mutex mutex_;
  bool started_ = false;
  bool collected_ = false;
  int64_t started_at_ms_ = 0;
  LiveSnapshot latest_;
  std::optional<RunResult> final_;
  std::string error_;
  std::thread run_thread_;
};

// One HTTP/1.1 session; the server is tiny and single-threaded.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, WorkerService& service, const std::atomic<bool>& stop)
      : socket_(std::move(socket)), service_(service), stop_(stop) {}
  void read() {
    request_ = {};
    http::async_read(socket_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return;
                       self->respond();
                     });
  }

 private:
  void respond() {
    response_ = service_.handle(request_, stop_);
    response_.keep_alive(request_.keep_alive());
    http::async_write(socket_, response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec || !self->response_.keep_alive()) {
                          beast::error_code ignored;
                          self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
                          return;
                        }
                        self->read();
                      });
  }

  tcp::socket socket_;
  WorkerService& service_;
  const std::atomic<bool>& stop_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

void accept(tcp::acceptor& acceptor, WorkerService& service, const std::atomic<bool>& stop) {
  acceptor.async_accept([&acceptor, &service, &stop](beast::error_code ec, tcp::socket socket) {
    if (ec) return;
    std::make_shared<Session>(std::move(socket), service, stop)->read();
    accept(acceptor, service, stop);
  });
}

}  // namespace

int run_worker(const WorkerConfig& config, const std::atomic<bool>& stop) {
  std::string error;
  const auto target = parse_target(config.target_url, error);
  if (!target) throw std::runtime_error(error);
  if (config.count == 0 || config.index >= config.count) {
    throw std::runtime_error("worker index " + std::to_string(config.index) + " is not below the " +
                             "worker count " + std::to_string(config.count));
  }
  const RunPlan whole = plan_from_spec(config.spec, *target, config.threads);
  RunPlan share = split_plan(whole, config.index, config.count);
  share.threads = whole.threads;
  share.tls.ca_file = config.ca_file;

  WorkerService service(config, std::move(share));
  asio::io_context io{1};
  tcp::acceptor acceptor(io);
  const tcp::endpoint endpoint = parse_listen(config.listen);
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on \"" + config.listen + "\": " + ec.message());
  accept(acceptor, service, stop);
  std::thread server([&io] { io.run(); });

  // Stay up until the final result was fetched (plus a moment for the
  // response to leave), the linger time ran out, or we were told to stop.
  std::optional<std::chrono::steady_clock::time_point> finished_at;
  std::optional<std::chrono::steady_clock::time_point> collected_at;
  bool stopped_early = false;
  while (true) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = std::chrono::steady_clock::now();
    if (!finished_at && service.finished()) finished_at = now;
    if (!collected_at && service.collected()) collected_at = now;
    if (collected_at && now - *collected_at > std::chrono::seconds(1)) break;
    if (finished_at && now - *finished_at > config.linger) break;
    if (stop.load()) {
      // Never started: nothing to report. Started: the run ends on the same
      // flag; the operator gets a short while to fetch what was done.
      if (!service.started()) {
        stopped_early = true;
        break;
      }
      if (finished_at && now - *finished_at > std::chrono::seconds(2)) break;
    }
  }
  io.stop();
  server.join();
  // Non-zero so the pod (and the Job) says the worker failed too.
  return stopped_early || service.failed() ? 1 : 0;
}

}  // namespace kubeload::loadgen
