#pragma once
// Runs call(0) .. call(count - 1) with at most `limit` of them in flight, on
// threads of its own, and returns when all have returned. The reconcile asks
// its workers this way: one slow or unreachable worker costs a pass one call
// timeout, not one timeout per worker in turn (issue 12).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace kubeload::controller {

// `call` must not throw (catch inside); each index is called exactly once.
template <typename Call>
void for_each_bounded(std::size_t count, std::size_t limit, const Call& call) {
  const std::size_t threads = std::min(count, std::max<std::size_t>(limit, 1));
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) call(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  const auto drain = [&] {
    for (std::size_t i = next++; i < count; i = next++) call(i);
  };
  std::vector<std::jthread> pool;
  pool.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(drain);
  drain();  // this thread is one of them
}

}  // namespace kubeload::controller
