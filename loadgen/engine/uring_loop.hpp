#pragma once
// A worker's completion-based loop for HTTP/1.1 (plain or over TLS) and h2c
// on io_uring, the alternative to EventLoop (event_loop.hpp; for h2c, Asio)
// where the kernel and the seccomp profile allow it (engine_choice.hpp).
// EventLoop costs one send(2) per request and most of a recv(2) besides the
// epoll_wait(2); here the sends a loop iteration prepares and the wait for
// completions are one io_uring_enter(2), and a connection's responses
// arrive through one multishot receive, armed when it connects, into a ring
// of buffers the kernel picks from: in the steady state nothing but that
// one call per iteration.
//
// A completion names its connection by index and socket generation (as
// EventLoop's events do), so one for a socket since closed never reaches the
// connection's next socket. Alarms are the wait's own timeout: no timer of
// their own. Not thread-safe: one loop per worker thread, and that thread
// must start it (start()).
//
// Sockets are named by slot, one per connection (or HTTP/2 session): the
// ring owns the socket of a slot from its connect to its close. Where the
// kernel lets the ring register a file table (registered_files()), each
// socket lives in its slot of that table and every operation names it as a
// fixed file: the kernel then skips looking the descriptor up (and taking
// and dropping a reference on the shared table) for every send and
// receive. Where it refuses (more slots than RLIMIT_NOFILE's hard limit or
// the kernel's table allow), the slots hold ordinary descriptors and
// everything else is the same.

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

  // Each queues an operation on the socket of `slot` (below `connections`),
  // submitted with the next wait. `to` and `data` must live until the
  // operation completes.
  //
  // Takes `socket` (new, blocking: io_uring waits for readiness itself; its
  // options set) as the socket of `slot`, whose previous one must have been
  // closed, and connects it. The ring owns it from here: close(slot) closes
  // it. With registered files it moves into the table and its descriptor is
  // closed, both from the ring: no system call.
  void connect(uint32_t slot, int socket, const sockaddr* to, socklen_t length, SocketOwner owner);
  // As connect, for a socket connected already (a system call of its own:
  // not for the hot path).
  void adopt(uint32_t slot, int socket);
  void send(uint32_t slot, const char* data, std::size_t size, SocketOwner owner);
  // A request whose answer comes through the socket's receive: the wait
  // does not end for its send's completion alone, only with one completion
  // more, so a request and its answer cost one io_uring_enter(2) between
  // them, not two (the send completes during the submission, and that
  // completion would end the wait at once). It still completes as Op::send,
  // once, and only whole or failed (MSG_WAITALL): a failure carries the
  // bytes that went, as a short send does. Only for a send the peer cannot
  // hold up, one the kernel takes whole at once. One held up anyway keeps
  // the wait going one completion longer (or until the next alarm), and the
  // kernel goes on with it only when the wait ends (DEFER_TASKRUN): it
  // crawls along with the worker's tick.
  void send_request(uint32_t slot, const char* data, std::size_t size, SocketOwner owner);
  // A multishot receive: a completion per arrival until the end of the
  // stream, an error, or a completion without `more` (then arm it again).
  void receive(uint32_t slot, SocketOwner owner);
  // Cancels `owner`'s pending `op` (its completion, -ECANCELED, is stale by
  // then: the connection has moved on to its next generation).
  void cancel(Op op, SocketOwner owner);
  // Closes the socket of `slot` from the ring, after the cancels queued
  // before it; the slot may take its next socket right away. Never throws:
  // when the ring takes no more, the socket is closed by a system call.
  void close(uint32_t slot) noexcept;

  // The sockets live in a table registered with the ring (fixed files);
  // false: the kernel refused it (registered_files_error(), an errno) and
  // they are ordinary descriptors.
  bool registered_files() const noexcept { return registered_files_; }
  int registered_files_error() const noexcept { return registered_files_error_; }

  // As EventLoop's.
  void set_alarm(std::size_t alarm, Clock::time_point at);
  void cancel_alarm(std::size_t alarm);
  void post(std::function<void()> callback);
  // Runs until stop(), which it then forgets: a later run() goes on.
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
  // Queues `socket`'s move into `slot` (registered files) and leaves the
  // last of its entries linked to the next one queued, which then runs only
  // after it; without registered files it only notes the descriptor.
  void install(uint32_t slot, int socket);
  // Names the socket of `slot` in `sqe`: the fixed file, or the descriptor.
  void target(io_uring_sqe* sqe, uint32_t slot) const noexcept;
  // Throws for a slot beyond the connections (a caller's mistake).
  void check_slot(uint32_t slot) const;
  void queue_send(uint32_t slot, const char* data, std::size_t size, uint64_t user_data, int flags);
  void dispatch(const io_uring_cqe& cqe);
  // How many completions end the wait: one, plus each request's send not
  // yet completed (send_request), at most half the completion queue.
  unsigned completions_to_wait_for() const noexcept;
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
  unsigned slots_ = 0;
  bool registered_files_ = false;
  int registered_files_error_ = 0;
  // Without registered files: each slot's descriptor (-1: none), closed with
  // the loop if the ring never closed it.
  std::vector<int> descriptors_;
  // A file update reads its descriptor when the kernel runs it: each queued
  // one has its own, by the index of its submission queue entry, which is
  // not reused before the entry was consumed.
  std::vector<int> installing_;
  CompletionHandler on_completion_;
  AlarmHandler on_alarm_;
  std::array<Clock::time_point, kAlarms> alarms_;
  unsigned requests_sending_ = 0;  // send_request()s whose completion has not been handled
  std::vector<std::function<void()>> posted_;
  std::vector<std::function<void()>> running_;
  bool stopped_ = false;
};

}  // namespace kubeload::loadgen
