// Scenarios on the engine against a small server in this process (on
// 127.0.0.1) that issues a token per login and checks that the connection's
// later requests carry it: values carried between steps, cookies, exact
// per-step and per-iteration counts on each engine, and no heap allocation
// per step in the steady state.

#include <atomic>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "allocation_counter.hpp"
#include "loadgen/engine/asio.hpp"
#include "loadgen/engine/engine_choice.hpp"
#include "loadgen/engine/runner.hpp"
#include "loadgen/engine/scenario_plan.hpp"
#include "loadgen/engine/virtual_user.hpp"
#include "loadgen/engine/worker.hpp"

namespace kubeload::loadgen {
namespace {

// GET /login answers {"token":"tN"} and sets the cookie sid=sN; GET /use
// answers {"ok":true} when its Authorization is "Bearer tN" and its Cookie
// "sid=sN" for the connection's last login, and counts a mismatch otherwise.
class TokenServer {
 public:
  TokenServer() : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TokenServer() {
    io_.stop();
    thread_.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  uint64_t logins() const { return logins_.load(); }
  uint64_t uses() const { return uses_.load(); }
  uint64_t mismatches() const { return mismatches_.load(); }

 private:
  struct Session : std::enable_shared_from_this<Session> {
    Session(tcp::socket s, TokenServer& owner) : socket(std::move(s)), server(owner) {}
    void read() {
      socket.async_read_some(asio::buffer(buffer), [self = shared_from_this()](
                                                       boost::system::error_code ec, size_t n) {
        if (ec) return;
        self->pending.append(self->buffer.data(), n);
        size_t end;
        while ((end = self->pending.find("\r\n\r\n")) != std::string::npos) {
          const std::string head = self->pending.substr(0, end);
          self->pending.erase(0, end + 4);
          std::string body;
          std::string extra;
          if (head.rfind("GET /login", 0) == 0) {
            const uint64_t n = ++self->server.next_token_;
            ++self->server.logins_;
            self->token = "t" + std::to_string(n);
            self->cookie = "s" + std::to_string(n);
            body = R"({"token":")" + self->token + R"("})";
            extra = "Set-Cookie: sid=" + self->cookie + "; Path=/\r\n";
          } else {
            ++self->server.uses_;
            const bool bearer =
                head.find("\r\nAuthorization: Bearer " + self->token + "\r\n") != std::string::npos;
            const bool cookie = head.find("\r\nCookie: sid=" + self->cookie) != std::string::npos;
            if (self->token.empty() || !bearer || !cookie) ++self->server.mismatches_;
            body = R"({"ok":true})";
          }
          const std::string response =
              "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
              "\r\n" + body;
          asio::write(self->socket, asio::buffer(response), ec);
          if (ec) return;
        }
        self->read();
      });
    }
    tcp::socket socket;
    TokenServer& server;
    std::array<char, 4096> buffer{};
    std::string pending;
    std::string token;
    std::string cookie;
  };

  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (!ec) std::make_shared<Session>(std::move(socket), *this)->read();
      accept();
    });
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<uint64_t> next_token_{0};
  std::atomic<uint64_t> logins_{0};
  std::atomic<uint64_t> uses_{0};
  std::atomic<uint64_t> mismatches_{0};
};

// Log in, then use the token twice.
LoadTestSpec token_journey(uint16_t port, uint64_t connections, uint64_t iterations) {
  LoadTestSpec spec;
  spec.url = "http://127.0.0.1:" + std::to_string(port) + "/";
  ScenarioSpec scenario;
  scenario.name = "journey";
  StepSpec login;
  login.name = "login";
  login.path = "/login";
  login.extract.push_back({"token", ExtractSpec::From::json, "/token", std::nullopt});
  StepSpec use;
  use.name = "use";
  use.path = "/use?vu=${vu}&i=${iteration}";
  use.headers.emplace_back("Authorization", "Bearer ${token}");
  use.checks.push_back({CheckSpec::Kind::json_equals, "/ok", "true"});
  scenario.steps = {login, use, use};
  spec.scenarios.push_back(scenario);
  spec.load.connections = connections;
  spec.load.iterations = iterations;
  return spec;
}

RunPlan scenario_plan(const LoadTestSpec& spec, Engine engine) {
  std::string error;
  const auto target = parse_target(*spec.url, error);
  EXPECT_TRUE(target) << error;
  RunPlan plan = plan_from_spec(spec, *target, 1);
  const auto problems = prepare_scenarios(plan, spec, ".");
  EXPECT_TRUE(problems.empty()) << problems.front();
  plan.engine = engine;
  return plan;
}

RunOutcome run_quietly(const RunPlan& plan) {
  RunOptions options;
  options.progress = false;
  return run_plan(plan, options);
}

const NamedResult* row(const RunResult& run, std::string_view name) {
  for (const NamedResult& r : run.request_results) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

class ScenarioEngine : public ::testing::TestWithParam<Engine> {};

TEST_P(ScenarioEngine, TokensAndCookiesReachEveryLaterStepWithExactCounts) {
  if (GetParam() == Engine::io_uring && probe_io_uring() != 0) GTEST_SKIP() << "no io_uring";
  TokenServer server;
  for (uint32_t threads : {1u, 3u}) {
    RunPlan plan = scenario_plan(token_journey(server.port(), 5, 101), GetParam());
    plan.threads = threads;
    const uint64_t logins_before = server.logins();
    const uint64_t uses_before = server.uses();
    const RunOutcome outcome = run_quietly(plan);
    SCOPED_TRACE("threads " + std::to_string(threads));
    EXPECT_EQ(outcome.result.result.failures(), 0u);
    ASSERT_NE(row(outcome.result, "login"), nullptr);
    ASSERT_NE(row(outcome.result, "use"), nullptr);
    EXPECT_EQ(row(outcome.result, "login")->result.requests, 101u);
    EXPECT_EQ(row(outcome.result, "use")->result.requests, 202u);
    EXPECT_EQ(server.logins() - logins_before, 101u);
    EXPECT_EQ(server.uses() - uses_before, 202u);
    EXPECT_EQ(server.mismatches(), 0u);
    ASSERT_EQ(outcome.result.scenarios.size(), 1u);
    EXPECT_EQ(outcome.result.scenarios[0].name, "journey");
    EXPECT_EQ(outcome.result.scenarios[0].iterations, 101u);
    EXPECT_EQ(outcome.result.scenarios[0].iterations_failed, 0u);
    EXPECT_EQ(outcome.result.scenarios[0].duration.total_count(), 101u);
  }
}

TEST_P(ScenarioEngine, AFailedCheckAndAMissedExtractionAreErrorsOfTheirOwn) {
  if (GetParam() == Engine::io_uring && probe_io_uring() != 0) GTEST_SKIP() << "no io_uring";
  TokenServer server;
  LoadTestSpec spec = token_journey(server.port(), 2, 10);
  // The login's body has no /nothing: the iteration ends there.
  spec.scenarios[0].steps[0].extract.push_back(
      {"other", ExtractSpec::From::json, "/nothing", std::nullopt});
  ScenarioSpec checked;
  checked.name = "checked";
  StepSpec wrong;
  wrong.name = "wrong";
  wrong.path = "/login";
  wrong.checks.push_back({CheckSpec::Kind::body_contains, "", "no such text"});
  checked.steps = {wrong};
  spec.scenarios.push_back(checked);
  spec.load.iterations = 20;
  const RunOutcome outcome = run_quietly(scenario_plan(spec, GetParam()));
  ASSERT_NE(row(outcome.result, "login"), nullptr);
  EXPECT_EQ(row(outcome.result, "login")->result.requests, 10u);
  EXPECT_EQ(row(outcome.result, "login")->result.errors.extract, 10u);
  const NamedResult* use = row(outcome.result, "use");
  EXPECT_TRUE(use == nullptr || use->result.requests == 0u) << "a step after a miss was sent";
  ASSERT_NE(row(outcome.result, "wrong"), nullptr);
  EXPECT_EQ(row(outcome.result, "wrong")->result.errors.check, 10u);
  ASSERT_EQ(outcome.result.scenarios.size(), 2u);
  EXPECT_EQ(outcome.result.scenarios[0].iterations_failed, 10u);
  EXPECT_EQ(outcome.result.scenarios[1].iterations_failed, 10u);
}

// A value the server sent that would split the request (a header line
// ended, a second request smuggled in) is never sent: the step fails unsent.
TEST(VirtualUserRendering, AValueThatWouldSplitTheRequestIsNotSent) {
  const LoadTestSpec spec = token_journey(8080, 1, 1);
  RunPlan plan = scenario_plan(spec, Engine::epoll);
  VirtualUser vu(*plan.scenarios, 0, 1);
  DataCursors cursors(*plan.scenarios, plan.part);
  ScenarioScratch scratch;
  for (const std::string& token : {std::string("t1"), std::string(R"(t1\r\nX-Injected: 1)"),
                                   std::string(R"(t1\nGET / HTTP/1.1)")}) {
    SCOPED_TRACE(token);
    ASSERT_TRUE(vu.begin_iteration(0, Clock::now(), true, cursors));
    ASSERT_TRUE(vu.render_step(plan.target, 0, 0));  // login: nothing to fill in
    const std::string body = R"({"token":")" + token + R"("})";
    const scenario::ResponseView response{200, {}, body};
    ASSERT_EQ(vu.finish_step(Outcome::success, &response, 0, scratch).outcome, Outcome::success);
    const bool clean = token == "t1";
    EXPECT_EQ(vu.render_step(plan.target, 0, 0), clean);
    if (clean) {
      EXPECT_NE(vu.outgoing().wire.find("\r\nAuthorization: Bearer t1\r\n"), std::string::npos)
          << vu.outgoing().wire;
    }
    vu.end_iteration();
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, ScenarioEngine,
                         ::testing::Values(Engine::epoll, Engine::io_uring),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Allocations on the worker thread for a whole run; the difference between a
// long and a short run is what the steps themselves allocate.
uint64_t worker_allocations(const RunPlan& plan, uint64_t steps) {
  std::atomic<bool> stop(false);
  std::vector<tcp::endpoint> endpoints = {
      tcp::endpoint(asio::ip::make_address("127.0.0.1"), plan.target.port)};
  Worker worker(plan, endpoints, nullptr, stop, false);
  uint64_t allocations = 0;
  std::thread thread([&] {
    testing::AllocationCounter counter;
    worker.run(Clock::now());
    allocations = counter.count();
  });
  thread.join();
  EXPECT_EQ(worker.result().result.requests, steps);
  return allocations;
}

TEST(ScenarioEngineSteadyState, AStepRenderedFromTemplatesDoesNotAllocate) {
  TokenServer server;
  const uint64_t short_run =
      worker_allocations(scenario_plan(token_journey(server.port(), 4, 300), Engine::epoll), 900);
  const uint64_t long_run = worker_allocations(
      scenario_plan(token_journey(server.port(), 4, 5'300), Engine::epoll), 15'900);
  // 15,000 more steps (5,000 logins with their extraction and cookie, 10,000
  // requests rendered with the token); the snapshots allocate a little.
  EXPECT_LT(long_run - std::min(long_run, short_run), 200u)
      << "short run: " << short_run << " allocations, long run: " << long_run;
  EXPECT_EQ(server.mismatches(), 0u);
}

}  // namespace
}  // namespace kubeload::loadgen
