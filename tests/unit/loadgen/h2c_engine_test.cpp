// h2c (HTTP/2 with prior knowledge) against a small nghttp2 server in this
// process (on 127.0.0.1): exact counts on io_uring and on Asio, each named in
// the result; on io_uring no socket call per request and no heap allocation
// per request of our own; timeouts and refused connections as on HTTP/1.1.
// The io_uring cases are skipped where io_uring may not be used.

#include <nghttp2/nghttp2.h>

#include <atomic>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "allocation_counter.hpp"
#include "loadgen/engine/asio.hpp"
#include "loadgen/engine/engine_choice.hpp"
#include "loadgen/engine/runner.hpp"
#include "loadgen/engine/worker.hpp"
#include "socket_call_counter.hpp"

namespace kubeload::loadgen {
namespace {

#define SKIP_WITHOUT_IO_URING()                       \
  if (const int probe = probe_io_uring(); probe != 0) \
  GTEST_SKIP() << io_uring_unavailable_reason(probe)

nghttp2_nv field(const char* name, const char* value) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name)),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value)), std::strlen(name),
                    std::strlen(value), NGHTTP2_NV_FLAG_NONE};
}

// Answers every request with 200 and "hello"; requests whose path starts
// with /stall get no answer at all.
class TinyH2cServer {
 public:
  TinyH2cServer() : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TinyH2cServer() {
    io_.stop();
    thread_.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  uint64_t requests() const { return requests_.load(); }
  uint64_t connections() const { return connections_.load(); }

 private:
  struct Session : std::enable_shared_from_this<Session> {
    Session(tcp::socket s, TinyH2cServer& owner) : socket(std::move(s)), server(owner) {}
    ~Session() { nghttp2_session_del(h2); }

    void start() {
      nghttp2_session_callbacks* callbacks = nullptr;
      nghttp2_session_callbacks_new(&callbacks);
      nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
      nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
      nghttp2_session_server_new(&h2, callbacks, this);
      nghttp2_session_callbacks_del(callbacks);
      const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
      nghttp2_submit_settings(h2, NGHTTP2_FLAG_NONE, settings, 1);
      if (flush()) read();
    }
    void read() {
      socket.async_read_some(asio::buffer(buffer),
                             [self = shared_from_this()](boost::system::error_code ec, size_t n) {
                               if (ec) return;
                               if (nghttp2_session_mem_recv(self->h2, self->buffer.data(), n) < 0)
                                 return;
                               if (self->flush()) self->read();
                             });
    }
    bool flush() {
      for (;;) {
        const uint8_t* data = nullptr;
        const ssize_t n = nghttp2_session_mem_send(h2, &data);
        if (n < 0) return false;
        if (n == 0) return true;
        boost::system::error_code ec;
        asio::write(socket, asio::buffer(data, static_cast<size_t>(n)), ec);
        if (ec) return false;
      }
    }
    static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                         size_t namelen, const uint8_t* value, size_t valuelen, uint8_t,
                         void* user_data) {
      auto& self = *static_cast<Session*>(user_data);
      const std::string_view n(reinterpret_cast<const char*>(name), namelen);
      const std::string_view v(reinterpret_cast<const char*>(value), valuelen);
      if (n == ":path" && v.starts_with("/stall")) self.stalled.insert(frame->hd.stream_id);
      return 0;
    }
    static int on_frame_recv(nghttp2_session* session, const nghttp2_frame* frame,
                             void* user_data) {
      auto& self = *static_cast<Session*>(user_data);
      const bool request_ends =
          (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
          (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
      if (!request_ends) return 0;
      ++self.server.requests_;
      if (self.stalled.count(frame->hd.stream_id) != 0) return 0;
      const nghttp2_nv headers[] = {field(":status", "200"), field("server", "tiny-h2c"),
                                    field("content-length", "5")};
      nghttp2_data_provider body{};
      body.read_callback = [](nghttp2_session*, int32_t, uint8_t* buf, size_t, uint32_t* flags,
                              nghttp2_data_source*, void*) -> ssize_t {
        std::memcpy(buf, "hello", 5);
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        return 5;
      };
      nghttp2_submit_response(session, frame->hd.stream_id, headers, 3, &body);
      return 0;
    }

    tcp::socket socket;
    TinyH2cServer& server;
    nghttp2_session* h2 = nullptr;
    std::array<uint8_t, 16384> buffer{};
    std::set<int32_t> stalled;
  };

  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec) return;
      ++connections_;
      // A response is two writes (HEADERS, DATA): without this the second
      // waits for the client's delayed acknowledgement of the first.
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<Session>(std::move(socket), *this)->start();
      accept();
    });
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> connections_{0};
  std::thread thread_;
};

RunPlan h2c_plan(uint16_t port, Engine engine, uint64_t connections, uint32_t streams,
                 uint64_t requests, const std::string& path = "/") {
  RunPlan plan;
  std::string error;
  plan.target = *parse_target("http://127.0.0.1:" + std::to_string(port) + path, error);
  plan.protocol = Protocol::h2c;
  plan.max_streams = streams;
  plan.engine = engine;
  plan.requests.push_back(make_request(plan.target, "default", "GET", "", {}, "", true));
  Phase stage;
  stage.connections = connections;
  plan.phases.push_back(stage);
  plan.total_request_budget = requests;
  return plan;
}

RunOutcome run_quietly(const RunPlan& plan) {
  RunOptions options;
  options.progress = false;
  return run_plan(plan, options);
}

void expect_exact(TinyH2cServer& server, const RunPlan& plan, uint64_t requests,
                  const std::string& engine) {
  const uint64_t before = server.requests();
  const RunOutcome outcome = run_quietly(plan);
  const Result& r = outcome.result.result;
  EXPECT_EQ(r.requests, requests) << engine;
  EXPECT_EQ(r.failures(), 0u) << engine;
  EXPECT_EQ(r.status_codes.at(200), requests) << engine;
  EXPECT_EQ(r.body_bytes_received, 5 * requests) << engine;
  EXPECT_EQ(server.requests() - before, requests) << engine;
  EXPECT_EQ(outcome.info.engine, engine);
  EXPECT_EQ(outcome.info.protocol, "h2c");
  EXPECT_EQ(outcome.info.server_software, "tiny-h2c") << engine;
}

TEST(H2cEngine, CountsEveryRequestExactlyOnIoUringAndOnAsioAndNamesEach) {
  TinyH2cServer server;
  for (const auto& [threads, connections, streams, requests] :
       std::vector<std::tuple<uint32_t, uint64_t, uint32_t, uint64_t>>{
           {1, 1, 1, 1}, {2, 3, 4, 101}, {3, 5, 10, 2003}}) {
    RunPlan asio = h2c_plan(server.port(), Engine::asio, connections, streams, requests);
    asio.threads = threads;
    expect_exact(server, asio, requests, "asio");
    if (probe_io_uring() != 0) continue;
    RunPlan uring = h2c_plan(server.port(), Engine::io_uring, connections, streams, requests);
    uring.threads = threads;
    const uint64_t connections_before = server.connections();
    expect_exact(server, uring, requests, "io_uring");
    // At most one connection per -c, kept for the whole run, and the one
    // with which the run checked the target before it started. (A thread
    // may find the shared budget spent before its connections open.)
    EXPECT_LE(server.connections() - connections_before, connections + 1);
  }
}

TEST(H2cEngine, OnIoUringStalledStreamsTimeOutWhileTheOthersGoOn) {
  SKIP_WITHOUT_IO_URING();
  TinyH2cServer server;
  RunPlan plan = h2c_plan(server.port(), Engine::io_uring, 2, 4, 80);
  std::string error;
  const Target stall =
      *parse_target("http://127.0.0.1:" + std::to_string(server.port()) + "/stall", error);
  plan.requests.push_back(make_request(stall, "stall", "GET", "", {}, "", true));
  plan.requests[0].weight = 9;
  plan.timeout = std::chrono::milliseconds(200);
  const Result r = run_quietly(plan).result.result;
  EXPECT_EQ(r.requests, 80u);
  EXPECT_EQ(r.errors.timeout, 8u);
  EXPECT_EQ(r.failures(), 8u);
  EXPECT_EQ(server.requests(), 80u);
  // Never before the deadline; min() is the low end of its bucket.
  EXPECT_GE(r.error_latency.min(), r.error_latency.lowest_equivalent_value(200'000));
}

TEST(H2cEngine, OnIoUringRefusedConnectionsAreConnectErrors) {
  SKIP_WITHOUT_IO_URING();
  asio::io_context io;
  // Bound, never listening: every connect is refused.
  tcp::acceptor closed(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const uint16_t port = closed.local_endpoint().port();
  closed.close();
  const RunOutcome outcome = run_quietly(h2c_plan(port, Engine::io_uring, 2, 3, 6));
  EXPECT_EQ(outcome.result.result.requests, 6u);
  EXPECT_EQ(outcome.result.result.errors.connect, 6u);
}

// The run's requests on one worker thread, on the calling thread's counters.
struct Counted {
  uint64_t allocations = 0;
  uint64_t socket_calls = 0;
  uint64_t requests = 0;
};

Counted run_counted(uint16_t port, uint64_t requests) {
  std::atomic<bool> stop(false);
  std::vector<tcp::endpoint> endpoints = {tcp::endpoint(asio::ip::make_address("127.0.0.1"), port)};
  Worker worker(h2c_plan(port, Engine::io_uring, 2, 8, requests), endpoints, nullptr, stop, false);
  Counted counted;
  std::thread thread([&] {
    testing::AllocationCounter allocations;
    testing::SocketCallCounter calls;
    worker.run(Clock::now());
    counted.allocations = allocations.count();
    counted.socket_calls =
        calls.sends() + calls.receives() + calls.epoll_changes() + calls.epoll_waits();
  });
  thread.join();
  counted.requests = worker.result().result.requests;
  return counted;
}

// What the engine is for: the frames go out and come in through the ring
// (io_uring_enter(2), which the counter does not see), no send(2), recv(2)
// or epoll call per request. nghttp2 keeps its per-stream state on malloc;
// our side adds no operator new per request.
TEST(H2cEngine, OnIoUringTheSteadyStateMakesNoSocketCallAndNoAllocationPerRequest) {
  SKIP_WITHOUT_IO_URING();
  TinyH2cServer server;
  const Counted short_run = run_counted(server.port(), 1'000);
  const Counted long_run = run_counted(server.port(), 11'000);
  EXPECT_EQ(short_run.requests, 1'000u);
  EXPECT_EQ(long_run.requests, 11'000u);
  EXPECT_EQ(server.requests(), 12'000u);
  EXPECT_EQ(long_run.socket_calls, 0u);
  EXPECT_LT(long_run.allocations - std::min(long_run.allocations, short_run.allocations), 200u)
      << "short run: " << short_run.allocations
      << " allocations, long run: " << long_run.allocations;
}

}  // namespace
}  // namespace kubeload::loadgen
