#include "socket_call_counter.hpp"

#include <dlfcn.h>
#include <sys/socket.h>

#include <cerrno>

namespace {
thread_local bool counting = false;
thread_local uint64_t sent = 0;
thread_local uint64_t received = 0;
thread_local uint64_t received_nothing = 0;
}  // namespace

namespace kubeload::testing {
SocketCallCounter::SocketCallCounter() {
  sent = 0;
  received = 0;
  received_nothing = 0;
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
}  // namespace kubeload::testing

// The next definitions after this binary's: libc's, or a sanitizer's
// interceptors in front of them (which must still see every call).
template <typename Function>
Function next_definition(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

extern "C" ssize_t send(int socket, const void* buffer, size_t length, int flags) {
  using Send = ssize_t (*)(int, const void*, size_t, int);
  static const Send next = next_definition<Send>("send");
  if (counting) ++sent;
  return next(socket, buffer, length, flags);
}

extern "C" ssize_t recv(int socket, void* buffer, size_t length, int flags) {
  using Receive = ssize_t (*)(int, void*, size_t, int);
  static const Receive next = next_definition<Receive>("recv");
  const ssize_t result = next(socket, buffer, length, flags);
  if (counting) {
    ++received;
    if (result < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ++received_nothing;
  }
  return result;
}
