#pragma once
// A worker's completion-based loop for plain HTTP/1.1 on io_uring, the
// alternative to EventLoop (event_loop.hpp) where the kernel and the seccomp
// profile allow it (engine_choice.hpp). EventLoop costs one send(2) per
// request and most of a recv(2) besides the epoll_wait(2); here the sends a
// loop iteration prepares and the wait for completions are one
// io_uring_enter(2), and a connection's responses arrive through one
// multishot receive, armed when it connects, into a ring of buffers the
// kernel picks from: in the steady state nothing but that one call per
// iteration.
//
// A completion names its connection by index and socket generation (as
// EventLoop's events do), so one for a socket since closed never reaches the
// connection's next socket. Alarms are the wait's own timeout: no timer of
// their own. Not thread-safe: one loop per worker thread, and that thread
// must start it (start()).

#include <liburing.h>

#include <sys/socket.h>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "loadgen/engine/asio.hpp"
#include "loadgen/engine/event_loop.hpp"

namespace kubeload::loadgen {

class UringLoop {
 public:
  static constexpr std::size_t kAlarms = EventLoop::kAlarms;
  // What a connection's socket may have pending: at most one of each.
  enum class Op : uint8_t { connect = 1, send = 2, receive = 3 };
  struct Completion {
    Op op = Op::receive;
    int result = 0;              // bytes (send, receive), 0 (connect, end of stream), or -errno
    bool more = false;           // a receive: it goes on (IORING_CQE_F_MORE); false: armed no more
    std::span<const char> data;  // a receive's bytes, valid during the call only
  };
  using CompletionHandler = std::function<void(SocketOwner owner, const Completion& done)>;
  using AlarmHandler = std::function<void(std::size_t alarm)>;

  // `connections`: how many sockets may be open at once; sizes the rings.
  // Throws std::system_error when the ring cannot be set up.
  UringLoop(CompletionHandler on_completion, AlarmHandler on_alarm, std::size_t connections);
  UringLoop(const UringLoop&) = delete;
  UringLoop& operator=(const UringLoop&) = delete;
  ~UringLoop();

  // Makes the calling thread the ring's only submitter; before anything is
  // queued. (The ring is set up on the thread that makes the worker.)
  void start();

  // Each queues an operation on `socket` (a blocking socket: io_uring waits
  // for readiness itself), submitted with the next wait. `to` and `data`
  // must live until the operation completes.
  void connect(int socket, const sockaddr* to, socklen_t length, SocketOwner owner);
  void send(int socket, const char* data, std::size_t size, SocketOwner owner);
  // A multishot receive: a completion per arrival until the end of the
  // stream, an error, or a completion without `more` (then arm it again).
  void receive(int socket, SocketOwner owner);
  // Cancels `owner`'s pending `op` (its completion, -ECANCELED, is stale by
  // then: the connection has moved on to its next generation).
  void cancel(Op op, SocketOwner owner);
  // Closes `socket` from the ring, after the cancels queued before it.
  void close(int socket);

  // As EventLoop's.
  void set_alarm(std::size_t alarm, Clock::time_point at);
  void cancel_alarm(std::size_t alarm);
  void post(std::function<void()> callback);
  void run();
  void stop() noexcept { stopped_ = true; }

 private:
  // The ring, torn down (its pending operations cancelled, their sockets
  // released) before the buffers they may still point into.
  struct Ring {
    io_uring ring{};
    bool live = false;
    Ring() = default;
    Ring(const Ring&) = delete;
    Ring& operator=(const Ring&) = delete;
    ~Ring();
  };
  // The provided buffer ring's entries: mmap'd, as the kernel wants them
  // page-aligned.
  struct Mapping {
    void* address = nullptr;
    std::size_t bytes = 0;
    Mapping() = default;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping();
  };
  static constexpr std::size_t kBufferSize = 8192;  // as EventLoop's connections read
  static constexpr uint16_t kBufferGroup = 0;

  io_uring_sqe* next_sqe();
  void dispatch(const io_uring_cqe& cqe);
  void recycle(uint16_t buffer) noexcept;
  void fire_due_alarms();
  void run_posted();

  // The kernel picks a receive's buffer from these; each goes back as soon
  // as its completion was handled. Declared before ring_: they outlive it.
  Mapping buffer_ring_;
  std::unique_ptr<char[]> buffers_;
  unsigned buffer_entries_ = 0;
  Ring ring_;
  bool disabled_ = false;  // until start()
  CompletionHandler on_completion_;
  AlarmHandler on_alarm_;
  std::array<Clock::time_point, kAlarms> alarms_;
  std::vector<std::function<void()>> posted_;
  std::vector<std::function<void()>> running_;
  bool stopped_ = false;
};

}  // namespace kubeload::loadgen
