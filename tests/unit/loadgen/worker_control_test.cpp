// The worker's control protocol guards (loadgen/worker_server/worker_server.hpp): the run's
// token on /start, /result and /finish, start times far from now, and how long
// a /result may wait for the run's end.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include "kubeload/spec.hpp"
#include "loadgen/worker_server/worker_server.hpp"

namespace kubeload::loadgen {
namespace {

constexpr const char* kToken = "4f1c0a9e7b2d4c6f8a1e3b5d7f9c2e4a";

TEST(WorkerControlToken, OnlyTheRunsTokenIsAccepted) {
  const std::string bearer = std::string("Bearer ") + kToken;
  EXPECT_EQ(check_control_token(bearer, kToken), ControlAuth::ok);
  EXPECT_EQ(check_control_token(std::string("bearer ") + kToken, kToken), ControlAuth::ok);
  EXPECT_EQ(check_control_token("", kToken), ControlAuth::missing);
  EXPECT_EQ(check_control_token("Bearer ", kToken), ControlAuth::missing);
  EXPECT_EQ(check_control_token(std::string("Basic ") + kToken, kToken), ControlAuth::missing);
  EXPECT_EQ(check_control_token(kToken, kToken), ControlAuth::missing);
  std::string wrong = bearer;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  EXPECT_EQ(check_control_token(wrong, kToken), ControlAuth::wrong);
  EXPECT_EQ(check_control_token(bearer + "0", kToken), ControlAuth::wrong);
  EXPECT_EQ(check_control_token(bearer.substr(0, bearer.size() - 1), kToken), ControlAuth::wrong);
  // An unset token never matches, not even an empty one.
  EXPECT_EQ(check_control_token("Bearer x", ""), ControlAuth::wrong);
}

TEST(WorkerControlStart, StartTimesFarFromNowAreRefused) {
  const int64_t now = 1'780'000'000'000;
  const int64_t skew = std::chrono::milliseconds(kMaxStartSkew).count();
  EXPECT_EQ(start_time_problem(now, now), std::nullopt);
  EXPECT_EQ(start_time_problem(now + 3000, now), std::nullopt);
  EXPECT_EQ(start_time_problem(now + skew, now), std::nullopt);
  EXPECT_EQ(start_time_problem(now - skew, now), std::nullopt);
  ASSERT_TRUE(start_time_problem(now + skew + 1, now));
  EXPECT_NE(start_time_problem(now + skew + 1, now)->find("more than 10 minutes"),
            std::string::npos);
  EXPECT_TRUE(start_time_problem(now - skew - 1, now));
  // The ends of the range: no overflow, just refused.
  EXPECT_TRUE(start_time_problem(std::numeric_limits<int64_t>::max(), now));
  EXPECT_TRUE(start_time_problem(std::numeric_limits<int64_t>::min(), now));
  EXPECT_TRUE(start_time_problem(0, now));
}

TEST(WorkerControlStart, TheStartTimeIsTheWholeAtParameter) {
  EXPECT_EQ(requested_start_ms("/start"), 0);
  EXPECT_EQ(requested_start_ms("/start?"), 0);
  EXPECT_EQ(requested_start_ms("/start?at=1796134986468"), 1796134986468);
  EXPECT_EQ(requested_start_ms("/start?x=1&at=17"), 17);
  EXPECT_EQ(requested_start_ms("/start?flat=5"), 0) << "not a parameter named at";
  EXPECT_EQ(requested_start_ms("/start?at="), std::nullopt);
  EXPECT_EQ(requested_start_ms("/start?at=12abc"), std::nullopt);
  EXPECT_EQ(requested_start_ms("/start?at=99999999999999999999"), std::nullopt);
  EXPECT_EQ(requested_start_ms("/start?at=+5"), std::nullopt);
}

TEST(WorkerControlResult, TheWaitIsTheWholeWaitParameterUpToTheLongest) {
  using std::chrono::milliseconds;
  EXPECT_EQ(requested_result_wait("/result"), milliseconds(0));
  EXPECT_EQ(requested_result_wait("/result?wait=0"), milliseconds(0));
  EXPECT_EQ(requested_result_wait("/result?wait=850"), milliseconds(850));
  EXPECT_EQ(requested_result_wait("/result?x=1&wait=17"), milliseconds(17));
  EXPECT_EQ(requested_result_wait("/result?await=5"), milliseconds(0)) << "not named wait";
  EXPECT_EQ(requested_result_wait("/result?waits=5"), milliseconds(0)) << "not named wait";
  EXPECT_EQ(requested_result_wait("/result?wait=86400000"), kMaxResultWait);
  EXPECT_EQ(requested_result_wait("/result?wait="), std::nullopt);
  EXPECT_EQ(requested_result_wait("/result?wait=-1"), std::nullopt);
  EXPECT_EQ(requested_result_wait("/result?wait=1.5"), std::nullopt);
  EXPECT_EQ(requested_result_wait("/result?wait=1s"), std::nullopt);
  EXPECT_EQ(requested_result_wait("/result?wait=99999999999999999999"), std::nullopt);
}

TEST(WorkerControlHeaders, ControlPathsNeedTheTokenOnTheHeader) {
  const std::string bearer = std::string("Bearer ") + kToken;
  for (const char* path : {"/start", "/start?at=1", "/result", "/finish"}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(control_header_answer(path, "", kToken), ControlHeaderAnswer::unauthorized);
    EXPECT_EQ(control_header_answer(path, "Bearer nope", kToken), ControlHeaderAnswer::forbidden);
    EXPECT_EQ(control_header_answer(path, bearer, kToken), ControlHeaderAnswer::proceed);
  }
  for (const char* path : {"/healthz", "/readyz", "/metrics", "/startx", "/result/x"}) {
    EXPECT_EQ(control_header_answer(path, "", kToken), ControlHeaderAnswer::proceed) << path;
  }
}

TEST(WorkerControlHeaders, SecretValuesThatSplitARequestAreRefused) {
  EXPECT_FALSE(header_value_breaks_line("Bearer abc.def"));
  EXPECT_TRUE(header_value_breaks_line("abc\r\nX-Injected: 1"));
  EXPECT_TRUE(header_value_breaks_line("abc\n"));
  EXPECT_TRUE(header_value_breaks_line(std::string("a\0b", 3)));
}

}  // namespace
}  // namespace kubeload::loadgen
