// The plain HTTP/1.1 workers' own loop: alarms, posted callbacks and socket
// readiness (edge-triggered, with the owner's generation).

#include "loadgen/engine/event_loop.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeload::loadgen {
namespace {

using std::chrono::milliseconds;

TEST(EventLoop, AlarmsGoOffInTheOrderOfTheirTimesNotOfTheirSetting) {
  std::vector<std::pair<std::size_t, Clock::time_point>> fired;
  EventLoop* loop_ptr = nullptr;
  EventLoop loop([](SocketOwner, uint32_t) {},
                 [&](std::size_t alarm) {
                   fired.emplace_back(alarm, Clock::now());
                   if (fired.size() == 2) loop_ptr->stop();
                 });
  loop_ptr = &loop;
  const Clock::time_point start = Clock::now();
  loop.set_alarm(0, start + milliseconds(60));
  loop.set_alarm(1, start + milliseconds(20));
  loop.run();
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0].first, 1u);
  EXPECT_EQ(fired[1].first, 0u);
  // Never early; how late depends on the machine, so no upper bound.
  EXPECT_GE(fired[0].second, start + milliseconds(20));
  EXPECT_GE(fired[1].second, start + milliseconds(60));
}

TEST(EventLoop, AnAlarmSetAgainKeepsOnlyItsLastTimeAndACancelledOneNeverGoesOff) {
  std::vector<std::size_t> fired;
  EventLoop* loop_ptr = nullptr;
  EventLoop loop([](SocketOwner, uint32_t) {},
                 [&](std::size_t alarm) {
                   fired.push_back(alarm);
                   if (alarm == 0) loop_ptr->stop();
                 });
  loop_ptr = &loop;
  const Clock::time_point start = Clock::now();
  loop.set_alarm(1, start + milliseconds(5));
  loop.cancel_alarm(1);
  loop.set_alarm(0, start + milliseconds(5));
  loop.set_alarm(0, start + milliseconds(40));  // replaces the first time
  loop.run();
  EXPECT_EQ(fired, std::vector<std::size_t>{0});
  EXPECT_GE(Clock::now(), start + milliseconds(40));
}

TEST(EventLoop, AnAlarmWhoseTimeHasPassedGoesOffAtOnce) {
  int fired = 0;
  EventLoop* loop_ptr = nullptr;
  EventLoop loop([](SocketOwner, uint32_t) {},
                 [&](std::size_t) {
                   ++fired;
                   loop_ptr->stop();
                 });
  loop_ptr = &loop;
  loop.set_alarm(0, Clock::now() - milliseconds(5));
  loop.run();
  EXPECT_EQ(fired, 1);
}

TEST(EventLoop, PostedCallbacksRunAfterTheEventsAtHandAndMayPostAgain) {
  std::vector<std::string> ran;
  EventLoop* loop_ptr = nullptr;
  EventLoop loop([](SocketOwner, uint32_t) {}, [](std::size_t) {});
  loop_ptr = &loop;
  loop.post([&] {
    ran.push_back("first");
    loop_ptr->post([&] {
      ran.push_back("posted by first");
      loop_ptr->stop();
    });
  });
  loop.post([&] { ran.push_back("second"); });
  loop.run();
  EXPECT_EQ(ran, (std::vector<std::string>{"first", "second", "posted by first"}));
}

TEST(EventLoop, ASocketsEventsCarryItsOwnerAndComeOncePerEdge) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair), 0);
  UniqueFd ours(pair[0]);
  UniqueFd peer(pair[1]);
  std::vector<std::pair<uint32_t, uint32_t>> owners;  // index, generation
  int ticks = 0;
  EventLoop* loop_ptr = nullptr;
  EventLoop loop(
      [&](SocketOwner owner, uint32_t events) {
        if ((events & EPOLLIN) != 0) owners.emplace_back(owner.index, owner.generation);
      },
      [&](std::size_t) {
        // Nothing was read, yet the data's one edge came once.
        if (++ticks == 3) return loop_ptr->stop();
        loop_ptr->set_alarm(0, Clock::now() + milliseconds(10));
      });
  loop_ptr = &loop;
  ASSERT_EQ(loop.add(ours.get(), EPOLLIN | EPOLLRDHUP | EPOLLET, SocketOwner{7, 3}), 0);
  ASSERT_EQ(::write(peer.get(), "x", 1), 1);
  loop.set_alarm(0, Clock::now() + milliseconds(10));
  loop.run();
  EXPECT_EQ(owners, (std::vector<std::pair<uint32_t, uint32_t>>{{7, 3}}));
}

TEST(EventLoop, AddingAClosedDescriptorNamesTheError) {
  EventLoop loop([](SocketOwner, uint32_t) {}, [](std::size_t) {});
  EXPECT_EQ(loop.add(-1, EPOLLIN, SocketOwner{}), EBADF);
}

}  // namespace
}  // namespace kubeload::loadgen
