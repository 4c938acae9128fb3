#include "loadgen/engine/engine_choice.hpp"

#include <liburing.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace kubeload::loadgen {
namespace {

int probe_once() noexcept {
  io_uring ring{};
  if (const int e = io_uring_queue_init(2, &ring, 0); e < 0) return -e;
  int error = 0;
  // IORING_OP_SEND_ZC and multishot receive both came with Linux 6.0; the
  // probe cannot ask for a flag of an operation, so it asks for its sibling.
  const std::unique_ptr<io_uring_probe, void (*)(io_uring_probe*)> ops(
      io_uring_get_probe_ring(&ring), io_uring_free_probe);
  if (!ops || !io_uring_opcode_supported(ops.get(), IORING_OP_SEND_ZC) ||
      !io_uring_opcode_supported(ops.get(), IORING_OP_CONNECT)) {
    error = EINVAL;
  }
  io_uring_queue_exit(&ring);
  return error;
}

}  // namespace

const char* to_string(Engine engine) noexcept {
  // The two loops of our own are named as --engine and spec.load.engine ask
  // for them (kubeload::to_string(EngineRequest)).
  switch (engine) {
    case Engine::io_uring:
      return to_string(EngineRequest::io_uring);
    case Engine::asio:
      return "asio";
    case Engine::epoll:
      break;
  }
  return to_string(EngineRequest::epoll);
}

std::string io_uring_unavailable_reason(int probe_error) {
  switch (probe_error) {
    case EPERM:
    case EACCES:
      return std::string("io_uring_setup(2) was refused (") + strerrorname_np(probe_error) +
             "): a seccomp profile (recent Docker and containerd releases' defaults, and so "
             "Kubernetes' RuntimeDefault on them, refuse it) or kernel.io_uring_disabled forbids "
             "it";
    case ENOSYS:
      return "io_uring_setup(2) does not exist here (ENOSYS): the kernel has no io_uring, or a "
             "seccomp profile hides it";
    case EINVAL:
      return "the kernel's io_uring lacks multishot receive (Linux 6.0 or later is needed)";
    case ENOMEM:
      return "io_uring_setup(2) found no memory for a ring (ENOMEM): RLIMIT_MEMLOCK on kernels "
             "before 5.12";
    default:
      break;
  }
  const char* name = strerrorname_np(probe_error);
  return std::string("io_uring_setup(2) failed: ") + std::strerror(probe_error) + " (" +
         (name != nullptr ? name : std::to_string(probe_error).c_str()) + ")";
}

bool may_use_io_uring(EngineRequest request, Traffic traffic) noexcept {
  return traffic != Traffic::h2_tls && request != EngineRequest::epoll;
}

EngineDecision decide_engine(EngineRequest request, int probe_error, Traffic traffic) {
  EngineDecision decision;
  if (traffic == Traffic::h2_tls) {
    decision.engine = Engine::asio;
    if (request != EngineRequest::automatic) {
      decision.refused = true;
      decision.reason = std::string("--engine ") + to_string(request) +
                        ": HTTP/2 over TLS runs on Asio only (--engine auto)";
    }
    return decision;
  }
  // What carries the run without io_uring: our epoll loop for HTTP/1.1
  // (plain or over TLS); h2c has no loop of its own there and stays on Asio
  // (epoll underneath).
  const Engine without_io_uring = traffic == Traffic::h2c ? Engine::asio : Engine::epoll;
  decision.engine = without_io_uring;
  if (request == EngineRequest::epoll) return decision;
  if (probe_error == 0) {
    decision.engine = Engine::io_uring;
    return decision;
  }
  decision.reason = io_uring_unavailable_reason(probe_error);
  if (request == EngineRequest::io_uring) {
    decision.refused = true;
    decision.reason = "--engine io_uring: " + decision.reason + "; --engine epoll or auto runs";
  }
  return decision;
}

int probe_io_uring() noexcept {
  static const int error = probe_once();
  return error;
}

}  // namespace kubeload::loadgen
