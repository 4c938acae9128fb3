#pragma once
// The reconcile queue, as controller-runtime has it: keys (namespace/name),
// deduplicated while waiting; a key being processed is not handed out twice
// (it is re-queued when it was added meanwhile); failures come back after a
// per-key exponential backoff; add_after schedules a later look, once per
// key (the earliest wins), so requeues do not pile up. Fair across
// namespaces: waiting keys are handed out one namespace at a time in turn, so
// a namespace with many keys (broken LoadTests coming back from backoff, big
// runs polled every second) delays another's by at most one key per turn.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace kubeload::controller {

class WorkQueue {
 public:
  using Clock = std::chrono::steady_clock;

  explicit WorkQueue(std::chrono::milliseconds backoff_base = std::chrono::milliseconds(200),
                     std::chrono::milliseconds backoff_max = std::chrono::seconds(60));

  void add(const std::string& key);
  void add_after(const std::string& key, std::chrono::milliseconds delay);
  // A failed reconcile: back again after base * 2^failures (capped).
  void add_rate_limited(const std::string& key);
  // The key reconciled cleanly: its backoff starts over.
  void forget(const std::string& key);
  // The delay the key's next failure would get.
  std::chrono::milliseconds backoff_for(const std::string& key) const;
  // Blocks until a key is ready or the queue shuts down (nullopt).
  std::optional<std::string> get();
  // Must follow every get(): the key may be handed out again.
  void done(const std::string& key);
  void shut_down();
  std::size_t depth() const;

 private:
  void move_due_locked(Clock::time_point now);
  void push_locked(const std::string& key);  // a key just added to queued_
  std::string pop_locked();                  // the oldest key of the next namespace in turn

  const std::chrono::milliseconds backoff_base_;
  const std::chrono::milliseconds backoff_max_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  // Waiting keys by namespace (the part of "namespace/name" before the
  // slash), and the namespaces that have waiting keys, in turn order.
  std::map<std::string, std::deque<std::string>> waiting_;
  std::deque<std::string> turns_;
  std::set<std::string> queued_;
  std::set<std::string> processing_;
  std::set<std::string> dirty_;  // added while processing
  std::multimap<Clock::time_point, std::string> delayed_;
  std::map<std::string, Clock::time_point> delayed_at_;  // each key's one delayed entry
  std::map<std::string, int> failures_;
  bool shutting_down_ = false;
};

}  // namespace kubeload::controller
