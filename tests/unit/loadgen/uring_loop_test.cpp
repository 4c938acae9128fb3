// The workers' io_uring loop: alarms as the wait's timeout, posted
// callbacks, multishot receives that name their socket's generation, cancels
// whose completions stay with the old generation, sockets in a registered
// file table (and ordinary descriptors where the kernel refuses the table).
// Skipped where io_uring may not be used (the probe's reason is printed).

#include "loadgen/engine/uring_loop.hpp"

#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "loadgen/engine/engine_choice.hpp"

namespace kubeload::loadgen {
namespace {

using std::chrono::milliseconds;

#define SKIP_WITHOUT_IO_URING()                       \
  if (const int probe = probe_io_uring(); probe != 0) \
  GTEST_SKIP() << io_uring_unavailable_reason(probe)

// A listening socket on 127.0.0.1 and its address.
struct Listener {
  UniqueFd socket{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  sockaddr_in address{};
  Listener() {
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(socket.get(), 8) != 0 ||
        ::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ADD_FAILURE() << "listen on 127.0.0.1: " << std::strerror(errno);
    }
  }
  const sockaddr* to() const { return reinterpret_cast<const sockaddr*>(&address); }
  // The next connection's descriptor, within a bound (a test must fail,
  // not hang); its reads are bounded too.
  int accept() const {
    const timeval bound{2, 0};
    ::setsockopt(socket.get(), SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    const int accepted = ::accept4(socket.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (accepted >= 0) ::setsockopt(accepted, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    return accepted;
  }
};

// A connected pair of stream sockets: ours for the ring, the peer's for the
// test to play the server.
bool connected_pair(UniqueFd& ours, UniqueFd& peer) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
  ours.reset(pair[0]);
  peer.reset(pair[1]);
  return true;
}

std::size_t open_descriptors() {
  return static_cast<std::size_t>(std::distance(
      std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator{}));
}

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
  UniqueFd ours;
  UniqueFd peer;
  ASSERT_TRUE(connected_pair(ours, peer));
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
  loop.adopt(3, ours.release());
  loop.receive(3, owner);
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
  UniqueFd ours;
  UniqueFd peer;
  ASSERT_TRUE(connected_pair(ours, peer));
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
  loop.adopt(0, ours.release());
  loop.receive(0, old_owner);
  loop.cancel(UringLoop::Op::receive, old_owner);
  loop.close(0);
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
  UniqueFd ours;
  UniqueFd peer;
  ASSERT_TRUE(connected_pair(ours, peer));
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
  loop.adopt(1, ours.release());
  loop.send(1, kRequest, sizeof kRequest - 1, {1, 2});
  // A connect to a port bound but not listened on: refused.
  UniqueFd bound(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in nowhere{};
  nowhere.sin_family = AF_INET;
  nowhere.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(bound.get(), reinterpret_cast<const sockaddr*>(&nowhere), sizeof nowhere), 0);
  socklen_t length = sizeof nowhere;
  ASSERT_EQ(::getsockname(bound.get(), reinterpret_cast<sockaddr*>(&nowhere), &length), 0);
  UniqueFd refused(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  loop.connect(2, refused.release(), reinterpret_cast<const sockaddr*>(&nowhere), sizeof nowhere,
               {2, 3});
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

// A request's send completes while it is submitted; were that the end of
// the wait, every request would cost a second io_uring_enter to wait for its
// answer. Its completion comes in one batch with the answer instead: a
// callback posted when the send completes (posted callbacks run after each
// batch) runs only after the answer was handled.
TEST(UringLoop, ARequestsSendCompletesInOneBatchWithItsAnswer) {
  SKIP_WITHOUT_IO_URING();
  UniqueFd ours;
  UniqueFd peer;
  ASSERT_TRUE(connected_pair(ours, peer));
  static constexpr char kRequest[] = "GET / HTTP/1.1\r\n\r\n";
  // The server answers a while after it read the request: long after the
  // send completed.
  std::thread server([&peer] {
    char request[64];
    if (::recv(peer.get(), request, sizeof request, 0) <= 0) return;
    std::this_thread::sleep_for(milliseconds(30));
    ::send(peer.get(), "answer", 6, 0);
  });
  std::vector<std::string> events;
  UringLoop* loop_ptr = nullptr;
  UringLoop loop(
      [&](SocketOwner, const UringLoop::Completion& done) {
        if (done.op == UringLoop::Op::send) {
          events.push_back("sent " + std::to_string(done.result));
          loop_ptr->post([&] { events.push_back("batch ended"); });
        } else {
          events.push_back("answer " + std::string(done.data.data(), done.data.size()));
          loop_ptr->stop();
        }
      },
      [&](std::size_t) { loop_ptr->stop(); }, 4);
  loop_ptr = &loop;
  loop.start();
  loop.adopt(1, ours.release());
  loop.receive(1, {1, 1});
  loop.send_request(1, kRequest, sizeof kRequest - 1, {1, 1});
  loop.set_alarm(0, Clock::now() + std::chrono::seconds(2));  // a bound, not the test
  loop.run();
  server.join();
  EXPECT_EQ(events, (std::vector<std::string>{"sent 18", "answer answer"}));
}

// send_request() is for a send the peer cannot hold up. One that is held up
// anyway (a peer that does not read) keeps the wait going, and with it the
// kernel's work on the send, until the next completion or alarm: the
// worker's tick (every 10 ms) keeps it going. Its completion comes once,
// whole (MSG_WAITALL), after the peer read it all.
TEST(UringLoop, ARequestsSendHeldUpByThePeerGoesOnWithTheAlarms) {
  SKIP_WITHOUT_IO_URING();
  UniqueFd ours;
  UniqueFd peer;
  ASSERT_TRUE(connected_pair(ours, peer));
  const timeval bound{2, 0};  // the reader must fail, not hang
  ::setsockopt(peer.get(), SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
  const std::string body(4 << 20, 'x');  // far more than the socket buffers hold
  enum Alarm : std::size_t { peer_reads, tick, give_up };
  std::vector<Seen> seen;
  std::size_t seen_when_peer_reads = 99;
  std::thread reader;
  std::size_t read = 0;
  UringLoop* loop_ptr = nullptr;
  UringLoop loop(
      [&](SocketOwner owner, const UringLoop::Completion& done) {
        seen.push_back({owner, done.op, done.result, done.more, {}});
      },
      [&](std::size_t alarm) {
        if (alarm == give_up || !seen.empty()) return loop_ptr->stop();
        if (alarm == peer_reads) {
          seen_when_peer_reads = seen.size();
          reader = std::thread([&] {
            std::string buffer(1 << 16, '\0');
            while (read < body.size()) {
              const ssize_t n = ::recv(peer.get(), buffer.data(), buffer.size(), 0);
              if (n <= 0) return;
              read += static_cast<std::size_t>(n);
            }
          });
        }
        loop_ptr->set_alarm(tick, Clock::now() + milliseconds(10));
      },
      4);
  loop_ptr = &loop;
  loop.start();
  loop.adopt(2, ours.release());
  loop.send_request(2, body.data(), body.size(), {2, 5});
  loop.set_alarm(peer_reads, Clock::now() + milliseconds(50));
  loop.set_alarm(give_up, Clock::now() + std::chrono::seconds(5));
  loop.run();
  if (reader.joinable()) reader.join();
  EXPECT_EQ(seen_when_peer_reads, 0u);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].op, UringLoop::Op::send);
  EXPECT_EQ(seen[0].result, static_cast<int>(body.size()));
  EXPECT_EQ(seen[0].owner.generation, 5u);
  EXPECT_EQ(read, body.size());
}

// Where the probe lets io_uring be used (6.0 and later), the ring registers
// a file table (5.19): a connected socket lives there, not in the process's
// descriptor table, and every operation names it as a fixed file.
TEST(UringLoop, ASocketMovesIntoTheRegisteredTableAndLeavesTheDescriptorTable) {
  SKIP_WITHOUT_IO_URING();
  Listener listener;
  std::vector<Seen> seen;
  UringLoop* loop_ptr = nullptr;
  UringLoop loop(
      [&](SocketOwner owner, const UringLoop::Completion& done) {
        seen.push_back({owner, done.op, done.result, done.more,
                        std::string(done.data.data(), done.data.size())});
        loop_ptr->stop();
      },
      [](std::size_t) {}, 2);
  loop_ptr = &loop;
  ASSERT_TRUE(loop.registered_files()) << std::strerror(loop.registered_files_error());
  loop.start();
  const std::size_t before = open_descriptors();
  loop.connect(1, ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), listener.to(),
               sizeof listener.address, {1, 1});
  loop.run();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].op, UringLoop::Op::connect);
  EXPECT_EQ(seen[0].result, 0);
  EXPECT_EQ(open_descriptors(), before);  // the socket's descriptor was closed from the ring
  const UniqueFd peer(listener.accept());
  ASSERT_TRUE(peer.is_open());

  // Sent and received through the slot.
  seen.clear();
  static constexpr char kHello[] = "hello";
  loop.send(1, kHello, 5, {1, 1});
  loop.run();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].result, 5);
  char got[8] = {};
  EXPECT_EQ(::recv(peer.get(), got, sizeof got, 0), 5);
  seen.clear();
  loop.receive(1, {1, 1});
  ASSERT_EQ(::send(peer.get(), "back", 4, 0), 4);
  loop.run();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].data, "back");
}

// A connection whose request timed out closes its socket and connects the
// next one in the same iteration, in the same slot: the close goes first,
// so the old peer sees the end of the stream and the new socket carries on.
TEST(UringLoop, ASlotTakesItsNextSocketInTheSameIterationAsItsClose) {
  SKIP_WITHOUT_IO_URING();
  Listener listener;
  std::vector<Seen> seen;
  UringLoop* loop_ptr = nullptr;
  UringLoop loop(
      [&](SocketOwner owner, const UringLoop::Completion& done) {
        seen.push_back({owner, done.op, done.result, done.more, {}});
        loop_ptr->stop();
      },
      [](std::size_t) {}, 1);
  loop_ptr = &loop;
  loop.start();
  loop.connect(0, ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), listener.to(),
               sizeof listener.address, {0, 1});
  loop.run();
  const UniqueFd first(listener.accept());
  ASSERT_TRUE(first.is_open());
  loop.receive(0, {0, 1});
  loop.cancel(UringLoop::Op::receive, {0, 1});
  loop.close(0);
  loop.connect(0, ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), listener.to(),
               sizeof listener.address, {0, 2});
  seen.clear();
  while (seen.empty() || seen.back().owner.generation != 2) loop.run();
  EXPECT_EQ(seen.back().op, UringLoop::Op::connect);
  EXPECT_EQ(seen.back().result, 0);
  char byte = 0;
  EXPECT_EQ(::recv(first.get(), &byte, 1, 0), 0);  // the first socket was closed
  const UniqueFd second(listener.accept());
  ASSERT_TRUE(second.is_open());
  loop.send(0, "x", 1, {0, 2});
  loop.run();
  EXPECT_EQ(::recv(second.get(), &byte, 1, 0), 1);
  EXPECT_EQ(byte, 'x');
}

// A table larger than the kernel allows (more than IORING_MAX_FIXED_FILES,
// or than RLIMIT_NOFILE's hard limit) is refused (EMFILE): the loop says so
// and its slots hold ordinary descriptors, with the same exchanges.
TEST(UringLoop, WhereTheKernelRefusesTheTableTheSlotsHoldDescriptorsAndWorkTheSame) {
  SKIP_WITHOUT_IO_URING();
  // liburing raises the soft RLIMIT_NOFILE towards the table on EMFILE:
  // put it back afterwards.
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  constexpr std::size_t kBeyondTheKernelsMost = (std::size_t{1} << 20) + 1;
  std::vector<Seen> seen;
  UringLoop* loop_ptr = nullptr;
  UringLoop loop(
      [&](SocketOwner owner, const UringLoop::Completion& done) {
        seen.push_back({owner, done.op, done.result, done.more,
                        std::string(done.data.data(), done.data.size())});
        loop_ptr->stop();
      },
      [](std::size_t) {}, kBeyondTheKernelsMost);
  ::setrlimit(RLIMIT_NOFILE, &limit);
  loop_ptr = &loop;
  EXPECT_FALSE(loop.registered_files());
  EXPECT_EQ(loop.registered_files_error(), EMFILE);
  loop.start();

  UniqueFd ours;
  UniqueFd peer;
  ASSERT_TRUE(connected_pair(ours, peer));
  loop.adopt(999, ours.release());
  loop.receive(999, {999, 4});
  ASSERT_EQ(::send(peer.get(), "data", 4, 0), 4);
  loop.run();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].owner.index, 999u);
  EXPECT_EQ(seen[0].data, "data");
  loop.cancel(UringLoop::Op::receive, {999, 4});
  loop.close(999);
  loop.run();  // the cancelled receive's completion
  const timeval bound{2, 0};
  ASSERT_EQ(::setsockopt(peer.get(), SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound), 0);
  char byte = 0;
  EXPECT_EQ(::recv(peer.get(), &byte, 1, 0), 0);
}

}  // namespace
}  // namespace kubeload::loadgen
