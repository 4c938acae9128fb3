#pragma once
// Reads an HTTP answer's body through cpprestsdk, at most one byte past
// `cap` whatever the framing (chunked has no length), so a peer cannot make
// the operator hold more than it asked for.

#include <cpprest/http_msg.h>

#include <cstddef>
#include <optional>
#include <string>

namespace kubeload::controller {

// The body, or nullopt when it is longer than cap bytes.
inline std::optional<std::string> read_bounded_body(const web::http::http_response& response,
                                                    std::size_t cap) {
  concurrency::streams::container_buffer<std::string> body;
  auto stream = response.body();
  std::size_t total = 0;
  while (total <= cap) {
    const std::size_t got = stream.read(body, 64 * 1024).get();
    if (got == 0) break;
    total += got;
  }
  if (total > cap) return std::nullopt;
  return std::move(body.collection());
}

}  // namespace kubeload::controller
