#pragma once
// What the worker hands a connection (one request to send) and what the
// connection hands back (how it ended).

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "loadgen/engine/asio.hpp"

namespace kubeload::loadgen {

struct RequestTemplate;

struct RequestSlot {
  uint32_t request = 0;  // index into RunPlan::requests: the result row
  // What is sent: RunPlan::requests[request], or a scenario step rendered
  // by the virtual user of the lane.
  const RequestTemplate* outgoing = nullptr;
  int stage = 0;                 // result row; -1 for warm-up
  Clock::time_point intended{};  // latency is measured from here
};

// `dropped`: never sent, no connection came free within the timeout of the
// intended time (open model).
// `rst_stream`, `goaway`: HTTP/2, the server reset the stream or went away.
// `extract`, `check`: a scenario step's response was complete and as
// expected, but an extraction found nothing or a check failed (and a step
// whose template named a variable without a value is not sent: `extract`).
enum class Outcome {
  success,
  connect,
  timeout,
  read,
  write,
  status,
  length,
  dropped,
  rst_stream,
  goaway,
  extract,
  check
};

struct RequestTimings {
  int64_t connect_us = 0;  // 0 when the connection was reused
  int64_t waiting_us = 0;  // request written -> first response byte
  int64_t total_us = 0;    // intended start -> last byte
};

// A timing's microseconds: never negative (a clock read before its start by
// a caller that chose it earlier counts as 0).
inline int64_t micros_between(Clock::time_point from, Clock::time_point to) noexcept {
  return std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::microseconds>(to - from).count());
}

struct Completion {
  Outcome outcome = Outcome::success;
  Clock::time_point ended_at{};  // when the outcome was known
  int status = 0;                // 0 when no complete response
  bool response_complete = false;
  RequestTimings timings;
  uint64_t bytes_in = 0;
  uint64_t body_bytes_in = 0;
  uint64_t bytes_out = 0;
  bool new_connection = false;
  bool retried = false;             // sent again after a kept-alive connection closed under it
  bool tls_handshake = false;       // a TLS handshake completed for this request
  bool tls_resumed = false;         // ... resuming an earlier session
  bool tls_kernel_send = false;     // ... after which the kernel encrypts the records (kTLS)
  bool tls_kernel_receive = false;  // ... and decrypts them
};

}  // namespace kubeload::loadgen
