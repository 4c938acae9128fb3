// Which loop carries a run to an http:// target (plain HTTP/1.1, h2c): the
// decision is a pure function of what was asked (--engine), what the run
// sends and what the io_uring probe found, so each branch is tested here
// without the kernel's help.

#include "loadgen/engine/engine_choice.hpp"

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

#include "loadgen/cli/cli.hpp"
#include "loadgen/engine/plan.hpp"

namespace kubeload::loadgen {
namespace {

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(EngineChoice, AutoIsIoUringWhenTheProbeSucceedsAndEpollWithTheReasonWhenItFails) {
  const EngineDecision available = decide_engine(EngineRequest::automatic, 0, Traffic::plain_http1);
  EXPECT_EQ(available.engine, Engine::io_uring);
  EXPECT_FALSE(available.refused);
  EXPECT_EQ(available.reason, "");
  for (const int error : {EPERM, EACCES, ENOSYS, EINVAL, ENOMEM, EMFILE}) {
    const EngineDecision fallback =
        decide_engine(EngineRequest::automatic, error, Traffic::plain_http1);
    EXPECT_EQ(fallback.engine, Engine::epoll) << error;
    EXPECT_FALSE(fallback.refused) << error;
    EXPECT_EQ(fallback.reason, io_uring_unavailable_reason(error));
  }
}

TEST(EngineChoice, IoUringAskedForButUnavailableRefusesTheRunNamingWhy) {
  const EngineDecision refused =
      decide_engine(EngineRequest::io_uring, EPERM, Traffic::plain_http1);
  EXPECT_TRUE(refused.refused);
  EXPECT_TRUE(contains(refused.reason, "--engine io_uring: io_uring_setup(2) was refused (EPERM)"))
      << refused.reason;
  EXPECT_TRUE(contains(refused.reason, "seccomp")) << refused.reason;
  EXPECT_TRUE(contains(refused.reason, "kernel.io_uring_disabled")) << refused.reason;
  EXPECT_TRUE(contains(refused.reason, "--engine epoll or auto")) << refused.reason;
  const EngineDecision granted = decide_engine(EngineRequest::io_uring, 0, Traffic::plain_http1);
  EXPECT_EQ(granted.engine, Engine::io_uring);
  EXPECT_FALSE(granted.refused);
}

TEST(EngineChoice, EpollAskedForIsEpollWhateverTheProbeSays) {
  for (const int error : {0, EPERM}) {
    const EngineDecision decision =
        decide_engine(EngineRequest::epoll, error, Traffic::plain_http1);
    EXPECT_EQ(decision.engine, Engine::epoll);
    EXPECT_FALSE(decision.refused);
    EXPECT_EQ(decision.reason, "");
  }
}

// HTTP/1.1 over TLS is decided as plain HTTP/1.1 is: io_uring where the
// probe allows it (the ring carries OpenSSL's records), epoll otherwise or
// when asked for (OpenSSL on the socket, kTLS for kept-alive TLS 1.2 where
// the kernel has it).
TEST(EngineChoice, HttpsRunsOnIoUringWhereAllowedAndOnEpollOtherwise) {
  EXPECT_TRUE(may_use_io_uring(EngineRequest::automatic, Traffic::tls_http1));
  EXPECT_TRUE(may_use_io_uring(EngineRequest::io_uring, Traffic::tls_http1));
  EXPECT_FALSE(may_use_io_uring(EngineRequest::epoll, Traffic::tls_http1));
  for (const EngineRequest request : {EngineRequest::automatic, EngineRequest::io_uring}) {
    const EngineDecision granted = decide_engine(request, 0, Traffic::tls_http1);
    EXPECT_EQ(granted.engine, Engine::io_uring);
    EXPECT_FALSE(granted.refused);
    EXPECT_EQ(granted.reason, "");
  }
  const EngineDecision fallback =
      decide_engine(EngineRequest::automatic, EPERM, Traffic::tls_http1);
  EXPECT_EQ(fallback.engine, Engine::epoll);
  EXPECT_FALSE(fallback.refused);
  EXPECT_EQ(fallback.reason, io_uring_unavailable_reason(EPERM));
  for (const int probe_error : {0, EPERM}) {
    const EngineDecision asked =
        decide_engine(EngineRequest::epoll, probe_error, Traffic::tls_http1);
    EXPECT_EQ(asked.engine, Engine::epoll);
    EXPECT_FALSE(asked.refused);
  }
  const EngineDecision refused = decide_engine(EngineRequest::io_uring, EPERM, Traffic::tls_http1);
  EXPECT_TRUE(refused.refused);
  EXPECT_TRUE(contains(refused.reason, "--engine io_uring: io_uring_setup(2) was refused (EPERM)"))
      << refused.reason;
}

TEST(EngineChoice, Http2OverTlsRunsOnAsioAndRefusesAnExplicitEngine) {
  const EngineDecision automatic = decide_engine(EngineRequest::automatic, 0, Traffic::h2_tls);
  EXPECT_EQ(automatic.engine, Engine::asio);
  EXPECT_FALSE(automatic.refused);
  for (const EngineRequest request : {EngineRequest::io_uring, EngineRequest::epoll}) {
    const EngineDecision explicit_engine = decide_engine(request, 0, Traffic::h2_tls);
    EXPECT_TRUE(explicit_engine.refused);
    EXPECT_TRUE(contains(explicit_engine.reason, "HTTP/2 over TLS runs on Asio only"))
        << explicit_engine.reason;
    EXPECT_TRUE(contains(explicit_engine.reason, to_string(request))) << explicit_engine.reason;
  }
  EXPECT_FALSE(may_use_io_uring(EngineRequest::automatic, Traffic::h2_tls));
}

// h2c has no epoll loop of its own: off io_uring it runs on Asio, and is
// named so.
TEST(EngineChoice, H2cIsIoUringWhereTheProbeSucceedsAndAsioOtherwise) {
  EXPECT_EQ(decide_engine(EngineRequest::automatic, 0, Traffic::h2c).engine, Engine::io_uring);
  EXPECT_EQ(decide_engine(EngineRequest::io_uring, 0, Traffic::h2c).engine, Engine::io_uring);
  const EngineDecision fallback = decide_engine(EngineRequest::automatic, EPERM, Traffic::h2c);
  EXPECT_EQ(fallback.engine, Engine::asio);
  EXPECT_FALSE(fallback.refused);
  EXPECT_EQ(fallback.reason, io_uring_unavailable_reason(EPERM));
  const EngineDecision refused = decide_engine(EngineRequest::io_uring, EPERM, Traffic::h2c);
  EXPECT_TRUE(refused.refused);
  EXPECT_TRUE(contains(refused.reason, "--engine io_uring: io_uring_setup(2) was refused (EPERM)"))
      << refused.reason;
  for (const int error : {0, EPERM}) {
    const EngineDecision epoll = decide_engine(EngineRequest::epoll, error, Traffic::h2c);
    EXPECT_EQ(epoll.engine, Engine::asio);
    EXPECT_FALSE(epoll.refused);
    EXPECT_EQ(epoll.reason, "");
  }
  EXPECT_TRUE(may_use_io_uring(EngineRequest::automatic, Traffic::h2c));
  EXPECT_FALSE(may_use_io_uring(EngineRequest::epoll, Traffic::h2c));
}

TEST(EngineChoice, ThePlanNamesTheEngineThatCarriesIt) {
  std::string error;
  RunPlan plan;
  plan.target = *parse_target("http://127.0.0.1:8080/", error);
  for (const Engine engine : {Engine::epoll, Engine::io_uring}) {
    plan.engine = engine;
    plan.protocol = Protocol::http1;
    EXPECT_EQ(plan.traffic(), Traffic::plain_http1);
    EXPECT_EQ(plan.engine_used(), engine);
    plan.protocol = Protocol::h2c;
    EXPECT_EQ(plan.traffic(), Traffic::h2c);
    EXPECT_EQ(plan.engine_used(), engine == Engine::io_uring ? Engine::io_uring : Engine::asio);
  }
  plan.target = *parse_target("https://127.0.0.1:8443/", error);
  for (const Engine engine : {Engine::epoll, Engine::io_uring}) {
    plan.engine = engine;
    plan.protocol = Protocol::http1;
    EXPECT_EQ(plan.traffic(), Traffic::tls_http1);
    EXPECT_EQ(plan.engine_used(), engine);
  }
  plan.protocol = Protocol::http2;
  plan.engine = Engine::asio;
  EXPECT_EQ(plan.traffic(), Traffic::h2_tls);
  EXPECT_EQ(plan.engine_used(), Engine::asio);
  // A server that chose HTTP/1.1 (--allow-http1): the run is HTTP/1.1 over
  // TLS, on epoll, whatever was decided for HTTP/2.
  plan.protocol = Protocol::http1;
  EXPECT_EQ(plan.traffic(), Traffic::tls_http1);
  EXPECT_EQ(plan.engine_used(), Engine::epoll);
}

TEST(EngineChoice, EachProbeErrorHasItsOwnExplanation) {
  EXPECT_TRUE(contains(io_uring_unavailable_reason(ENOSYS), "ENOSYS"));
  EXPECT_TRUE(contains(io_uring_unavailable_reason(EINVAL), "Linux 6.0"));
  EXPECT_TRUE(contains(io_uring_unavailable_reason(EACCES), "EACCES"));
  EXPECT_TRUE(contains(io_uring_unavailable_reason(EMFILE), "EMFILE"))
      << io_uring_unavailable_reason(EMFILE);
}

TEST(EngineChoice, NamesReadAndWrite) {
  EXPECT_EQ(parse_engine_request("auto"), EngineRequest::automatic);
  EXPECT_EQ(parse_engine_request("io_uring"), EngineRequest::io_uring);
  EXPECT_EQ(parse_engine_request("epoll"), EngineRequest::epoll);
  EXPECT_EQ(parse_engine_request("uring"), std::nullopt);
  EXPECT_EQ(parse_engine_request(""), std::nullopt);
  EXPECT_STREQ(to_string(EngineRequest::automatic), "auto");
  EXPECT_STREQ(to_string(Engine::io_uring), "io_uring");
  EXPECT_STREQ(to_string(Engine::epoll), "epoll");
  EXPECT_STREQ(to_string(Engine::asio), "asio");
}

TEST(EngineChoice, TheProbeAnswersTheSameEveryTime) {
  EXPECT_EQ(probe_io_uring(), probe_io_uring());
}

TEST(EngineCli, EngineFlagIsParsedAndABadValueNamesIt) {
  EXPECT_EQ(parse_command_line({"http://h/"}).engine, std::nullopt);  // the spec's: auto
  EXPECT_EQ(parse_command_line({"--engine", "epoll", "http://h/"}).engine, EngineRequest::epoll);
  EXPECT_EQ(parse_command_line({"--engine=io_uring", "http://h/"}).engine, EngineRequest::io_uring);
  try {
    parse_command_line({"--engine", "kqueue", "http://h/"});
    ADD_FAILURE() << "accepted --engine kqueue";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--engine: auto, io_uring or epoll, got \"kqueue\"");
  }
  EXPECT_TRUE(contains(usage_text(), "--engine E"));
}

}  // namespace
}  // namespace kubeload::loadgen
