#pragma once
// A worker's own event loop for plain HTTP/1.1, as wrk's: one epoll set, one
// epoll_wait(2) per batch of readiness events and nothing else between them.
// A socket is added once when it connects (edge-triggered) and read when its
// event says so, so a response costs one recv(2) and a request one send(2).
// Through Boost 1.74's reactor each response also cost a read tried as soon
// as it was asked for, right after the request went out, which found nothing,
// and the reactor's own bookkeeping per operation. TLS and HTTP/2 stay on
// Asio's io_context; a worker runs one loop or the other, never both.
//
// Alarms (the worker's tick, the open model's next arrival) are one timerfd
// in the same set, re-armed to the earliest of them, as Asio's reactor does.

#include <sys/epoll.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "loadgen/engine/asio.hpp"

namespace kubeload::loadgen {

// A file descriptor of our own: closed when replaced or destroyed.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const noexcept { return fd_; }
  bool is_open() const noexcept { return fd_ >= 0; }
  void reset(int fd = -1) noexcept;
  // Gives the descriptor up without closing it (io_uring closes it: UringLoop::close).
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// Who a socket's events go to: a connection's index and the generation of its
// socket, so an event fetched before a socket was closed never reaches the
// connection's next socket (which may have the same descriptor number).
struct SocketOwner {
  uint32_t index = 0;
  uint32_t generation = 0;
};

class EventLoop {
 public:
  static constexpr std::size_t kAlarms = 3;  // the worker's tick, open-model arrivals, wake-ups
  // `on_socket(owner, events)`: a readiness event of a socket added with
  // `owner`. `on_alarm(alarm)`: an alarm's time has come.
  using SocketHandler = std::function<void(SocketOwner owner, uint32_t events)>;
  using AlarmHandler = std::function<void(std::size_t alarm)>;
  EventLoop(SocketHandler on_socket, AlarmHandler on_alarm);
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Each returns 0 or the errno of epoll_ctl(2). A closed socket leaves the
  // set by itself.
  int add(int socket, uint32_t events, SocketOwner owner) noexcept;
  int modify(int socket, uint32_t events, SocketOwner owner) noexcept;

  // The alarm goes off once, at `at` (at once if that has passed); setting
  // it again replaces its time.
  void set_alarm(std::size_t alarm, Clock::time_point at);
  void cancel_alarm(std::size_t alarm);
  // Runs `callback` from the loop, after the events it is handling: a
  // failure found while starting a request is reported as an event's would
  // be, not from inside the caller.
  void post(std::function<void()> callback);

  // Handles events, alarms and posted callbacks until stop().
  void run();
  void stop() noexcept { stopped_ = true; }

 private:
  int control(int operation, int socket, uint32_t events, SocketOwner owner) noexcept;
  void fire_due_alarms();
  void run_posted();
  void program_timer();

  UniqueFd set_;
  UniqueFd timer_;
  SocketHandler on_socket_;
  AlarmHandler on_alarm_;
  std::array<Clock::time_point, kAlarms> alarms_;
  Clock::time_point timer_at_;  // what the timerfd is set to (max: disarmed)
  std::vector<std::function<void()>> posted_;
  std::vector<std::function<void()>> running_;
  std::array<epoll_event, 256> events_{};
  bool stopped_ = false;
};

}  // namespace kubeload::loadgen
