// The engine against a small HTTP server in this process (on 127.0.0.1, over
// TLS for the https path): exact request counts across thread splits,
// classification of timeouts and refused connections, no heap allocation
// per request in steady state, and the system calls per request.

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>

#include <gtest/gtest.h>

#include "allocation_counter.hpp"
#include "loadgen/engine/asio.hpp"
#include "loadgen/engine/engine_choice.hpp"
#include "loadgen/engine/handler_memory.hpp"
#include "loadgen/engine/network.hpp"
#include "loadgen/engine/runner.hpp"
#include "loadgen/engine/worker.hpp"
#include "socket_call_counter.hpp"

namespace kubeload::loadgen {
namespace {

using TlsStream = asio::ssl::stream<tcp::socket>;

// A server context with a certificate of its own for 127.0.0.1, made here
// (the clients of these tests do not verify it), offering TLS up to
// `max_version`.
std::unique_ptr<asio::ssl::context> self_signed_server_context(int max_version = TLS1_3_VERSION) {
  auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  SSL_CTX_set_max_proto_version(context->native_handle(), max_version);
  const std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  const std::unique_ptr<X509, decltype(&X509_free)> certificate(X509_new(), X509_free);
  if (!key || !certificate) throw std::runtime_error("no key or certificate");
  ASN1_INTEGER_set(X509_get_serialNumber(certificate.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(certificate.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(certificate.get()), 3600);
  X509_set_pubkey(certificate.get(), key.get());
  X509_NAME* name = X509_get_subject_name(certificate.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(certificate.get(), name);
  if (X509_sign(certificate.get(), key.get(), EVP_sha256()) == 0 ||
      SSL_CTX_use_certificate(context->native_handle(), certificate.get()) != 1 ||
      SSL_CTX_use_PrivateKey(context->native_handle(), key.get()) != 1) {
    throw std::runtime_error("self-signed certificate");
  }
  return context;
}

// Answers every request with a fixed 200, keep-alive; requests whose path
// starts with /stall get no answer at all. Over TLS when given a context
// (/key-update: a TLS 1.3 key update before the answer, asking the client
// for one too; /renegotiate: over TLS 1.2, a HelloRequest before the answer;
// /renegotiate/close-silently: then the connection closes, unanswered).
class TinyServer {
 public:
  explicit TinyServer(asio::ssl::context* tls = nullptr)
      : tls_(tls), acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TinyServer() {
    io_.stop();
    thread_.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  uint64_t requests() const { return requests_.load(); }
  // Key updates the server started (/key-update over TLS 1.3).
  uint64_t key_updates() const { return key_updates_.load(); }
  // Renegotiations the server asked for (/renegotiate over TLS 1.2).
  uint64_t renegotiations_asked() const { return renegotiations_asked_.load(); }
  // The handshakes requests were read under: each connection's first, then
  // each renegotiation completed before a request (a new client random).
  uint64_t handshakes_read_under() const { return handshakes_read_under_.load(); }
  // Requests per connection, in the order the connections were accepted.
  std::vector<uint64_t> requests_per_connection() const {
    std::lock_guard lock(mutex_);
    return per_connection_;
  }

 private:
  template <typename Stream>
  struct Session : std::enable_shared_from_this<Session<Stream>> {
    Session(Stream s, TinyServer& owner, size_t index)
        : socket(std::move(s)), server(owner), connection(index), delay(socket.get_executor()) {}
    void read() {
      socket.async_read_some(asio::buffer(buffer), [self = this->shared_from_this()](
                                                       boost::system::error_code ec, size_t n) {
        if (ec) return;
        self->pending.append(self->buffer.data(), n);
        size_t end;
        while ((end = self->pending.find("\r\n\r\n")) != std::string::npos) {
          const bool stall = self->pending.rfind("GET /stall", 0) == 0;
          const bool close_after = self->pending.rfind("GET /close-silently", 0) == 0 ||
                                   self->pending.rfind("POST /close-silently", 0) == 0 ||
                                   self->pending.rfind("GET /renegotiate/close-silently", 0) == 0;
          const bool delayed = self->pending.rfind("GET /delay", 0) == 0;
          const bool key_update = self->pending.rfind("GET /key-update", 0) == 0;
          const bool renegotiate = self->pending.rfind("GET /renegotiate", 0) == 0;
          self->pending.erase(0, end + 4);
          self->server.count(self->connection);
          if constexpr (std::is_same_v<Stream, TlsStream>) self->note_handshake();
          if (stall) continue;
          if (delayed) {
            // Like a server that takes 2 ms per request: the answer, then the
            // next request (clients do not pipeline).
            self->delay.expires_after(std::chrono::milliseconds(2));
            self->delay.async_wait([self](boost::system::error_code) {
              boost::system::error_code write_error;
              asio::write(self->socket, asio::buffer(kResponse), write_error);
              if (!write_error) self->read();
            });
            return;
          }
          if constexpr (std::is_same_v<Stream, TlsStream>) {
            // TLS 1.3: new keys for this direction before the answer, and
            // the client asked to send with new keys too (its KeyUpdate goes
            // out with what it writes next).
            if (key_update &&
                SSL_key_update(self->socket.native_handle(), SSL_KEY_UPDATE_REQUESTED) == 1) {
              ++self->server.key_updates_;
            }
            // TLS 1.2: the HelloRequest goes out with the answer; the
            // client's new handshake comes in with what it sends next.
            if (renegotiate && SSL_renegotiate(self->socket.native_handle()) == 1) {
              ++self->server.renegotiations_asked_;
            }
          }
          asio::write(self->socket, asio::buffer(kResponse), ec);
          if (close_after) {
            // Like a server whose keep-alive timeout just expired: no
            // "Connection: close", the connection simply goes away.
            self->socket.lowest_layer().close(ec);
            return;
          }
        }
        self->read();
      });
    }
    static constexpr std::string_view kResponse =
        "HTTP/1.1 200 OK\r\nServer: tiny\r\nContent-Length: 5\r\n\r\nhello";
    Stream socket;
    TinyServer& server;
    size_t connection;
    asio::steady_timer delay;
    std::array<char, 4096> buffer{};
    std::string pending;
    std::array<unsigned char, SSL3_RANDOM_SIZE> client_random{};

    void note_handshake() {
      std::array<unsigned char, SSL3_RANDOM_SIZE> now{};
      SSL_get_client_random(socket.native_handle(), now.data(), now.size());
      if (now != client_random) ++server.handshakes_read_under_;
      client_random = now;
    }
  };

  void count(size_t connection) {
    ++requests_;
    std::lock_guard lock(mutex_);
    ++per_connection_[connection];
  }

  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec) return;
      size_t index = 0;
      {
        std::lock_guard lock(mutex_);
        index = per_connection_.size();
        per_connection_.push_back(0);
      }
      if (tls_ == nullptr) {
        std::make_shared<Session<tcp::socket>>(std::move(socket), *this, index)->read();
      } else {
        auto session =
            std::make_shared<Session<TlsStream>>(TlsStream(std::move(socket), *tls_), *this, index);
        session->socket.async_handshake(asio::ssl::stream_base::server,
                                        [session](boost::system::error_code error) {
                                          if (!error) session->read();
                                        });
      }
      accept();
    });
  }

  asio::io_context io_;
  asio::ssl::context* tls_;
  tcp::acceptor acceptor_;
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> key_updates_{0};
  std::atomic<uint64_t> renegotiations_asked_{0};
  std::atomic<uint64_t> handshakes_read_under_{0};
  mutable std::mutex mutex_;
  std::vector<uint64_t> per_connection_;
  std::thread thread_;
};

RunPlan closed_plan(uint16_t port, uint64_t connections, uint64_t requests,
                    const std::string& path = "/", const std::string& method = "GET",
                    const std::string& scheme = "http") {
  RunPlan plan;
  std::string error;
  plan.target = *parse_target(scheme + "://127.0.0.1:" + std::to_string(port) + path, error);
  plan.requests.push_back(make_request(plan.target, "default", method, "", {}, "", true));
  Phase stage;
  stage.connections = connections;
  plan.phases.push_back(stage);
  plan.total_request_budget = requests;
  return plan;
}

// HTTP/1.1 over TLS: the closed plan to an https:// target, the server's
// certificate not verified (TinyServer's is self-signed).
RunPlan https_plan(uint16_t port, uint64_t connections, uint64_t requests,
                   const std::string& path = "/") {
  RunPlan plan = closed_plan(port, connections, requests, path, "GET", "https");
  plan.tls.verify = false;
  return plan;
}

RunOutcome run_quietly(const RunPlan& plan) {
  RunOptions options;
  options.progress = false;
  return run_plan(plan, options);
}

TEST(Engine, CountsEveryRequestExactlyAcrossThreadSplits) {
  TinyServer server;
  for (const auto& [threads, connections, requests] :
       std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>{{1, 1, 1}, {2, 3, 7}, {3, 7, 1003}}) {
    const uint64_t before = server.requests();
    RunPlan plan = closed_plan(server.port(), connections, requests);
    plan.threads = threads;
    const RunOutcome outcome = run_quietly(plan);
    const Result& r = outcome.result.result;
    EXPECT_EQ(r.requests, requests);
    EXPECT_EQ(r.failures(), 0u);
    EXPECT_EQ(r.status_codes.at(200), requests);
    EXPECT_EQ(r.latency.total_count(), requests);
    EXPECT_EQ(r.body_bytes_received, 5 * requests);
    EXPECT_EQ(server.requests() - before, requests);
    ASSERT_EQ(outcome.result.stages.size(), 1u);
    EXPECT_EQ(outcome.result.stages[0].connections, connections);
    EXPECT_EQ(outcome.info.server_software, "tiny");
    EXPECT_EQ(outcome.info.document_length, 5u);
  }
}

TEST(Engine, WarmupIsSentButNotCounted) {
  TinyServer server;
  RunPlan plan = closed_plan(server.port(), 4, 100);
  Phase warmup = plan.phases.front();
  warmup.warmup = true;
  warmup.request_budget = 50;
  plan.phases.insert(plan.phases.begin(), warmup);
  plan.threads = 2;
  const RunOutcome outcome = run_quietly(plan);
  EXPECT_EQ(outcome.result.result.requests, 100u);
  EXPECT_EQ(outcome.result.warmup_requests, 50u);
  EXPECT_EQ(server.requests(), 150u);
}

TEST(Engine, MoreThreadsThanConnectionsStillSendsEveryRequest) {
  // A worker pod's share can have fewer connections than the pod has cores.
  TinyServer server;
  RunPlan plan = closed_plan(server.port(), 1, 200);
  plan.threads = 2;
  const RunOutcome outcome = run_quietly(plan);
  EXPECT_EQ(outcome.result.result.requests, 200u);
  EXPECT_EQ(server.requests(), 200u);
}

TEST(Engine, LiveCountedTimeLeavesTheWarmupOut) {
  TinyServer server;
  RunPlan plan = closed_plan(server.port(), 2, 0);
  plan.total_request_budget.reset();
  plan.phases.front().duration = std::chrono::milliseconds(400);
  Phase warmup = plan.phases.front();
  warmup.warmup = true;
  warmup.duration = std::chrono::milliseconds(300);
  plan.phases.insert(plan.phases.begin(), warmup);
  plan.threads = 1;
  LiveSnapshot last;
  RunOptions options;
  options.progress = false;
  options.on_progress = [&](const LiveSnapshot& s) { last = s; };
  const auto started = std::chrono::steady_clock::now();
  const RunOutcome outcome = run_plan(plan, options);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_GE(last.counted_seconds, 0.4);
  EXPECT_LE(last.counted_seconds, wall - 0.3);
  EXPECT_NEAR(last.counted_seconds, outcome.result.result.duration_seconds, 0.001);
}

TEST(Engine, StalledRequestsTimeOutAsTimeouts) {
  TinyServer server;
  RunPlan plan = closed_plan(server.port(), 2, 4, "/stall");
  plan.timeout = std::chrono::milliseconds(100);
  const RunOutcome outcome = run_quietly(plan);
  EXPECT_EQ(outcome.result.result.requests, 4u);
  EXPECT_EQ(outcome.result.result.errors.timeout, 4u);
  EXPECT_EQ(outcome.result.result.latency.total_count(), 0u);
}

// The tick looks at deadlines only when the earliest is due: requests that
// start all the time on other connections must not postpone a timeout.
TEST(Engine, ATimeoutIsCalledAtItsDeadlineWhileOtherRequestsKeepStarting) {
  TinyServer server;
  RunPlan plan = closed_plan(server.port(), 3, 60, "/delay");
  std::string error;
  const Target stall =
      *parse_target("http://127.0.0.1:" + std::to_string(server.port()) + "/stall", error);
  plan.requests.push_back(make_request(stall, "stall", "GET", "", {}, "", true));
  plan.requests[0].weight = 9;
  plan.timeout = std::chrono::milliseconds(200);
  const RunOutcome outcome = run_quietly(plan);
  const Result& r = outcome.result.result;
  EXPECT_EQ(r.requests, 60u);
  EXPECT_EQ(r.errors.timeout, 6u);
  EXPECT_EQ(r.error_latency.total_count(), 6u);
  // Never before the deadline; min() is the low end of its bucket (128 us
  // wide there), so a timeout just past 200 ms reads 199,936.
  EXPECT_GE(r.error_latency.min(), r.error_latency.lowest_equivalent_value(200'000));
  // A tick is 10 ms; the rest is room for a busy machine.
  EXPECT_LE(r.error_latency.max(), 300'000);
}

TEST(Engine, AStaleKeepAliveConnectionIsRetriedOnceNotCountedAsAnError) {
  TinyServer server;
  const RunOutcome outcome = run_quietly(closed_plan(server.port(), 1, 10, "/close-silently"));
  EXPECT_EQ(outcome.result.result.requests, 10u);
  EXPECT_EQ(outcome.result.result.failures(), 0u);
  EXPECT_EQ(server.requests(), 10u);
  // Every request after the first found its kept-alive connection closed.
  EXPECT_EQ(outcome.result.result.retries, 9u);
}

TEST(Engine, APostIsNotResentOnAStaleConnectionUnlessAsked) {
  TinyServer server;
  // One connection: the first POST succeeds, the second finds the connection
  // closed and fails (the server may have acted on it), the third opens a new
  // connection, and so on.
  const RunOutcome outcome =
      run_quietly(closed_plan(server.port(), 1, 10, "/close-silently", "POST"));
  const Result& r = outcome.result.result;
  EXPECT_EQ(r.requests, 10u);
  EXPECT_EQ(r.retries, 0u);
  EXPECT_EQ(r.errors.read + r.errors.write, 5u)
      << "read " << r.errors.read << " write " << r.errors.write;
  EXPECT_EQ(r.status_codes.at(200), 5u);
  EXPECT_EQ(server.requests(), 5u);

  RunPlan asked = closed_plan(server.port(), 1, 10, "/close-silently", "POST");
  asked.retry_non_idempotent = true;
  const RunOutcome resent = run_quietly(asked);
  EXPECT_EQ(resent.result.result.failures(), 0u);
  EXPECT_EQ(resent.result.result.retries, 9u);
  EXPECT_EQ(server.requests(), 15u);
}

TEST(Engine, IdempotentMethodsAreThoseOfRfc9110) {
  for (const char* method : {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"}) {
    EXPECT_TRUE(is_idempotent_method(method)) << method;
  }
  for (const char* method : {"POST", "PATCH", "CONNECT", "get", "PURGE", ""}) {
    EXPECT_FALSE(is_idempotent_method(method)) << method;
  }
}

// A port on which nothing listens on ::1 or 127.0.0.1 (as far as we know).
uint16_t closed_loopback_port() {
  asio::io_context io;
  tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return probe.local_endpoint().port();
}

TEST(Engine, AddressesAreTriedInOrderAndTheOnesThatConnectAreKept) {
  // Like "localhost" resolving to ::1 first against a server that listens on
  // 127.0.0.1 only.
  TinyServer server;
  const tcp::endpoint v6(asio::ip::make_address("::1"), server.port());
  const tcp::endpoint v4(asio::ip::make_address("127.0.0.1"), server.port());
  EXPECT_EQ(connectable_in_order({v6, v4}, std::chrono::seconds(2)),
            std::vector<tcp::endpoint>{v4});
  // None connects: all are kept, so the run counts its connect errors.
  const tcp::endpoint closed(asio::ip::make_address("127.0.0.1"), closed_loopback_port());
  EXPECT_EQ(connectable_in_order({closed}, std::chrono::seconds(2)),
            std::vector<tcp::endpoint>{closed});
}

TEST(Engine, EachConnectionTriesTheAddressesInOrder) {
  TinyServer server;
  const RunPlan plan = closed_plan(server.port(), 3, 30);
  const std::vector<tcp::endpoint> unreachable_first = {
      tcp::endpoint(asio::ip::make_address("::1"), server.port()),
      tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port())};
  std::atomic<bool> stop(false);
  Worker worker(plan, unreachable_first, nullptr, stop, false);
  worker.run(Clock::now());
  const Result r = worker.result().result;
  EXPECT_EQ(r.requests, 30u);
  EXPECT_EQ(r.failures(), 0u) << "connect errors " << r.errors.connect;
  EXPECT_EQ(server.requests(), 30u);
}

TEST(Engine, IpLiteralsAreRecognisedForSni) {
  for (const char* host : {"127.0.0.1", "::1", "127.0.0.2", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(is_ip_literal(host)) << host;
  }
  for (const char* host : {"localhost", "web.test", "127.0.0.1.nip.example", ""}) {
    EXPECT_FALSE(is_ip_literal(host)) << host;
  }
}

TEST(Engine, RefusedConnectionsAreConnectErrors) {
  const uint16_t closed_port = closed_loopback_port();
  const RunOutcome outcome = run_quietly(closed_plan(closed_port, 2, 6));
  EXPECT_EQ(outcome.result.result.requests, 6u);
  EXPECT_EQ(outcome.result.result.errors.connect, 6u);
}

TEST(Engine, UnresolvableHostIsAClearError) {
  RunPlan plan = closed_plan(1, 1, 1);
  plan.target.host = "no-such-host.invalid";
  try {
    run_quietly(plan);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-host.invalid"), std::string::npos) << e.what();
  }
}

RunPlan open_plan(uint16_t port, double rate, std::chrono::nanoseconds duration,
                  uint64_t max_connections, const std::string& path = "/") {
  RunPlan plan = closed_plan(port, 0, 0, path);
  plan.total_request_budget.reset();
  plan.open_model = true;
  plan.max_connections = max_connections;
  plan.phases.front().rate = rate;
  plan.phases.front().duration = duration;
  return plan;
}

TEST(Engine, ARequestBudgetIsSharedByAllConnectionsOfAllThreads) {
  // 3 connections on 2 threads: one thread owns two, the other one. Split
  // evenly over the threads, the lone connection would send twice as many
  // requests as the others and finish last, with the end of the run at a
  // third of the concurrency asked for.
  TinyServer server;
  RunPlan plan = closed_plan(server.port(), 3, 300, "/delay");
  plan.threads = 2;
  const RunOutcome outcome = run_quietly(plan);
  EXPECT_EQ(outcome.result.result.requests, 300u);
  EXPECT_EQ(server.requests(), 300u);
  // Connections that carried requests: loadgen's address probe before the
  // run connects once and sends nothing.
  std::vector<uint64_t> counts = server.requests_per_connection();
  std::erase(counts, 0u);
  ASSERT_EQ(counts.size(), 3u);
  for (uint64_t count : counts) {
    EXPECT_GE(count, 75u) << "requests per connection: " << ::testing::PrintToString(counts);
    EXPECT_LE(count, 125u) << "requests per connection: " << ::testing::PrintToString(counts);
  }
}

TEST(Engine, ARunEndedByTimeEndsAtItsPlannedEndAndReportsTheDrainApart) {
  TinyServer server;
  RunPlan plan = closed_plan(server.port(), 1, 0, "/stall");
  plan.total_request_budget.reset();
  plan.phases.front().duration = std::chrono::milliseconds(300);
  plan.timeout = std::chrono::milliseconds(900);
  const RunOutcome outcome = run_quietly(plan);
  const Result& r = outcome.result.result;
  EXPECT_NEAR(r.duration_seconds, 0.3, 1e-6);
  EXPECT_GE(r.drain_seconds, 0.5);
  EXPECT_EQ(r.requests, 1u);
  EXPECT_EQ(r.errors.timeout, 1u);
  // The hung request's time is recorded, among the failures.
  EXPECT_EQ(r.latency.total_count(), 0u);
  ASSERT_EQ(r.error_latency.total_count(), 1u);
  EXPECT_GE(r.error_latency.max(), 890'000);
  ASSERT_EQ(outcome.result.stages.size(), 1u);
  EXPECT_NEAR(outcome.result.stages[0].result.duration_seconds, 0.3, 1e-6);
  EXPECT_EQ(outcome.result.stages[0].result.drain_seconds, r.drain_seconds);
}

TEST(Engine, OpenModelThreadsTakeTurnsInOneArrivalSequence) {
  // 20 requests/s for 250 ms is 5 arrivals (at 0, 50, ..., 200 ms), however
  // many threads share them: 8 threads each following a 2.5/s schedule
  // would send 8.
  TinyServer server;
  RunPlan plan = open_plan(server.port(), 20, std::chrono::milliseconds(250), 100);
  plan.threads = 8;
  const RunOutcome outcome = run_quietly(plan);
  EXPECT_EQ(outcome.result.result.requests, 5u);
  EXPECT_EQ(server.requests(), 5u);
  EXPECT_NEAR(outcome.result.result.duration_seconds, 0.25, 1e-6);
  ASSERT_TRUE(outcome.result.result.rate.has_value());
  EXPECT_NEAR(outcome.result.result.rate->target, 20, 1e-9);
}

TEST(Engine, OpenModelRequestsThatWaitLongerThanTheTimeoutAreDroppedErrors) {
  // One connection to a server that never answers: the first request times
  // out, the others wait for the connection until their timeout from their
  // intended time, then count as dropped, with the time they waited.
  TinyServer server;
  RunPlan plan = open_plan(server.port(), 200, std::chrono::milliseconds(500), 1, "/stall");
  plan.timeout = std::chrono::milliseconds(100);
  const RunOutcome outcome = run_quietly(plan);
  const Result& r = outcome.result.result;
  EXPECT_EQ(r.requests, 100u);
  EXPECT_EQ(r.errors.timeout + r.errors.dropped, 100u);
  EXPECT_GT(r.errors.dropped, 50u);
  EXPECT_EQ(server.requests(), r.errors.timeout);
  EXPECT_DOUBLE_EQ(r.error_rate(), 1.0);
  ASSERT_EQ(r.error_latency.total_count(), 100u);
  EXPECT_GE(r.error_latency.min(), 95'000);
  EXPECT_LE(r.error_latency.value_at_percentile(50), 300'000);
}

TEST(Engine, StagesUseTheThreadsTheirConnectionsAllow) {
  // A first stage of one connection must not hold every later stage to one thread.
  TinyServer server;
  RunPlan plan = closed_plan(server.port(), 1, 0);
  plan.total_request_budget.reset();
  plan.phases.front().duration = std::chrono::milliseconds(150);
  Phase wide = plan.phases.front();
  wide.stage_index = 1;
  wide.connections = 8;
  plan.phases.push_back(wide);
  plan.threads = 4;
  const RunOutcome outcome = run_quietly(plan);
  EXPECT_EQ(outcome.info.threads, 4u);
  ASSERT_EQ(outcome.result.stages.size(), 2u);
  EXPECT_EQ(outcome.result.stages[0].connections, 1u);
  EXPECT_EQ(outcome.result.stages[1].connections, 8u);
  EXPECT_GT(outcome.result.stages[1].result.requests, 0u);
  EXPECT_EQ(server.requests(), outcome.result.result.requests);
  EXPECT_GE(server.requests_per_connection().size(), 8u);
}

// Allocations on the worker thread for a whole run; the difference between a
// long and a short run is what the requests themselves allocate.
// `tls`: the client's context for an https plan.
uint64_t worker_allocations(const RunPlan& plan, uint64_t requests,
                            asio::ssl::context* tls = nullptr) {
  const uint16_t port = plan.target.port;
  std::atomic<bool> stop(false);
  asio::io_context resolver_io;
  std::vector<tcp::endpoint> endpoints = {tcp::endpoint(asio::ip::make_address("127.0.0.1"), port)};
  Worker worker(plan, endpoints, tls, stop, false);
  uint64_t allocations = 0;
  std::thread thread([&] {
    testing::AllocationCounter counter;
    worker.run(Clock::now());
    allocations = counter.count();
  });
  thread.join();
  EXPECT_EQ(worker.result().result.requests, requests);
  return allocations;
}

TEST(Engine, SteadyStateDoesNotAllocatePerRequest) {
  TinyServer server;
  const uint64_t short_run = worker_allocations(closed_plan(server.port(), 4, 1'000), 1'000);
  const uint64_t long_run = worker_allocations(closed_plan(server.port(), 4, 21'000), 21'000);
  // 20,000 more requests; the snapshot published every 100 ms allocates a
  // little, which is why the bound is not zero.
  EXPECT_LT(long_run - std::min(long_run, short_run), 200u)
      << "short run: " << short_run << " allocations, long run: " << long_run;
}

// wrk's loop per request: one send(2), the response's readiness event, one
// recv(2); one epoll_wait(2) per batch of events, and epoll_ctl(2) only when
// a connection opens. Through Boost 1.74's reactor a read was tried as soon
// as it was asked for, right after the request went out: it found nothing,
// and the response took a second recv(2).
// The socket and epoll calls of one worker's run, on a thread of its own.
struct SocketCalls {
  uint64_t sends = 0;
  uint64_t receives = 0;
  uint64_t found_nothing = 0;
  uint64_t epoll_changes = 0;
  uint64_t epoll_waits = 0;
};

SocketCalls counted_run(Worker& worker) {
  SocketCalls calls;
  std::thread thread([&] {
    testing::SocketCallCounter counter;
    worker.run(Clock::now());
    calls = {counter.sends(), counter.receives(), counter.receives_that_found_nothing(),
             counter.epoll_changes(), counter.epoll_waits()};
  });
  thread.join();
  return calls;
}

TEST(Engine, ClosedModelSendsAndReadsOncePerRequest) {
  TinyServer server;
  constexpr uint64_t kRequests = 5'000;
  constexpr uint64_t kConnections = 4;
  std::atomic<bool> stop(false);
  std::vector<tcp::endpoint> endpoints = {
      tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port())};
  Worker worker(closed_plan(server.port(), kConnections, kRequests), endpoints, nullptr, stop,
                false);
  const SocketCalls calls = counted_run(worker);
  EXPECT_EQ(worker.result().result.requests, kRequests);
  EXPECT_EQ(server.requests(), kRequests);
  EXPECT_EQ(calls.sends, kRequests);
  // A response split across segments takes a second read, a readiness event
  // that was not for data a read that finds nothing: a few at most.
  EXPECT_GE(calls.receives, kRequests);
  EXPECT_LE(calls.receives, kRequests + kRequests / 50) << calls.found_nothing << " found nothing";
  EXPECT_LE(calls.found_nothing, kRequests / 100) << "of " << calls.receives << " recv(2) calls";
  // Each connection is added once and switched to read readiness once it is
  // open; the timerfd of the tick is not re-armed with epoll_ctl.
  EXPECT_LE(calls.epoll_changes, 2 * kConnections);
  EXPECT_LE(calls.epoll_waits, kRequests);
}

// HTTP/1.1 over TLS on the epoll loop, OpenSSL reading the socket itself:
// as on the plain path, a response is one read(2), and a read shorter than
// asked took all there was, so none follows it to find the socket empty
// (the next response is a new event). Only the handshakes (a few reads per
// connection) read before anything arrived.
// A worker's run of `requests` over `connections` to a TinyServer over TLS
// on `engine`, its socket calls counted.
struct CountedTlsRun {
  SocketCalls calls;
  Result result;
  uint64_t served = 0;           // as the server counted
  std::size_t request_size = 0;  // bytes of one request
};

CountedTlsRun counted_tls_run(Engine engine, uint64_t connections, uint64_t requests) {
  const auto server_tls = self_signed_server_context();
  TinyServer server(server_tls.get());
  std::atomic<bool> stop(false);
  std::vector<tcp::endpoint> endpoints = {
      tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port())};
  RunPlan plan = https_plan(server.port(), connections, requests);
  plan.engine = engine;
  const auto client_tls = make_tls_context(plan.tls);
  Worker worker(plan, endpoints, client_tls.get(), stop, false);
  CountedTlsRun run;
  run.calls = counted_run(worker);
  run.result = worker.result().result;
  run.served = server.requests();
  run.request_size = plan.requests[0].wire.size();
  return run;
}

TEST(Engine, TlsReadsEachResponseOnceAndNoReadFindsNothingAfterIt) {
  constexpr uint64_t kRequests = 2'000;
  constexpr uint64_t kConnections = 4;
  const CountedTlsRun run = counted_tls_run(Engine::epoll, kConnections, kRequests);
  const SocketCalls& calls = run.calls;
  EXPECT_EQ(run.result.requests, kRequests);
  EXPECT_EQ(run.result.errors.total(), 0u);
  EXPECT_EQ(run.served, kRequests);
  constexpr uint64_t kHandshakeReads = 8 * kConnections;
  EXPECT_GE(calls.receives, kRequests);
  EXPECT_LE(calls.receives, kRequests + kRequests / 50 + kHandshakeReads)
      << calls.found_nothing << " found nothing";
  EXPECT_LE(calls.found_nothing, kRequests / 100 + kHandshakeReads)
      << "of " << calls.receives << " reads";
}

// ------------------------------------------------ the same on io_uring
// HTTP/1.1 on the io_uring engine (UringLoop): the exchanges above again,
// where the kernel and the seccomp profile allow io_uring.

#define SKIP_WITHOUT_IO_URING()                       \
  if (const int probe = probe_io_uring(); probe != 0) \
  GTEST_SKIP() << io_uring_unavailable_reason(probe)

RunPlan on_io_uring(RunPlan plan) {
  plan.engine = Engine::io_uring;
  return plan;
}

// Runs of `plan_for(connections, requests)` on io_uring split across
// threads: every request counted once, as the server counted it.
void expect_exact_on_io_uring_across_thread_splits(
    const TinyServer& server, const std::function<RunPlan(uint64_t, uint64_t)>& plan_for) {
  for (const auto& [threads, connections, requests] :
       std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>{{1, 1, 1}, {2, 3, 7}, {3, 7, 1003}}) {
    const uint64_t before = server.requests();
    RunPlan plan = on_io_uring(plan_for(connections, requests));
    plan.threads = threads;
    const RunOutcome outcome = run_quietly(plan);
    const Result& r = outcome.result.result;
    EXPECT_EQ(r.requests, requests);
    EXPECT_EQ(r.failures(), 0u);
    EXPECT_EQ(r.body_bytes_received, 5 * requests);
    EXPECT_EQ(server.requests() - before, requests);
    EXPECT_EQ(outcome.info.engine, "io_uring");
    EXPECT_EQ(outcome.info.server_software, "tiny");
  }
}

TEST(UringEngine, CountsEveryRequestExactlyAcrossThreadSplitsAndNamesItself) {
  SKIP_WITHOUT_IO_URING();
  TinyServer server;
  expect_exact_on_io_uring_across_thread_splits(
      server, [&](uint64_t connections, uint64_t requests) {
        return closed_plan(server.port(), connections, requests);
      });
  EXPECT_EQ(run_quietly(closed_plan(server.port(), 1, 1)).info.engine, "epoll");
}

TEST(UringEngine, StalledRequestsTimeOutAsTimeoutsAndTheirSocketsAreCancelled) {
  SKIP_WITHOUT_IO_URING();
  TinyServer server;
  RunPlan plan = on_io_uring(closed_plan(server.port(), 2, 4, "/stall"));
  plan.timeout = std::chrono::milliseconds(100);
  const RunOutcome outcome = run_quietly(plan);
  EXPECT_EQ(outcome.result.result.requests, 4u);
  EXPECT_EQ(outcome.result.result.errors.timeout, 4u);
  EXPECT_EQ(outcome.result.result.latency.total_count(), 0u);
}

TEST(UringEngine, ATimeoutIsCalledAtItsDeadlineWhileOtherRequestsKeepStarting) {
  SKIP_WITHOUT_IO_URING();
  TinyServer server;
  RunPlan plan = on_io_uring(closed_plan(server.port(), 3, 60, "/delay"));
  std::string error;
  const Target stall =
      *parse_target("http://127.0.0.1:" + std::to_string(server.port()) + "/stall", error);
  plan.requests.push_back(make_request(stall, "stall", "GET", "", {}, "", true));
  plan.requests[0].weight = 9;
  plan.timeout = std::chrono::milliseconds(200);
  const Result r = run_quietly(plan).result.result;
  EXPECT_EQ(r.requests, 60u);
  EXPECT_EQ(r.errors.timeout, 6u);
  EXPECT_GE(r.error_latency.min(), r.error_latency.lowest_equivalent_value(200'000));
  EXPECT_LE(r.error_latency.max(), 300'000);
}

TEST(UringEngine, AStaleKeepAliveConnectionIsRetriedOnceNotCountedAsAnError) {
  SKIP_WITHOUT_IO_URING();
  TinyServer server;
  const RunOutcome outcome =
      run_quietly(on_io_uring(closed_plan(server.port(), 1, 10, "/close-silently")));
  EXPECT_EQ(outcome.result.result.requests, 10u);
  EXPECT_EQ(outcome.result.result.failures(), 0u);
  EXPECT_EQ(server.requests(), 10u);
  EXPECT_EQ(outcome.result.result.retries, 9u);
}

TEST(UringEngine, RefusedConnectionsAreConnectErrors) {
  SKIP_WITHOUT_IO_URING();
  const RunOutcome outcome = run_quietly(on_io_uring(closed_plan(closed_loopback_port(), 2, 6)));
  EXPECT_EQ(outcome.result.result.requests, 6u);
  EXPECT_EQ(outcome.result.result.errors.connect, 6u);
}

TEST(UringEngine, SteadyStateDoesNotAllocatePerRequest) {
  SKIP_WITHOUT_IO_URING();
  TinyServer server;
  const uint64_t short_run =
      worker_allocations(on_io_uring(closed_plan(server.port(), 4, 1'000)), 1'000);
  const uint64_t long_run =
      worker_allocations(on_io_uring(closed_plan(server.port(), 4, 21'000)), 21'000);
  EXPECT_LT(long_run - std::min(long_run, short_run), 200u)
      << "short run: " << short_run << " allocations, long run: " << long_run;
}

// What the engine is for: no send(2), recv(2) or epoll call per request;
// the requests and responses go through the ring (io_uring_enter(2), which
// the counter does not see; scripts/bench and perf count those).
TEST(UringEngine, ClosedModelMakesNoSocketCallPerRequest) {
  SKIP_WITHOUT_IO_URING();
  TinyServer server;
  constexpr uint64_t kRequests = 5'000;
  std::atomic<bool> stop(false);
  std::vector<tcp::endpoint> endpoints = {
      tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port())};
  Worker worker(on_io_uring(closed_plan(server.port(), 4, kRequests)), endpoints, nullptr, stop,
                false);
  uint64_t calls = 0;
  std::thread thread([&] {
    testing::SocketCallCounter counter;
    worker.run(Clock::now());
    calls = counter.sends() + counter.receives() + counter.epoll_changes() + counter.epoll_waits();
  });
  thread.join();
  EXPECT_EQ(worker.result().result.requests, kRequests);
  EXPECT_EQ(server.requests(), kRequests);
  EXPECT_EQ(calls, 0u);
}

// HTTP/1.1 over TLS on io_uring: the ring carries OpenSSL's records
// (TlsRecords), so neither the handshakes nor the requests make a socket
// call of their own (OpenSSL on the socket would read(2) and write(2) it),
// and the counts are exact as on epoll.

TEST(UringEngine, HttpsCountsExactlyAndOpenSslNeverTouchesTheSocket) {
  SKIP_WITHOUT_IO_URING();
  constexpr uint64_t kRequests = 2'000;
  constexpr uint64_t kConnections = 4;
  const CountedTlsRun run = counted_tls_run(Engine::io_uring, kConnections, kRequests);
  const Result& r = run.result;
  EXPECT_EQ(r.requests, kRequests);
  EXPECT_EQ(r.failures(), 0u);
  EXPECT_EQ(run.served, kRequests);
  EXPECT_EQ(r.body_bytes_received, 5 * kRequests);
  // The request's bytes, counted once the records carrying them went.
  EXPECT_EQ(r.bytes_sent, kRequests * run.request_size);
  ASSERT_TRUE(r.tls.has_value());
  EXPECT_EQ(r.tls->handshakes, kConnections);
  const SocketCalls& calls = run.calls;
  EXPECT_EQ(calls.sends + calls.receives + calls.epoll_changes + calls.epoll_waits, 0u);
}

TEST(UringEngine, HttpsCountsEveryRequestExactlyAcrossThreadSplitsAndNamesItself) {
  SKIP_WITHOUT_IO_URING();
  const auto server_tls = self_signed_server_context();
  TinyServer server(server_tls.get());
  expect_exact_on_io_uring_across_thread_splits(
      server, [&](uint64_t connections, uint64_t requests) {
        return https_plan(server.port(), connections, requests);
      });
}

// A new connection per request: each handshake after the first resumes the
// session the server issued, through the records on the ring as on epoll.
TEST(UringEngine, HttpsWithoutKeepAliveResumesSessions) {
  SKIP_WITHOUT_IO_URING();
  const auto server_tls = self_signed_server_context();
  TinyServer server(server_tls.get());
  for (const Engine engine : {Engine::epoll, Engine::io_uring}) {
    RunPlan plan = https_plan(server.port(), 1, 10);
    plan.engine = engine;
    plan.keep_alive = false;
    const Result r = run_quietly(plan).result.result;
    EXPECT_EQ(r.requests, 10u) << to_string(engine);
    EXPECT_EQ(r.failures(), 0u) << to_string(engine);
    ASSERT_TRUE(r.tls.has_value());
    EXPECT_EQ(r.tls->handshakes, 10u) << to_string(engine);
    EXPECT_EQ(r.tls->sessions_reused, 9u) << to_string(engine);
  }
}

TEST(UringEngine, HttpsStalledRequestsTimeOutAndStaleConnectionsAreRetried) {
  SKIP_WITHOUT_IO_URING();
  const auto server_tls = self_signed_server_context();
  TinyServer server(server_tls.get());
  RunPlan stalled = on_io_uring(https_plan(server.port(), 2, 4, "/stall"));
  stalled.timeout = std::chrono::milliseconds(100);
  const Result timed_out = run_quietly(stalled).result.result;
  EXPECT_EQ(timed_out.requests, 4u);
  EXPECT_EQ(timed_out.errors.timeout, 4u);
  EXPECT_EQ(timed_out.latency.total_count(), 0u);

  const uint64_t before = server.requests();
  const Result retried =
      run_quietly(on_io_uring(https_plan(server.port(), 1, 10, "/close-silently"))).result.result;
  EXPECT_EQ(retried.requests, 10u);
  EXPECT_EQ(retried.failures(), 0u) << retried.errors.total();
  EXPECT_EQ(server.requests() - before, 10u);
  EXPECT_EQ(retried.retries, 9u);
}

// `plan` on `engine` against `server`, checked as every exact run is:
// `requests` made, none failed, as many read by the server.
Result exact_run_on(Engine engine, RunPlan plan, const TinyServer& server, uint64_t requests) {
  const uint64_t before = server.requests();
  plan.engine = engine;
  const Result r = run_quietly(plan).result.result;
  EXPECT_EQ(r.requests, requests) << to_string(engine);
  EXPECT_EQ(r.failures(), 0u) << to_string(engine) << ": " << r.errors.total();
  EXPECT_EQ(server.requests() - before, requests) << to_string(engine);
  return r;
}

// A server's KeyUpdate (RFC 8446 section 4.6.3) before each answer, asking
// for the client's: OpenSSL takes it in while reading and writes its own
// with the next request (nothing while reading: checked by hand with a
// trace in receive_tls_uring). On the ring that record goes out with the
// request's; the server reads every request under the client's new keys.
TEST(UringEngine, HttpsKeyUpdatesAreTakenInAndAnsweredOnEachEngine) {
  SKIP_WITHOUT_IO_URING();
  const auto server_tls = self_signed_server_context();
  TinyServer server(server_tls.get());
  for (const Engine engine : {Engine::epoll, Engine::io_uring}) {
    const uint64_t updates_before = server.key_updates();
    const Result r =
        exact_run_on(engine, https_plan(server.port(), 2, 50, "/key-update"), server, 50);
    EXPECT_EQ(server.key_updates() - updates_before, 50u) << to_string(engine);
    ASSERT_TRUE(r.tls.has_value());
    EXPECT_EQ(r.tls->handshakes, 2u) << to_string(engine);
  }
}

// A TLS 1.2 server's HelloRequest before each answer (as Apache's
// per-location client certificates ask for one): the client renegotiates
// and the connection goes on, on each engine. Under a kernel with the tls
// module (the kernel-tls tier) epoll's first connections have their records
// in the kernel, which cannot renegotiate: each of those ends once, its
// request goes out again, and the connections after it stay in user space.
TEST(UringEngine, HttpsTls12RenegotiationsAreMadeAndConnectionsKept) {
  SKIP_WITHOUT_IO_URING();
  const auto server_tls = self_signed_server_context(TLS1_2_VERSION);
  TinyServer server(server_tls.get());
  for (const Engine engine : {Engine::epoll, Engine::io_uring}) {
    const uint64_t asked_before = server.renegotiations_asked();
    const uint64_t handshakes_before = server.handshakes_read_under();
    const Result r =
        exact_run_on(engine, https_plan(server.port(), 2, 20, "/renegotiate"), server, 20);
    ASSERT_TRUE(r.tls.has_value());
    EXPECT_LE(r.tls->kernel_receive, 2u) << to_string(engine);
    EXPECT_EQ(r.tls->handshakes, 2u + r.tls->kernel_receive) << to_string(engine);
    EXPECT_EQ(r.retries, r.tls->kernel_receive) << to_string(engine);
    // Each request after a connection's first was read under the
    // renegotiation its previous answer asked for.
    EXPECT_EQ(server.renegotiations_asked() - asked_before, 20u) << to_string(engine);
    EXPECT_EQ(server.handshakes_read_under() - handshakes_before, 20u) << to_string(engine);
  }
}

// The server asks for a renegotiation and closes: the next request, written
// once the renegotiation is answered, finds the connection ended instead (or
// the end comes between requests) and goes out again on a new one: no
// request lost, none read twice, none left waiting for its deadline.
TEST(UringEngine, HttpsRenegotiationEndedByTheServersCloseRetriesTheRequest) {
  SKIP_WITHOUT_IO_URING();
  const auto server_tls = self_signed_server_context(TLS1_2_VERSION);
  TinyServer server(server_tls.get());
  for (const Engine engine : {Engine::epoll, Engine::io_uring}) {
    RunPlan plan = https_plan(server.port(), 1, 10, "/renegotiate/close-silently");
    plan.timeout = std::chrono::seconds(5);
    const Result r = exact_run_on(engine, plan, server, 10);
    ASSERT_TRUE(r.tls.has_value());
    EXPECT_EQ(r.tls->handshakes, 10u) << to_string(engine);
    // Each request after the first was written on the ended connection.
    EXPECT_EQ(r.retries, 9u) << to_string(engine);
  }
}

TEST(UringEngine, HttpsSteadyStateDoesNotAllocatePerRequest) {
  SKIP_WITHOUT_IO_URING();
  const auto server_tls = self_signed_server_context();
  TinyServer server(server_tls.get());
  const RunPlan short_plan = on_io_uring(https_plan(server.port(), 4, 1'000));
  const auto client_tls = make_tls_context(short_plan.tls);
  const uint64_t short_run = worker_allocations(short_plan, 1'000, client_tls.get());
  const uint64_t long_run = worker_allocations(on_io_uring(https_plan(server.port(), 4, 21'000)),
                                               21'000, client_tls.get());
  EXPECT_LT(long_run - std::min(long_run, short_run), 200u)
      << "short run: " << short_run << " allocations, long run: " << long_run;
}

TEST(HandlerMemory, ServesOneOperationAtATimeAndLeavesTheRestToTheHeap) {
  HandlerMemory memory;
  void* first = memory.allocate(64);
  void* second = memory.allocate(64);  // the memory is taken
  void* too_big = nullptr;
  EXPECT_NE(first, second);
  memory.deallocate(second);
  memory.deallocate(first);
  EXPECT_EQ(memory.allocate(64), first);
  memory.deallocate(first);
  too_big = memory.allocate(1 << 20);
  EXPECT_NE(too_big, first);
  memory.deallocate(too_big);
  EXPECT_EQ(memory.allocate(8), first);
  memory.deallocate(first);
}

TEST(HandlerMemory, TwoOperationsOutstandingTogetherDoNotReachTheHeap) {
  // Two timer waits at a time, as the open model's arrival timer beside a
  // connection's read: Asio's per-thread cache keeps one freed block, so
  // without memory of their own one of them allocates every round.
  asio::io_context io(1);
  asio::steady_timer first(io), second(io);
  HandlerMemory first_memory, second_memory;
  uint64_t fired = 0;
  auto round = [&] {
    first.expires_after(std::chrono::nanoseconds{0});
    second.expires_after(std::chrono::nanoseconds{0});
    first.async_wait(with_memory(first_memory, [&](const boost::system::error_code&) { ++fired; }));
    second.async_wait(
        with_memory(second_memory, [&](const boost::system::error_code&) { ++fired; }));
    io.run();
    io.restart();
  };
  round();  // the io_context's own structures
  testing::AllocationCounter counter;
  for (int i = 0; i < 1000; ++i) round();
  EXPECT_EQ(counter.count(), 0u);
  EXPECT_EQ(fired, 2002u);
}

// The arrival timer is re-armed for every arrival between the connections'
// operations: it has memory of its own, as each connection has (see
// handler_memory.hpp), so Asio's one-block per-thread cache is not outrun.
TEST(Engine, OpenModelDoesNotAllocatePerRequest) {
  // Arrivals, the wait for a free connection and dropping all use storage
  // made before the run.
  TinyServer server;
  auto counted = [&](uint64_t requests) {
    RunPlan plan = open_plan(server.port(), 20'000, std::chrono::nanoseconds{0}, 4);
    plan.phases.front().duration = std::chrono::nanoseconds{0};
    plan.total_request_budget = requests;
    return worker_allocations(plan, requests);
  };
  const uint64_t short_run = counted(1'000);
  const uint64_t long_run = counted(11'000);
  EXPECT_LT(long_run - std::min(long_run, short_run), 200u)
      << "short run: " << short_run << " allocations, long run: " << long_run;
}

}  // namespace
}  // namespace kubeload::loadgen
