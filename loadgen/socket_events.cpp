#include "loadgen/socket_events.hpp"

#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace kubeload::loadgen {
namespace {

int make_set() {
  const int set = ::epoll_create1(EPOLL_CLOEXEC);
  if (set < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
  return set;
}

epoll_event event_of(uint32_t events, SocketOwner owner) noexcept {
  epoll_event event{};
  event.events = events;
  event.data.u64 = (static_cast<uint64_t>(owner.generation) << 32) | owner.index;
  return event;
}

}  // namespace

void UniqueSocket::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

SocketEvents::SocketEvents(asio::io_context& io, Deliver deliver)
    : set_(io, make_set()), deliver_(std::move(deliver)) {}

int SocketEvents::add(int socket, uint32_t events, SocketOwner owner) noexcept {
  epoll_event event = event_of(events, owner);
  return ::epoll_ctl(set_.native_handle(), EPOLL_CTL_ADD, socket, &event) == 0 ? 0 : errno;
}

int SocketEvents::modify(int socket, uint32_t events, SocketOwner owner) noexcept {
  epoll_event event = event_of(events, owner);
  return ::epoll_ctl(set_.native_handle(), EPOLL_CTL_MOD, socket, &event) == 0 ? 0 : errno;
}

void SocketEvents::start() {
  if (waiting_) return;
  waiting_ = true;
  wait();
}

void SocketEvents::stop() noexcept {
  waiting_ = false;
  boost::system::error_code ignored;
  set_.cancel(ignored);
}

void SocketEvents::wait() {
  set_.async_wait(asio::posix::stream_descriptor::wait_read,
                  with_memory(wait_memory_, [this](const boost::system::error_code& ec) {
                    if (ec || !waiting_) return;
                    dispatch();
                    if (waiting_) wait();
                  }));
}

void SocketEvents::dispatch() {
  // Level-triggered for the set itself: whatever this batch leaves is
  // reported again by the next wait.
  const int ready =
      ::epoll_wait(set_.native_handle(), events_.data(), static_cast<int>(events_.size()), 0);
  for (int i = 0; i < ready; ++i) {
    const uint64_t data = events_[static_cast<size_t>(i)].data.u64;
    deliver_(
        SocketOwner{static_cast<uint32_t>(data & 0xffffffffu), static_cast<uint32_t>(data >> 32)},
        events_[static_cast<size_t>(i)].events);
  }
}

}  // namespace kubeload::loadgen
