#include "loadgen/worker_server/worker_server.hpp"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include <openssl/crypto.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "kubeload/api/worker_protocol.hpp"
#include "kubeload/data_mount.hpp"
#include "kubeload/text.hpp"
#include "loadgen/engine/asio.hpp"
#include "loadgen/engine/engine_choice.hpp"
#include "loadgen/engine/metrics.hpp"
#include "loadgen/engine/network.hpp"
#include "loadgen/engine/runner.hpp"
#include "loadgen/engine/scenario_plan.hpp"

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
api::ProgressDocument progress_document(const LiveSnapshot& s, api::ResultHead head) {
  api::ProgressDocument progress;
  progress.head = std::move(head);
  Result& r = progress.result;
  // Counted stages only, so the live rate is not diluted by the warm-up.
  r.duration_seconds = s.counted_seconds;
  for (const auto& row : s.requests) {
    r.requests += row.requests;
    for (const auto& [code, count] : row.status_codes) r.status_codes[code] += count;
    r.errors.add(row.errors);
    r.bytes_received += row.bytes_received;
    r.bytes_sent += row.bytes_sent;
  }
  progress.warmup_requests = s.warmup_requests;
  progress.stage = s.stage;
  return progress;
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
  return api::to_json(api::TerminationSummary::of(run, error)).dump();
}

// The final result, served as ResultDocumentWriter writes it: the worker
// never holds the document's whole text, only the row being sent. Its length
// is counted by writing it once beforehand (size(), which prepare_payload
// sends as Content-Length: the histograms, uncompressed, are encoded twice,
// on the few reads of a final result per run): the operator leases from its /result
// budget what the answer will hold by that length, where a chunked answer
// has it lease for the largest document the spec allows (tens of MB).
struct ResultDocumentBody {
  struct value_type {
    std::shared_ptr<const RunResult> run;
    json head;  // the worker's own fields: its index, its run's UID, an error
  };

  static std::uint64_t size(const value_type& body) {
    ResultDocumentWriter document(body.run, body.head);
    std::uint64_t bytes = kEnd.size();
    for (std::string piece; document.next(piece);) bytes += piece.size();
    return bytes;
  }
  // What follows the document.
  static constexpr std::string_view kEnd = "\n";

  class writer {
   public:
    using const_buffers_type = asio::const_buffer;

    template <bool isRequest, class Fields>
    writer(const http::header<isRequest, Fields>&, const value_type& body)
        : document_(body.run, body.head) {}

    void init(beast::error_code& ec) { ec = {}; }

    boost::optional<std::pair<const_buffers_type, bool>> get(beast::error_code& ec) {
      ec = {};
      if (ended_) return boost::none;
      try {
        if (!document_.next(piece_)) {
          piece_ = kEnd;
          ended_ = true;
        }
      } catch (const std::exception&) {
        // Cannot happen for a result this worker measured; if it did, the
        // answer is cut short (short of its length), never wrong.
        ec = beast::errc::make_error_code(beast::errc::invalid_argument);
        return boost::none;
      }
      return {{const_buffers_type(piece_.data(), piece_.size()), true}};
    }

   private:
    ResultDocumentWriter document_;
    std::string piece_;
    bool ended_ = false;
  };
};

using StringReply = http::response<http::string_body>;
using Reply = std::variant<StringReply, http::response<ResultDocumentBody>>;

class WorkerService {
 public:
  WorkerService(const WorkerConfig& config, RunPlan plan)
      : config_(config), plan_(std::move(plan)) {
    std::vector<std::string> names;
    for (const auto& r : plan_.requests) names.push_back(r.name);
    metrics_ = std::make_unique<LiveMetrics>(
        MetricLabels{config.spec.name, config.spec.namespace_, std::to_string(config.index),
                     to_string(config.spec.protocol), to_string(plan_.engine_used())},
        names, scenario_names(plan_));
  }
  ~WorkerService() {
    if (run_thread_.joinable()) run_thread_.join();
  }
  WorkerService(const WorkerService&) = delete;
  WorkerService& operator=(const WorkerService&) = delete;

  // Whether a request's header may go on: the control paths need the run's
  // token, checked on the header alone so that a request without it is
  // answered (401, 403) before its body is read. nullopt: it may.
  std::optional<StringReply> refusal(const http::request_header<>& header) const {
    const auto authorization = header[http::field::authorization];
    switch (control_header_answer(std::string_view(header.target().data(), header.target().size()),
                                  std::string_view(authorization.data(), authorization.size()),
                                  config_.token)) {
      case ControlHeaderAnswer::proceed:
        return std::nullopt;
      case ControlHeaderAnswer::unauthorized: {
        auto denied =
            reply(http::status::unauthorized, "the run's token is required\n", "text/plain");
        denied.set(http::field::www_authenticate, "Bearer");
        return denied;
      }
      case ControlHeaderAnswer::forbidden:
        break;
    }
    return reply(http::status::forbidden, "not this run's token\n", "text/plain");
  }

  Reply handle(const http::request<http::string_body>& request, const std::atomic<bool>& stop) {
    const std::string target(request.target());
    const std::string path = target.substr(0, target.find('?'));
    if (path == "/healthz" || path == "/readyz")
      return reply(http::status::ok, "ok\n", "text/plain");
    if (path == "/metrics") {
      std::ostringstream text;
      prometheus::TextSerializer().Serialize(text, metrics_->registry()->Collect());
      return reply(http::status::ok, text.str(), "text/plain; version=0.0.4");
    }
    if (auto refused = refusal(request)) return std::move(*refused);
    if (path == "/start") {
      if (request.method() != http::verb::post) {
        return reply(http::status::method_not_allowed, "use POST /start\n", "text/plain");
      }
      return start(target, stop);
    }
    if (path == "/result") {
      if (!requested_result_wait(target)) {
        return reply(http::status::bad_request, "invalid wait in \"" + target + "\"\n",
                     "text/plain");
      }
      return result(request.version());
    }
    if (path == "/finish") {
      if (request.method() != http::verb::post) {
        return reply(http::status::method_not_allowed, "use POST /finish\n", "text/plain");
      }
      return finish();
    }
    return reply(http::status::not_found, "no such path: " + path + "\n", "text/plain");
  }

  // How long the answer to this request may wait for the run's end: a
  // GET /result?wait= while the run is not over; nullopt to answer at once.
  std::optional<std::chrono::milliseconds> result_hold(
      const http::request<http::string_body>& request) const {
    const std::string_view target(request.target().data(), request.target().size());
    if (target.substr(0, target.find('?')) != "/result") return std::nullopt;
    const std::optional<std::chrono::milliseconds> wait = requested_result_wait(target);
    if (!wait || wait->count() == 0 || finished()) return std::nullopt;
    return wait;
  }
  // Called on the run's thread once the final result is in: the answers
  // held for it go out. Set before the server takes requests.
  void on_final(std::function<void()> notify) { on_final_ = std::move(notify); }

  bool finished() const {
    std::lock_guard lock(mutex_);
    return final_ != nullptr;
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
  static constexpr const char* kServerName = "kubeload-loadgen";

  static StringReply reply(http::status status, std::string body, const char* type) {
    StringReply response(status, 11);
    response.set(http::field::content_type, type);
    response.set(http::field::server, kServerName);
    response.body() = std::move(body);
    response.prepare_payload();
    return response;
  }

  StringReply start(const std::string& target, const std::atomic<bool>& stop) {
    const std::optional<int64_t> requested = requested_start_ms(target);
    if (!requested) {
      return reply(http::status::bad_request, "invalid start time in \"" + target + "\"\n",
                   "text/plain");
    }
    const int64_t at_ms = *requested;
    if (at_ms != 0) {
      if (const auto problem = start_time_problem(at_ms, unix_ms_now())) {
        return reply(http::status::bad_request, *problem + "\n", "text/plain");
      }
    }
    std::lock_guard lock(mutex_);
    if (!started_) {
      started_ = true;
      run_thread_ = std::thread([this, at_ms, &stop] { run(at_ms, stop); });
    }
    const api::StartAnswer answer{true, config_.index, at_ms};
    return reply(http::status::accepted, api::to_json(answer).dump() + "\n", "application/json");
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
    if (config_.target_policy) options.target_policy = &*config_.target_policy;
    options.on_progress = [this](const LiveSnapshot& s) {
      std::lock_guard lock(mutex_);
      latest_ = s;
    };
    RunResult result;
    std::string error;
    std::optional<GeneratorCpu> cpu;
    try {
      RunOutcome outcome = run_plan(plan_, options);
      result = std::move(outcome.result);
      cpu = outcome.cpu;
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
    {
      std::lock_guard lock(mutex_);
      error_ = std::move(error);
      cpu_ = cpu;
      final_ = std::make_shared<const RunResult>(std::move(result));
    }
    if (on_final_) on_final_();
  }

  // While running: the counters, small. The final document (histograms of
  // every stage and named request) is written as it is sent.
  Reply result(unsigned http_version) {
    std::lock_guard lock(mutex_);
    api::ResultHead head{config_.index, config_.loadtest_uid, std::nullopt, error_, std::nullopt};
    if (started_at_ms_ > 0) head.started_at_ms = started_at_ms_;
    if (!final_) {
      // The clock while running only: the operator checks it before and
      // during the run, and the final document stays the same on every read.
      head.clock_ms = unix_ms_now();
      const json document = api::to_json(progress_document(latest_, std::move(head)));
      return reply(http::status::ok, document.dump() + "\n", "application/json");
    }
    head.cpu = cpu_;
    http::response<ResultDocumentBody> response(http::status::ok, http_version);
    response.set(http::field::content_type, "application/json");
    response.set(http::field::server, kServerName);
    response.body() = {final_, api::to_json(head)};
    try {
      response.prepare_payload();  // Content-Length: ResultDocumentBody::size
    } catch (const std::exception&) {
      // As the writer's own failure (it cannot happen for a result this
      // worker measured): sent without a length, and cut short as it fails.
      if (http_version >= 11) {
        response.chunked(true);
      } else {
        response.keep_alive(false);
      }
    }
    return response;
  }

  // The operator acknowledges the final result once it is safely in the
  // LoadTest's status; until then the worker keeps serving it.
  http::response<http::string_body> finish() {
    std::lock_guard lock(mutex_);
    if (!final_) return reply(http::status::conflict, "the run has not finished\n", "text/plain");
    collected_ = true;
    return reply(http::status::ok, api::to_json(api::FinishAnswer{true}).dump() + "\n",
                 "application/json");
  }

  const WorkerConfig& config_;
  RunPlan plan_;
  std::unique_ptr<LiveMetrics> metrics_;
  mutable std::mutex mutex_;
  bool started_ = false;
  bool collected_ = false;
  int64_t started_at_ms_ = 0;
  LiveSnapshot latest_;
  std::shared_ptr<const RunResult> final_;  // shared with the answers that send it
  std::string error_;
  std::optional<GeneratorCpu> cpu_;  // what the run used of the worker's CPU
  std::function<void()> on_final_;
  std::thread run_thread_;
};

class Session;

// Connections being served; the io_context runs on one thread.
struct ControlConnections {
  std::size_t open = 0;
  // Sessions that have not shown the run's token, oldest first: when every
  // slot is taken, a new connection takes the oldest of their slots. So no
  // peer without the token can hold the operator out by keeping connections
  // open (every pod may reach the worker where NetworkPolicy is not
  // enforced), and a connection that showed it is never closed for another.
  std::deque<std::weak_ptr<Session>> unauthenticated;
  // GET /result?wait= answers held until the run ends (or their wait does).
  std::vector<std::weak_ptr<Session>> holding;
  // The run is over: every held answer goes out now.
  void release_held();
};

// One HTTP/1.1 session; the server is tiny and single-threaded. Each request
// must arrive whole within kControlRequestTimeout and within
// kMaxControlRequestBytes, else the connection is closed. The header is read
// first: a control request without the run's token is answered at once and
// its connection closed, its body never read.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, WorkerService& service, const std::atomic<bool>& stop,
          ControlConnections& connections)
      : stream_(std::move(socket)),
        service_(service),
        stop_(stop),
        connections_(connections),
        buffer_(kMaxControlRequestBytes) {
    ++connections_.open;
  }
  ~Session() { --connections_.open; }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool authenticated() const { return authenticated_; }
  // Gives up the slot: its pending read ends, and the session with it.
  void close() {
    beast::error_code ignored;
    stream_.socket().close(ignored);
  }
  // Lets a held answer go before its wait is up (the run is over).
  void release() { hold_.cancel(); }

  void read() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(kMaxControlRequestBytes));
    parser_->body_limit(kMaxControlRequestBytes);
    stream_.expires_after(kControlRequestTimeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return;
                              self->on_header();
                            });
  }

 private:
  void on_header() {
    if (auto refused = service_.refusal(parser_->get())) {
      refused->keep_alive(false);
      response_ = std::move(*refused);
      write(false);
      return;
    }
    const auto& header = parser_->get();
    if (is_control_path(std::string_view(header.target().data(), header.target().size()))) {
      authenticated_ = true;
    }
    if (parser_->is_done()) {
      respond();
      return;
    }
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return;
                       self->respond();
                     });
  }

  void respond() {
    request_ = parser_->release();
    if (const auto wait = service_.result_hold(request_)) {
      // The run is not over: answer when it is (ControlConnections::release_held)
      // or when the wait is up, whichever comes first. Both on this thread,
      // after the check above, so the end of the run cannot slip between.
      std::erase_if(connections_.holding, [](const auto& held) { return held.expired(); });
      connections_.holding.push_back(weak_from_this());
      hold_.expires_after(*wait);
      hold_.async_wait([self = shared_from_this()](beast::error_code) { self->answer(); });
      return;
    }
    answer();
  }

  void answer() {
    response_ = service_.handle(request_, stop_);
    write(request_.keep_alive());
  }

  void write(bool request_keep_alive) {
    std::visit(
        [&](auto& response) {
          response.keep_alive(response.keep_alive() && request_keep_alive);
          stream_.expires_after(kControlRequestTimeout);
          http::async_write(stream_, response,
                            [self = shared_from_this(), keep_alive = response.keep_alive()](
                                beast::error_code ec, std::size_t) {
                              if (ec || !keep_alive) {
                                beast::error_code ignored;
                                self->stream_.socket().shutdown(tcp::socket::shutdown_send,
                                                                ignored);
                                return;
                              }
                              self->read();
                            });
        },
        response_);
  }

  beast::tcp_stream stream_;
  WorkerService& service_;
  const std::atomic<bool>& stop_;
  ControlConnections& connections_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  asio::steady_timer hold_{stream_.get_executor()};
  Reply response_;
  bool authenticated_ = false;
};

void ControlConnections::release_held() {
  for (const std::weak_ptr<Session>& held : holding) {
    if (const std::shared_ptr<Session> session = held.lock()) session->release();
  }
  holding.clear();
}

// Closes the oldest session that has not shown the run's token; false when
// every open session has.
bool evict_unauthenticated(ControlConnections& connections) {
  while (!connections.unauthenticated.empty()) {
    const std::shared_ptr<Session> oldest = connections.unauthenticated.front().lock();
    connections.unauthenticated.pop_front();
    if (oldest && !oldest->authenticated()) {
      oldest->close();
      return true;
    }
  }
  return false;
}

void accept(tcp::acceptor& acceptor, WorkerService& service, const std::atomic<bool>& stop,
            ControlConnections& connections) {
  acceptor.async_accept(
      [&acceptor, &service, &stop, &connections](beast::error_code ec, tcp::socket socket) {
        if (ec) return;
        // Over the limit the connection takes the slot of the oldest one
        // without the token, or, when there is none, is closed at once
        // (the socket goes out of scope).
        if (connections.open < kMaxControlConnections || evict_unauthenticated(connections)) {
          auto session = std::make_shared<Session>(std::move(socket), service, stop, connections);
          connections.unauthenticated.push_back(session);
          session->read();
        }
        accept(acceptor, service, stop, connections);
      });
}

}  // namespace

ControlAuth check_control_token(std::string_view authorization, std::string_view token) {
  constexpr std::string_view scheme = "bearer ";
  if (authorization.size() <= scheme.size()) return ControlAuth::missing;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (ascii_lower(authorization[i]) != scheme[i]) {
      return ControlAuth::missing;
    }
  }
  const std::string_view presented = authorization.substr(scheme.size());
  if (token.empty() || presented.size() != token.size() ||
      CRYPTO_memcmp(presented.data(), token.data(), token.size()) != 0) {
    return ControlAuth::wrong;
  }
  return ControlAuth::ok;
}

bool is_control_path(std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  return path == "/start" || path == "/result" || path == "/finish";
}

ControlHeaderAnswer control_header_answer(std::string_view target, std::string_view authorization,
                                          std::string_view token) {
  if (!is_control_path(target)) return ControlHeaderAnswer::proceed;
  switch (check_control_token(authorization, token)) {
    case ControlAuth::ok:
      return ControlHeaderAnswer::proceed;
    case ControlAuth::missing:
      return ControlHeaderAnswer::unauthorized;
    case ControlAuth::wrong:
      break;
  }
  return ControlHeaderAnswer::forbidden;
}

namespace {

// The value of query parameter `name` in a request target; nullopt when the
// target has no such parameter.
std::optional<std::string_view> query_parameter(std::string_view target, std::string_view name) {
  const auto question = target.find('?');
  if (question == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.size() > name.size() && pair.starts_with(name) && pair[name.size()] == '=') {
      return pair.substr(name.size() + 1);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

// All of `digits` as a (signed) whole number, or nullopt.
std::optional<int64_t> whole_number(std::string_view digits) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<int64_t> requested_start_ms(std::string_view target) {
  const std::optional<std::string_view> at = query_parameter(target, "at");
  if (!at) return 0;
  return whole_number(*at);
}

std::optional<std::chrono::milliseconds> requested_result_wait(std::string_view target) {
  const std::optional<std::string_view> wait = query_parameter(target, "wait");
  if (!wait) return std::chrono::milliseconds(0);
  const std::optional<int64_t> ms = whole_number(*wait);
  if (!ms || *ms < 0) return std::nullopt;
  return std::min(std::chrono::milliseconds(*ms), kMaxResultWait);
}

std::optional<std::string> start_time_problem(int64_t at_ms, int64_t now_ms) {
  const auto max_skew_ms = static_cast<uint64_t>(std::chrono::milliseconds(kMaxStartSkew).count());
  // The distance in unsigned arithmetic: exact for any two int64 values, so at
  // values near the ends of the range cannot overflow.
  const uint64_t distance = at_ms > now_ms
                                ? static_cast<uint64_t>(at_ms) - static_cast<uint64_t>(now_ms)
                                : static_cast<uint64_t>(now_ms) - static_cast<uint64_t>(at_ms);
  if (distance > max_skew_ms) {
    return "start time " + std::to_string(at_ms) + " is more than " +
           std::to_string(kMaxStartSkew.count()) + " minutes from this worker's clock (" +
           std::to_string(now_ms) + ")";
  }
  return std::nullopt;
}

int run_worker(const WorkerConfig& config, const std::atomic<bool>& stop) {
  if (config.token.empty()) {
    throw std::runtime_error(std::string(kubeload::kWorkerTokenEnv) +
                             " is not set: the worker protocol needs the run's token");
  }
  std::string error;
  const auto target = parse_target(config.target_url, error);
  if (!target) throw std::runtime_error(error);
  if (config.count == 0 || config.index >= config.count) {
    throw std::runtime_error("worker index " + std::to_string(config.index) + " is not below the " +
                             "worker count " + std::to_string(config.count));
  }
  if (config.target_policy) {
    // A target that does not resolve yet is the run's to report, as without a
    // policy; one that resolves to a refused address ends the worker here.
    bool resolves = true;
    try {
      resolve_target(*target, nullptr);
    } catch (const std::runtime_error&) {
      resolves = false;
    }
    if (resolves) {
      try {
        resolve_target(*target, &*config.target_policy);
      } catch (const std::runtime_error& refused) {
        // The reason goes to the pod's status (terminationMessagePolicy: File).
        std::ofstream(config.termination_log) << refused.what();
        throw;
      }
    }
  }
  const RunPlan whole = plan_from_spec(config.spec, *target, config.threads);
  RunPlan share = split_plan(whole, config.index, config.count);
  if (const auto problems = prepare_scenarios(share, config.spec, std::string(kDataMountRoot));
      !problems.empty()) {
    std::string message;
    for (const std::string& problem : problems) message += (message.empty() ? "" : "; ") + problem;
    std::ofstream(config.termination_log) << message;
    throw std::runtime_error(message);
  }
  // A pod runs with the seccomp profile its cluster allows: with auto,
  // io_uring where that permits it, epoll otherwise (the result and the
  // metrics name which); io_uring asked for and refused stops the worker.
  const EngineRequest requested = config.spec.load.engine;
  const EngineDecision engine =
      decide_engine(requested, may_use_io_uring(requested, share.traffic()) ? probe_io_uring() : 0,
                    share.traffic());
  if (engine.refused) {
    // The reason goes to the pod's status, as a refused target's does.
    std::ofstream(config.termination_log) << "spec.load.engine: " << engine.reason;
    throw std::runtime_error("spec.load.engine: " + engine.reason);
  }
  share.engine = engine.engine;
  share.threads = whole.threads;
  share.tls.ca_file = config.ca_file;

  // Declared before the io_context: sessions still queued in it when it is
  // destroyed count themselves out of it.
  ControlConnections connections;
  asio::io_context io{1};
  // Declared after the io_context, so destroyed before it: its run thread
  // (joined then) posts the end of the run to it.
  WorkerService service(config, std::move(share));
  service.on_final(
      [&io, &connections] { asio::post(io, [&connections] { connections.release_held(); }); });
  tcp::acceptor acceptor(io);
  const tcp::endpoint endpoint = parse_listen(config.listen);
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on \"" + config.listen + "\": " + ec.message());
  accept(acceptor, service, stop, connections);
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
