#include "loadgen/engine/event_loop.hpp"

#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <limits>
#include <system_error>
#include <type_traits>
#include <utility>

namespace kubeload::loadgen {
namespace {

// The timerfd's events carry this instead of a socket's owner.
constexpr uint64_t kTimerToken = std::numeric_limits<uint64_t>::max();

uint64_t token_of(SocketOwner owner) noexcept {
  return (static_cast<uint64_t>(owner.generation) << 32) | owner.index;
}

int checked(int fd, const char* call) {
  if (fd < 0) throw std::system_error(errno, std::generic_category(), call);
  return fd;
}

}  // namespace

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

EventLoop::EventLoop(SocketHandler on_socket, AlarmHandler on_alarm)
    : set_(checked(::epoll_create1(EPOLL_CLOEXEC), "epoll_create1")),
      timer_(
          checked(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC), "timerfd_create")),
      on_socket_(std::move(on_socket)),
      on_alarm_(std::move(on_alarm)),
      timer_at_(Clock::time_point::max()) {
  static_assert(std::is_same_v<Clock, std::chrono::steady_clock>,
                "alarms are set on CLOCK_MONOTONIC, steady_clock's");
  alarms_.fill(Clock::time_point::max());
  // Edge-triggered and never read, as Asio's reactor has its timerfd: every
  // expiry is an event, and setting the timer again starts it afresh.
  epoll_event event{};
  event.events = EPOLLIN | EPOLLET;
  event.data.u64 = kTimerToken;
  if (::epoll_ctl(set_.get(), EPOLL_CTL_ADD, timer_.get(), &event) != 0) {
    throw std::system_error(errno, std::generic_category(), "epoll_ctl(timerfd)");
  }
  posted_.reserve(64);
  running_.reserve(64);
}

int EventLoop::add(int socket, uint32_t events, SocketOwner owner) noexcept {
  return control(EPOLL_CTL_ADD, socket, events, owner);
}

int EventLoop::modify(int socket, uint32_t events, SocketOwner owner) noexcept {
  return control(EPOLL_CTL_MOD, socket, events, owner);
}

int EventLoop::control(int operation, int socket, uint32_t events, SocketOwner owner) noexcept {
  epoll_event event{};
  event.events = events;
  event.data.u64 = token_of(owner);
  return ::epoll_ctl(set_.get(), operation, socket, &event) == 0 ? 0 : errno;
}

void EventLoop::set_alarm(std::size_t alarm, Clock::time_point at) {
  alarms_.at(alarm) = at;
  program_timer();
}

void EventLoop::cancel_alarm(std::size_t alarm) {
  alarms_.at(alarm) = Clock::time_point::max();
  program_timer();
}

void EventLoop::post(std::function<void()> callback) {
  posted_.push_back(std::move(callback));
}

void EventLoop::program_timer() {
  const Clock::time_point earliest = *std::min_element(alarms_.begin(), alarms_.end());
  if (earliest == timer_at_) return;
  timer_at_ = earliest;
  itimerspec spec{};  // all zero: disarmed
  if (earliest != Clock::time_point::max()) {
    const auto since_epoch =
        std::chrono::duration_cast<std::chrono::nanoseconds>(earliest.time_since_epoch()).count();
    // Zero would disarm the timer: a time that has passed is the smallest one.
    const int64_t nanoseconds = std::max<int64_t>(1, since_epoch);
    spec.it_value.tv_sec = static_cast<time_t>(nanoseconds / 1'000'000'000);
    spec.it_value.tv_nsec = static_cast<long>(nanoseconds % 1'000'000'000);
  }
  if (::timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &spec, nullptr) != 0) {
    throw std::system_error(errno, std::generic_category(), "timerfd_settime");
  }
}

void EventLoop::fire_due_alarms() {
  // The timer went off: it is disarmed until programmed again.
  timer_at_ = Clock::time_point::max();
  const Clock::time_point now = Clock::now();
  for (std::size_t alarm = 0; alarm < kAlarms && !stopped_; ++alarm) {
    if (alarms_[alarm] > now) continue;
    alarms_[alarm] = Clock::time_point::max();
    on_alarm_(alarm);
  }
  program_timer();
}

void EventLoop::run_posted() {
  // A callback may post again: that one runs in the next round.
  running_.swap(posted_);
  for (auto& callback : running_) callback();
  running_.clear();
}

void EventLoop::run() {
  while (!stopped_) {
    const int timeout = posted_.empty() ? -1 : 0;
    const int ready =
        ::epoll_wait(set_.get(), events_.data(), static_cast<int>(events_.size()), timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "epoll_wait");
    }
    bool timer_expired = false;
    for (int i = 0; i < ready && !stopped_; ++i) {
      const epoll_event& event = events_[static_cast<std::size_t>(i)];
      if (event.data.u64 == kTimerToken) {
        timer_expired = true;
        continue;
      }
      on_socket_(SocketOwner{static_cast<uint32_t>(event.data.u64 & 0xffffffffu),
                             static_cast<uint32_t>(event.data.u64 >> 32)},
                 event.events);
    }
    if (timer_expired && !stopped_) fire_due_alarms();
    if (!stopped_) run_posted();
  }
}

}  // namespace kubeload::loadgen
