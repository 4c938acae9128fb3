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

// user_data: the operation (0: none, its completion is dropped), whether it
// is a request's send (send_request), the connection's index and its
// socket's generation.
constexpr int kOpShift = 56;
constexpr uint64_t kOpMask = 0x7f;
constexpr uint64_t kRequestSend = uint64_t{1} << 63;
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

  // A sparse table, a slot per connection, empty until its socket connects
  // (5.19). The kernel refuses a table larger than RLIMIT_NOFILE (EMFILE;
  // liburing first raises the soft limit towards the hard one) or than
  // IORING_MAX_FIXED_FILES, and a restricted kernel may refuse it
  // altogether: then the slots hold ordinary descriptors, which costs the
  // lookup per operation and nothing else. Not a reason to refuse the
  // engine (its probe does not ask for it); the worker reports it.
  slots_ = static_cast<unsigned>(std::max<std::size_t>(connections, 1));
  if (const int r = io_uring_register_files_sparse(&ring_.ring, slots_); r == 0) {
    registered_files_ = true;
    installing_.assign(ring_.ring.sq.ring_entries, -1);
  } else {
    registered_files_error_ = -r;
    descriptors_.assign(slots_, -1);
  }
}

UringLoop::~UringLoop() {
  // Ordinary descriptors the ring never closed (the run ended with them
  // open); registered ones go with the ring.
  for (const int socket : descriptors_) {
    if (socket >= 0) ::close(socket);
  }
}

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

void UringLoop::install(uint32_t slot, int socket) {
  if (!registered_files_) {
    descriptors_[slot] = socket;
    return;
  }
  // The update, the close and the operation linked after them each take an
  // entry: all three taken from one batch, so a submission forced in
  // between (a full queue) cannot cut the link.
  if (io_uring_sq_space_left(&ring_.ring) < 3) {
    if (const int e = io_uring_submit(&ring_.ring); e < 0 && e != -EBUSY)
      fail(-e, "io_uring_submit");
  }
  // The socket into its slot, then its descriptor closed; hard-linked, so
  // the descriptor is closed even when the update fails (the operation
  // linked after it then finds the slot empty: -EBADF, its failure).
  io_uring_sqe* update = next_sqe();
  const auto entry = static_cast<std::size_t>(update - ring_.ring.sq.sqes);
  installing_.at(entry) = socket;
  io_uring_prep_files_update(update, &installing_[entry], 1, static_cast<int>(slot));
  io_uring_sqe_set_data64(update, kNoCompletion);
  update->flags |= IOSQE_IO_HARDLINK | IOSQE_CQE_SKIP_SUCCESS;
  io_uring_sqe* release = next_sqe();
  io_uring_prep_close(release, socket);
  io_uring_sqe_set_data64(release, kNoCompletion);
  // Linked: the operation queued next runs once the slot holds the socket
  // (a fixed file is looked up when its operation runs, not when queued).
  release->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
}

void UringLoop::check_slot(uint32_t slot) const {
  if (slot >= slots_) fail(EINVAL, "io_uring: a socket slot beyond the connections");
}

void UringLoop::target(io_uring_sqe* sqe, uint32_t slot) const noexcept {
  if (registered_files_) {
    sqe->fd = static_cast<int>(slot);
    sqe->flags |= IOSQE_FIXED_FILE;
  } else {
    sqe->fd = descriptors_[slot];
  }
}

void UringLoop::connect(uint32_t slot, int socket, const sockaddr* to, socklen_t length,
                        SocketOwner owner) {
  if (slot >= slots_) ::close(socket);
  check_slot(slot);
  install(slot, socket);
  io_uring_sqe* sqe = next_sqe();
  io_uring_prep_connect(sqe, -1, to, length);
  target(sqe, slot);
  io_uring_sqe_set_data64(sqe, user_data(Op::connect, owner));
}

void UringLoop::adopt(uint32_t slot, int socket) {
  if (slot >= slots_) ::close(socket);
  check_slot(slot);
  if (!registered_files_) return install(slot, socket);
  // What is queued goes first: a close of this slot queued before must not
  // close the socket put there now.
  if (const int e = io_uring_submit(&ring_.ring); e < 0 && e != -EBUSY) fail(-e, "io_uring_submit");
  const int r = io_uring_register_files_update(&ring_.ring, slot, &socket, 1);
  ::close(socket);
  if (r < 0) fail(-r, "io_uring_register_files_update");
}

void UringLoop::send(uint32_t slot, const char* data, std::size_t size, SocketOwner owner) {
  queue_send(slot, data, size, user_data(Op::send, owner), 0);
}

void UringLoop::send_request(uint32_t slot, const char* data, std::size_t size, SocketOwner owner) {
  // MSG_WAITALL: a short send would complete before the rest went, and the
  // rest then wait for the wait this send no longer ends.
  queue_send(slot, data, size, user_data(Op::send, owner) | kRequestSend, MSG_WAITALL);
  ++requests_sending_;
}

void UringLoop::queue_send(uint32_t slot, const char* data, std::size_t size,
                           uint64_t data_for_completion, int flags) {
  check_slot(slot);
  io_uring_sqe* sqe = next_sqe();
  // MSG_NOSIGNAL: a peer that closed is an error completion, not SIGPIPE.
  io_uring_prep_send(sqe, -1, data, size, MSG_NOSIGNAL | flags);
  target(sqe, slot);
  io_uring_sqe_set_data64(sqe, data_for_completion);
}

void UringLoop::receive(uint32_t slot, SocketOwner owner) {
  check_slot(slot);
  io_uring_sqe* sqe = next_sqe();
  io_uring_prep_recv_multishot(sqe, -1, nullptr, 0, 0);
  target(sqe, slot);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = kBufferGroup;
  io_uring_sqe_set_data64(sqe, user_data(Op::receive, owner));
}

void UringLoop::cancel(Op op, SocketOwner owner) {
  const auto cancel_one = [this](uint64_t data) {
    io_uring_sqe* sqe = next_sqe();
    // By user_data, not by descriptor: the socket may be closed (its number
    // reused) by the time the cancel runs. Nothing to cancel (it completed
    // meanwhile) is -ENOENT, a completion that is dropped.
    io_uring_prep_cancel64(sqe, data, 0);
    io_uring_sqe_set_data64(sqe, kNoCompletion);
    sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
  };
  cancel_one(user_data(op, owner));
  // Either kind of send: the caller knows only that it sent.
  if (op == Op::send) cancel_one(user_data(op, owner) | kRequestSend);
}

void UringLoop::close(uint32_t slot) noexcept {
  if (slot >= slots_) return;
  const int socket = registered_files_ ? -1 : std::exchange(descriptors_[slot], -1);
  try {
    io_uring_sqe* sqe = next_sqe();
    // A pending operation holds the socket open until its cancel ends it:
    // the peer sees the close then, at the latest in the next submission.
    if (registered_files_) {
      io_uring_prep_close_direct(sqe, slot);
    } else {
      io_uring_prep_close(sqe, socket);
    }
    io_uring_sqe_set_data64(sqe, kNoCompletion);
    sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
  } catch (...) {
    // The kernel refused a submission: closed here instead.
    if (registered_files_) {
      int none = -1;
      io_uring_register_files_update(&ring_.ring, slot, &none, 1);
    } else if (socket >= 0) {
      ::close(socket);
    }
  }
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
  if (data == kNoCompletion) return;
  const auto op = static_cast<Op>((data >> kOpShift) & kOpMask);
  // Counted whatever its generation: the wait counts every one in flight.
  if ((data & kRequestSend) != 0) --requests_sending_;
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

unsigned UringLoop::completions_to_wait_for() const noexcept {
  return 1 + std::min(requests_sending_, ring_.ring.cq.ring_entries / 2);
}

void UringLoop::run() {
  while (!stopped_) {
    // One io_uring_enter(2): what this iteration prepared goes out, and the
    // wait ends at the first completion (not counting requests' sends) or
    // the earliest alarm.
    int e = 0;
    if (!posted_.empty()) {
      e = io_uring_submit(&ring_.ring);
    } else {
      const Clock::time_point earliest = *std::min_element(alarms_.begin(), alarms_.end());
      io_uring_cqe* first = nullptr;
      if (earliest == Clock::time_point::max()) {
        e = io_uring_submit_and_wait(&ring_.ring, completions_to_wait_for());
      } else {
        const int64_t nanoseconds = std::max<int64_t>(
            0,
            std::chrono::duration_cast<std::chrono::nanoseconds>(earliest - Clock::now()).count());
        __kernel_timespec timeout{};
        timeout.tv_sec = nanoseconds / 1'000'000'000;
        timeout.tv_nsec = nanoseconds % 1'000'000'000;
        e = io_uring_submit_and_wait_timeout(&ring_.ring, &first, completions_to_wait_for(),
                                             &timeout, nullptr);
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
  // The stop is spent: run() may go on from here (completions not yet
  // handled stay in the queue for it).
  stopped_ = false;
}

}  // namespace kubeload::loadgen
