#include "loadgen/engine/uring_loop.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <limits>
#include <system_error>
#include <utility>

namespace kubeload::loadgen {
namespace {

// user_data: the operation (0: none, its completion is dropped), the
// connection's index and its socket's generation.
constexpr int kOpShift = 56;
constexpr int kIndexShift = 32;
constexpr uint64_t kIndexMask = (uint64_t{1} << 24) - 1;
constexpr uint64_t kNoCompletion = 0;

uint64_t user_data(UringLoop::Op op, SocketOwner owner) noexcept {
  return (static_cast<uint64_t>(op) << kOpShift) |
         ((static_cast<uint64_t>(owner.index) & kIndexMask) << kIndexShift) | owner.generation;
}

[[noreturn]] void fail(int error, const char* call) {
  throw std::system_error(error, std::generic_category(), call);
}

// Enough entries for every connection to have a send and a cancel prepared
// in one iteration without a submission in between, within reason; the
// completion queue four times as large, for receives that arrive meanwhile.
unsigned submission_entries(std::size_t connections) {
  return std::bit_ceil(static_cast<unsigned>(std::clamp<std::size_t>(2 * connections, 64, 4096)));
}

}  // namespace

UringLoop::Ring::~Ring() {
  if (live) io_uring_queue_exit(&ring);
}

UringLoop::Mapping::~Mapping() {
  if (address != nullptr) ::munmap(address, bytes);
}

UringLoop::UringLoop(CompletionHandler on_completion, AlarmHandler on_alarm,
                     std::size_t connections)
    : on_completion_(std::move(on_completion)), on_alarm_(std::move(on_alarm)) {
  if (connections > kIndexMask) fail(EOVERFLOW, "io_uring: more connections than user_data holds");
  alarms_.fill(Clock::time_point::max());
  posted_.reserve(64);
  running_.reserve(64);

  // One thread submits and task work runs only when it waits
  // (DEFER_TASKRUN, 6.1): completions come in batches, with no interrupt of
  // the worker to post them. The ring starts disabled so that the worker's
  // thread, not the one making it, becomes its submitter (start()).
  const unsigned entries = submission_entries(connections);
  io_uring_params params{};
  params.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
                 IORING_SETUP_R_DISABLED;
  params.cq_entries = 4 * entries;
  int e = io_uring_queue_init_params(entries, &ring_.ring, &params);
  if (e == -EINVAL) {
    // 6.0: neither; the kernel runs completions' task work when it may.
    params = {};
    params.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN;
    params.cq_entries = 4 * entries;
    e = io_uring_queue_init_params(entries, &ring_.ring, &params);
  }
  if (e < 0) fail(-e, "io_uring_queue_init");
  ring_.live = true;
  disabled_ = (params.flags & IORING_SETUP_R_DISABLED) != 0;
  // Without EXT_ARG (5.11) the wait's timeout would be a timeout request of
  // its own; the probe asks for 6.0, so this is a guard, not a branch.
  if ((params.features & IORING_FEAT_EXT_ARG) == 0)
    fail(EINVAL, "io_uring: no IORING_FEAT_EXT_ARG");

  // A buffer per connection, as EventLoop's connections each have one: the
  // most completions one iteration can hold, each buffer back in the ring
  // once its completion was handled. Fewer buffers would do in the steady
  // state; a receive that finds none ends (ENOBUFS) and is armed again.
  buffer_entries_ =
      std::bit_ceil(static_cast<unsigned>(std::clamp<std::size_t>(connections, 64, 32768)));
  buffer_ring_.bytes = buffer_entries_ * sizeof(io_uring_buf);
  void* ring_memory = ::mmap(nullptr, buffer_ring_.bytes, PROT_READ | PROT_WRITE,
                             MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (ring_memory == MAP_FAILED) fail(errno, "mmap(buffer ring)");
  buffer_ring_.address = ring_memory;
  buffers_ = std::make_unique_for_overwrite<char[]>(std::size_t{buffer_entries_} * kBufferSize);
  auto* ring = static_cast<io_uring_buf_ring*>(ring_memory);
  io_uring_buf_ring_init(ring);
  io_uring_buf_reg registration{};
  registration.ring_addr = reinterpret_cast<uintptr_t>(ring_memory);
  registration.ring_entries = buffer_entries_;
  registration.bgid = kBufferGroup;
  if (const int r = io_uring_register_buf_ring(&ring_.ring, &registration, 0); r < 0) {
    fail(-r, "io_uring_register_buf_ring");
  }
  const int mask = io_uring_buf_ring_mask(buffer_entries_);
  for (unsigned i = 0; i < buffer_entries_; ++i) {
    io_uring_buf_ring_add(ring, buffers_.get() + std::size_t{i} * kBufferSize, kBufferSize,
                          static_cast<unsigned short>(i), mask, static_cast<int>(i));
  }
  io_uring_buf_ring_advance(ring, static_cast<int>(buffer_entries_));
}

UringLoop::~UringLoop() = default;

void UringLoop::start() {
  if (disabled_) {
    // liburing 2.3 (Debian 12) declares io_uring_enable_rings() but does not
    // export it: the system call itself.
    if (::syscall(__NR_io_uring_register, ring_.ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, nullptr,
                  0) != 0) {
      fail(errno, "io_uring_register(IORING_REGISTER_ENABLE_RINGS)");
    }
    disabled_ = false;
  }
  // The ring's descriptor registered with this thread: io_uring_enter(2)
  // then skips looking it up (and its reference count) on every call. An
  // optimisation only: without it the ring works the same.
  io_uring_register_ring_fd(&ring_.ring);
}

io_uring_sqe* UringLoop::next_sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_.ring);
  if (sqe == nullptr) {
    // The queue is full before the iteration ends: submit what it holds.
    if (const int e = io_uring_submit(&ring_.ring); e < 0 && e != -EBUSY)
      fail(-e, "io_uring_submit");
    sqe = io_uring_get_sqe(&ring_.ring);
    if (sqe == nullptr) fail(EBUSY, "io_uring_get_sqe");
  }
  return sqe;
}

void UringLoop::connect(int socket, const sockaddr* to, socklen_t length, SocketOwner owner) {
  io_uring_sqe* sqe = next_sqe();
  io_uring_prep_connect(sqe, socket, to, length);
  io_uring_sqe_set_data64(sqe, user_data(Op::connect, owner));
}

void UringLoop::send(int socket, const char* data, std::size_t size, SocketOwner owner) {
  io_uring_sqe* sqe = next_sqe();
  // MSG_NOSIGNAL: a peer that closed is an error completion, not SIGPIPE.
  io_uring_prep_send(sqe, socket, data, size, MSG_NOSIGNAL);
  io_uring_sqe_set_data64(sqe, user_data(Op::send, owner));
}

void UringLoop::receive(int socket, SocketOwner owner) {
  io_uring_sqe* sqe = next_sqe();
  io_uring_prep_recv_multishot(sqe, socket, nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = kBufferGroup;
  io_uring_sqe_set_data64(sqe, user_data(Op::receive, owner));
}

void UringLoop::cancel(Op op, SocketOwner owner) {
  io_uring_sqe* sqe = next_sqe();
  // By user_data, not by descriptor: the socket may be closed (its number
  // reused) by the time the cancel runs. Nothing to cancel (it completed
  // meanwhile) is -ENOENT, a completion that is dropped.
  io_uring_prep_cancel64(sqe, user_data(op, owner), 0);
  io_uring_sqe_set_data64(sqe, kNoCompletion);
  sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
}

void UringLoop::close(int socket) {
  io_uring_sqe* sqe = next_sqe();
  // A pending operation holds the socket open until its cancel ends it: the
  // peer sees the close then, at the latest in the next submission.
  io_uring_prep_close(sqe, socket);
  io_uring_sqe_set_data64(sqe, kNoCompletion);
  sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
}

void UringLoop::set_alarm(std::size_t alarm, Clock::time_point at) {
  alarms_.at(alarm) = at;
}

void UringLoop::cancel_alarm(std::size_t alarm) {
  alarms_.at(alarm) = Clock::time_point::max();
}

void UringLoop::post(std::function<void()> callback) {
  posted_.push_back(std::move(callback));
}

void UringLoop::recycle(uint16_t buffer) noexcept {
  auto* ring = static_cast<io_uring_buf_ring*>(buffer_ring_.address);
  io_uring_buf_ring_add(ring, buffers_.get() + std::size_t{buffer} * kBufferSize, kBufferSize,
                        buffer, io_uring_buf_ring_mask(buffer_entries_), 0);
  io_uring_buf_ring_advance(ring, 1);
}

void UringLoop::dispatch(const io_uring_cqe& cqe) {
  const uint64_t data = cqe.user_data;
  const auto op = static_cast<Op>(data >> kOpShift);
  if (data == kNoCompletion) return;
  const SocketOwner owner{static_cast<uint32_t>((data >> kIndexShift) & kIndexMask),
                          static_cast<uint32_t>(data)};
  Completion done;
  done.op = op;
  done.result = cqe.res;
  done.more = (cqe.flags & IORING_CQE_F_MORE) != 0;
  const bool has_buffer = op == Op::receive && (cqe.flags & IORING_CQE_F_BUFFER) != 0;
  const auto buffer = static_cast<uint16_t>(cqe.flags >> IORING_CQE_BUFFER_SHIFT);
  if (has_buffer && cqe.res > 0) {
    done.data = {buffers_.get() + std::size_t{buffer} * kBufferSize,
                 static_cast<std::size_t>(cqe.res)};
  }
  on_completion_(owner, done);
  if (has_buffer) recycle(buffer);
}

void UringLoop::fire_due_alarms() {
  const Clock::time_point now = Clock::now();
  for (std::size_t alarm = 0; alarm < kAlarms && !stopped_; ++alarm) {
    if (alarms_[alarm] > now) continue;
    alarms_[alarm] = Clock::time_point::max();
    on_alarm_(alarm);
  }
}

void UringLoop::run_posted() {
  // A callback may post again: that one runs in the next round.
  running_.swap(posted_);
  for (auto& callback : running_) callback();
  running_.clear();
}

void UringLoop::run() {
  while (!stopped_) {
    // One io_uring_enter(2): what this iteration prepared goes out, and the
    // wait ends at the first completion or the earliest alarm.
    int e = 0;
    if (!posted_.empty()) {
      e = io_uring_submit(&ring_.ring);
    } else {
      const Clock::time_point earliest = *std::min_element(alarms_.begin(), alarms_.end());
      io_uring_cqe* first = nullptr;
      if (earliest == Clock::time_point::max()) {
        e = io_uring_submit_and_wait(&ring_.ring, 1);
      } else {
        const int64_t nanoseconds = std::max<int64_t>(
            0,
            std::chrono::duration_cast<std::chrono::nanoseconds>(earliest - Clock::now()).count());
        __kernel_timespec timeout{};
        timeout.tv_sec = nanoseconds / 1'000'000'000;
        timeout.tv_nsec = nanoseconds % 1'000'000'000;
        e = io_uring_submit_and_wait_timeout(&ring_.ring, &first, 1, &timeout, nullptr);
      }
    }
    // ETIME: the alarm's time came; EINTR: a signal; EBUSY: completions
    // wait in the kernel's overflow list until these are consumed.
    if (e < 0 && e != -ETIME && e != -EINTR && e != -EBUSY && e != -EAGAIN) {
      fail(-e, "io_uring_enter");
    }
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_.ring, head, cqe) {
      ++seen;
      dispatch(*cqe);
      if (stopped_) break;
    }
    io_uring_cq_advance(&ring_.ring, seen);
    if (!stopped_) fire_due_alarms();
    if (!stopped_) run_posted();
  }
  // The closes queued last (the worker closes every connection as it
  // stops) leave now; what is still pending ends with the ring.
  io_uring_submit(&ring_.ring);
}

}  // namespace kubeload::loadgen
