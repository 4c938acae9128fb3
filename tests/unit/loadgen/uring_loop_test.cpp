// The plain HTTP/1.1 workers' io_uring loop: alarms as the wait's timeout,
// posted callbacks, multishot receives that name their socket's generation,
// and cancels whose completions stay with the old generation. Skipped where
// io_uring may not be used (the probe's reason is printed).

#include "loadgen/engine/uring_loop.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "loadgen/engine/engine_choice.hpp"

namespace kubeload::loadgen {
namespace {

using std::chrono::milliseconds;

#define SKIP_WITHOUT_IO_URING()                       \
  if (const int probe = probe_io_uring(); probe != 0) \
  GTEST_SKIP() << io_uring_unavailable_reason(probe)

struct Seen {
  SocketOwner owner;
  UringLoop::Op op;
  int result;
  bool more;
  std::string data;
};

TEST(UringLoop, AlarmsGoOffInTheOrderOfTheirTimesAndACancelledOneNever) {
  SKIP_WITHOUT_IO_URING();
  std::vector<std::pair<std::size_t, Clock::time_point>> fired;
  UringLoop* loop_ptr = nullptr;
  UringLoop loop([](SocketOwner, const UringLoop::Completion&) {},
                 [&](std::size_t alarm) {
                   fired.emplace_back(alarm, Clock::now());
                   loop_ptr->stop();
                 },
                 1);
  loop_ptr = &loop;
  loop.start();
  const Clock::time_point start = Clock::now();
  loop.set_alarm(1, start + milliseconds(5));
  loop.cancel_alarm(1);
  loop.set_alarm(0, start + milliseconds(40));
  loop.run();
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].first, 0u);
  EXPECT_GE(fired[0].second, start + milliseconds(40));  // never early
}

TEST(UringLoop, PostedCallbacksRunAfterTheCallerReturns) {
  SKIP_WITHOUT_IO_URING();
  std::vector<int> order;
  UringLoop* loop_ptr = nullptr;
  UringLoop loop([](SocketOwner, const UringLoop::Completion&) {}, [](std::size_t) {}, 1);
  loop_ptr = &loop;
  loop.start();
  loop.post([&] {
    order.push_back(1);
    loop_ptr->post([&] {
      order.push_back(2);
      loop_ptr->stop();
    });
  });
  loop.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(UringLoop, AMultishotReceiveDeliversEveryArrivalWithItsOwnerUntilTheEndOfTheStream) {
  SKIP_WITHOUT_IO_URING();
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  UniqueFd ours(pair[0]);
  UniqueFd peer(pair[1]);
  std::vector<Seen> seen;
  UringLoop* loop_ptr = nullptr;
  UringLoop loop(
      [&](SocketOwner owner, const UringLoop::Completion& done) {
        seen.push_back({owner, done.op, done.result, done.more,
                        std::string(done.data.data(), done.data.size())});
        if (seen.size() == 1) {
          // The second arrival comes after the first was handled.
          ASSERT_EQ(::send(peer.get(), "second", 6, 0), 6);
          peer.reset();
        }
        if (done.result <= 0) loop_ptr->stop();
      },
      [](std::size_t) {}, 4);
  loop_ptr = &loop;
  loop.start();
  const SocketOwner owner{3, 7};
  loop.receive(ours.get(), owner);
  ASSERT_EQ(::send(peer.get(), "first", 5, 0), 5);
  loop.run();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].data, "first");
  EXPECT_TRUE(seen[0].more);
  EXPECT_EQ(seen[1].data, "second");
  EXPECT_EQ(seen[2].result, 0);  // the end of the stream ends the receive
  EXPECT_FALSE(seen[2].more);
  for (const Seen& s : seen) {
    EXPECT_EQ(s.owner.index, 3u);
    EXPECT_EQ(s.owner.generation, 7u);
    EXPECT_EQ(s.op, UringLoop::Op::receive);
  }
}

// A connection closes its socket and opens the next with the same
// descriptor number: the old receive's cancellation names the old
// generation, so the connection can tell it from its new socket's.
TEST(UringLoop, ACancelledReceiveCompletesWithItsOwnGenerationAndTheSocketCloses) {
  SKIP_WITHOUT_IO_URING();
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  UniqueFd peer(pair[1]);
  std::vector<Seen> seen;
  UringLoop* loop_ptr = nullptr;
  UringLoop loop(
      [&](SocketOwner owner, const UringLoop::Completion& done) {
        seen.push_back({owner, done.op, done.result, done.more, {}});
        loop_ptr->stop();
      },
      [](std::size_t) {}, 4);
  loop_ptr = &loop;
  loop.start();
  const SocketOwner old_owner{0, 1};
  loop.receive(pair[0], old_owner);
  loop.cancel(UringLoop::Op::receive, old_owner);
  loop.close(pair[0]);
  loop.run();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].owner.generation, 1u);
  EXPECT_EQ(seen[0].result, -ECANCELED);
  EXPECT_FALSE(seen[0].more);
  // Closed from the ring: the peer reads the end of the stream (within a
  // bound: a socket left open must fail the test, not hang it).
  const timeval bound{2, 0};
  ASSERT_EQ(::setsockopt(peer.get(), SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound), 0);
  char byte = 0;
  EXPECT_EQ(::recv(peer.get(), &byte, 1, 0), 0);
}

TEST(UringLoop, SendAndConnectCompleteWithTheirResults) {
  SKIP_WITHOUT_IO_URING();
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  UniqueFd ours(pair[0]);
  UniqueFd peer(pair[1]);
  std::vector<Seen> seen;
  UringLoop* loop_ptr = nullptr;
  UringLoop loop(
      [&](SocketOwner owner, const UringLoop::Completion& done) {
        seen.push_back({owner, done.op, done.result, done.more, {}});
        if (seen.size() == 2) loop_ptr->stop();
      },
      [](std::size_t) {}, 4);
  loop_ptr = &loop;
  loop.start();
  static constexpr char kRequest[] = "GET / HTTP/1.1\r\n\r\n";
  loop.send(ours.get(), kRequest, sizeof kRequest - 1, {1, 2});
  // A connect to a port bound but not listened on: refused.
  UniqueFd bound(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in nowhere{};
  nowhere.sin_family = AF_INET;
  nowhere.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(bound.get(), reinterpret_cast<const sockaddr*>(&nowhere), sizeof nowhere), 0);
  socklen_t length = sizeof nowhere;
  ASSERT_EQ(::getsockname(bound.get(), reinterpret_cast<sockaddr*>(&nowhere), &length), 0);
  UniqueFd refused(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  loop.connect(refused.get(), reinterpret_cast<const sockaddr*>(&nowhere), sizeof nowhere, {2, 3});
  loop.run();
  ASSERT_EQ(seen.size(), 2u);
  for (const Seen& s : seen) {
    if (s.op == UringLoop::Op::send) {
      EXPECT_EQ(s.result, static_cast<int>(sizeof kRequest - 1));
      EXPECT_EQ(s.owner.index, 1u);
    } else {
      EXPECT_EQ(s.op, UringLoop::Op::connect);
      EXPECT_EQ(s.result, -ECONNREFUSED);
      EXPECT_EQ(s.owner.generation, 3u);
    }
  }
  char request[64] = {};
  EXPECT_EQ(::recv(peer.get(), request, sizeof request, 0),
            static_cast<ssize_t>(sizeof kRequest - 1));
}

}  // namespace
}  // namespace kubeload::loadgen
