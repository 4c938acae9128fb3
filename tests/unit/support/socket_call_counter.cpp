#include "socket_call_counter.hpp"

#include <dlfcn.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace {
thread_local bool counting = false;
thread_local uint64_t sent = 0;
thread_local uint64_t received = 0;
thread_local uint64_t received_nothing = 0;
thread_local uint64_t epoll_changed = 0;
thread_local uint64_t epoll_waited = 0;

// The next definition after this binary's: libc's, or a sanitizer's
// interceptor in front of it.
template <typename Function>
Function next_definition(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

bool is_socket(int fd) {
  struct stat status {};
  return ::fstat(fd, &status) == 0 && S_ISSOCK(status.st_mode);
}

// `error`: the call's errno, which fstat(2) must not hide.
void count_receive(ssize_t result, int error) {
  ++received;
  if (result < 0 && (error == EAGAIN || error == EWOULDBLOCK)) ++received_nothing;
}
}  // namespace

namespace kubeload::testing {
SocketCallCounter::SocketCallCounter() {
  sent = 0;
  received = 0;
  received_nothing = 0;
  epoll_changed = 0;
  epoll_waited = 0;
  counting = true;
}
SocketCallCounter::~SocketCallCounter() {
  counting = false;
}
uint64_t SocketCallCounter::sends() const {
  return sent;
}
uint64_t SocketCallCounter::receives() const {
  return received;
}
uint64_t SocketCallCounter::receives_that_found_nothing() const {
  return received_nothing;
}
uint64_t SocketCallCounter::epoll_changes() const {
  return epoll_changed;
}
uint64_t SocketCallCounter::epoll_waits() const {
  return epoll_waited;
}
}  // namespace kubeload::testing

// Each is visible outside this binary even where the build hides its
// symbols (the sanitizer builds): libssl's read(2) and write(2) must bind to
// these too.

extern "C" [[gnu::visibility("default")]] ssize_t send(int socket, const void* buffer,
                                                       size_t length, int flags) {
  using Send = ssize_t (*)(int, const void*, size_t, int);
  static const Send next = next_definition<Send>("send");
  if (counting) ++sent;
  return next(socket, buffer, length, flags);
}

extern "C" [[gnu::visibility("default")]] ssize_t recv(int socket, void* buffer, size_t length,
                                                       int flags) {
  using Receive = ssize_t (*)(int, void*, size_t, int);
  static const Receive next = next_definition<Receive>("recv");
  const ssize_t result = next(socket, buffer, length, flags);
  if (counting) count_receive(result, errno);
  return result;
}

// Other descriptors (files, the worker's timerfd) are not counted.
extern "C" [[gnu::visibility("default")]] ssize_t read(int fd, void* buffer, size_t length) {
  using Read = ssize_t (*)(int, void*, size_t);
  static const Read next = next_definition<Read>("read");
  const ssize_t result = next(fd, buffer, length);
  if (counting) {
    const int error = errno;
    if (is_socket(fd)) count_receive(result, error);
    errno = error;
  }
  return result;
}

extern "C" [[gnu::visibility("default")]] ssize_t write(int fd, const void* buffer, size_t length) {
  using Write = ssize_t (*)(int, const void*, size_t);
  static const Write next = next_definition<Write>("write");
  if (counting) {
    const int error = errno;
    if (is_socket(fd)) ++sent;
    errno = error;
  }
  return next(fd, buffer, length);
}

extern "C" [[gnu::visibility("default")]] int epoll_ctl(int set, int operation, int fd,
                                                        epoll_event* event) {
  using Change = int (*)(int, int, int, epoll_event*);
  static const Change next = next_definition<Change>("epoll_ctl");
  if (counting) ++epoll_changed;
  return next(set, operation, fd, event);
}

extern "C" [[gnu::visibility("default")]] int epoll_wait(int set, epoll_event* events, int most,
                                                         int timeout) {
  using Wait = int (*)(int, epoll_event*, int, int);
  static const Wait next = next_definition<Wait>("epoll_wait");
  if (counting) ++epoll_waited;
  return next(set, events, most, timeout);
}
