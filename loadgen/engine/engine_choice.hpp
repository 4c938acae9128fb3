#pragma once
// Which loop carries a run's connections, decided once per process before
// any worker starts: for HTTP/1.1 (plain or over TLS) and h2c io_uring
// (uring_loop.hpp) where the kernel and the seccomp profile allow it,
// otherwise epoll (event_loop.hpp) for HTTP/1.1 and Asio for h2c. Recent
// Docker and containerd releases' default seccomp profiles, and so
// Kubernetes' RuntimeDefault on them, refuse io_uring_setup(2) (containerd
// 1.6's, the local cluster's, allows it), and kernel.io_uring_disabled may
// too: a worker pod runs with what its cluster allows. Over TLS on io_uring
// OpenSSL encrypts in user space (the ring carries its records); on epoll
// it reads and writes the socket, and hands the records to the kernel where
// it has kTLS. HTTP/2 over TLS runs on Asio ("asio").
//
// The decision is a pure function of what was asked and what the probe
// found, so that every branch is unit-tested without the kernel's help.

#include <optional>
#include <string>
#include <string_view>

#include "kubeload/spec.hpp"

namespace kubeload::loadgen {

enum class Engine { epoll, io_uring, asio };
// What a run sends, as far as the engine goes: HTTP/1.1, plain or over TLS,
// runs on io_uring or epoll, h2c on io_uring or Asio (--engine epoll: Asio,
// whose reactor is epoll), HTTP/2 over TLS on Asio only.
enum class Traffic { plain_http1, h2c, tls_http1, h2_tls };
// What was asked (--engine, spec.load.engine) is kubeload::EngineRequest
// (kubeload/spec.hpp): auto picks io_uring when the probe succeeds.

// "epoll" | "io_uring" | "asio": as named in the result, report and metrics.
const char* to_string(Engine engine) noexcept;

struct EngineDecision {
  Engine engine = Engine::epoll;
  // Why io_uring is not used ("" when it is, or was not in question).
  std::string reason;
  // io_uring was asked for explicitly and cannot be had: the run must not
  // start (`reason` says why).
  bool refused = false;
};

// `probe_error`: 0 when this process may use the io_uring engine, else the
// errno that probe_io_uring() found (asked only when io_uring is in
// question: may_use_io_uring()).
EngineDecision decide_engine(EngineRequest request, int probe_error, Traffic traffic);
// Whether the decision for `request` on `traffic` depends on the probe.
bool may_use_io_uring(EngineRequest request, Traffic traffic) noexcept;

// Why io_uring is unavailable, from the errno of the probe: names the
// seccomp profile or kernel.io_uring_disabled for EPERM, an old kernel for
// EINVAL, ...
std::string io_uring_unavailable_reason(int probe_error);

// Sets up a small ring with the features the engine needs (a provided
// buffer ring; multishot receive came in the same kernels, 6.0, as the
// zero-copy send the probe also looks for) and tears it down: 0 or an errno.
// Runs once per process; later calls return the first answer.
int probe_io_uring() noexcept;

}  // namespace kubeload::loadgen
