#include "operator/work_queue.hpp"

#include <algorithm>

namespace kubeload::controller {

WorkQueue::WorkQueue(std::chrono::milliseconds backoff_base, std::chrono::milliseconds backoff_max)
    : backoff_base_(backoff_base), backoff_max_(backoff_max) {}

void WorkQueue::add(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (shutting_down_) return;
  if (processing_.count(key) != 0) {
    dirty_.insert(key);
    return;
  }
  if (queued_.insert(key).second) {
    push_locked(key);
    ready_.notify_one();
  }
}

void WorkQueue::push_locked(const std::string& key) {
  const std::string namespace_ = key.substr(0, key.find('/'));
  std::deque<std::string>& keys = waiting_[namespace_];
  if (keys.empty()) turns_.push_back(namespace_);
  keys.push_back(key);
}

std::string WorkQueue::pop_locked() {
  const std::string namespace_ = std::move(turns_.front());
  turns_.pop_front();
  const auto keys = waiting_.find(namespace_);
  std::string key = std::move(keys->second.front());
  keys->second.pop_front();
  if (keys->second.empty()) {
    waiting_.erase(keys);
  } else {
    turns_.push_back(namespace_);  // its next key waits for the other namespaces' turns
  }
  return key;
}

void WorkQueue::add_after(const std::string& key, std::chrono::milliseconds delay) {
  if (delay.count() <= 0) return add(key);
  std::lock_guard lock(mutex_);
  if (shutting_down_) return;
  // Waiting to be handed out already: that comes sooner than this.
  if (queued_.count(key) != 0) return;
  const Clock::time_point due = Clock::now() + delay;
  // One delayed entry per key, the earliest: a key scheduled again and again
  // (every pass asks for the next one) is still looked at once.
  if (const auto scheduled = delayed_at_.find(key); scheduled != delayed_at_.end()) {
    if (scheduled->second <= due) return;
    const auto range = delayed_.equal_range(scheduled->second);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second == key) {
        delayed_.erase(it);
        break;
      }
    }
  }
  delayed_.emplace(due, key);
  delayed_at_[key] = due;
  ready_.notify_one();
}

std::chrono::milliseconds WorkQueue::backoff_for(const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto it = failures_.find(key);
  const int failures = it == failures_.end() ? 0 : it->second;
  const auto factor = int64_t{1} << std::min(failures, 20);
  return std::min<std::chrono::milliseconds>(backoff_base_ * factor, backoff_max_);
}

void WorkQueue::add_rate_limited(const std::string& key) {
  const std::chrono::milliseconds delay = backoff_for(key);
  {
    std::lock_guard lock(mutex_);
    ++failures_[key];
  }
  add_after(key, delay);
}

void WorkQueue::forget(const std::string& key) {
  std::lock_guard lock(mutex_);
  failures_.erase(key);
}

void WorkQueue::move_due_locked(Clock::time_point now) {
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    const std::string key = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    delayed_at_.erase(key);
    if (processing_.count(key) != 0) {
      dirty_.insert(key);
    } else if (queued_.insert(key).second) {
      push_locked(key);
    }
  }
}

std::optional<std::string> WorkQueue::get() {
  std::unique_lock lock(mutex_);
  while (true) {
    if (shutting_down_) return std::nullopt;
    move_due_locked(Clock::now());
    if (!turns_.empty()) {
      std::string key = pop_locked();
      queued_.erase(key);
      processing_.insert(key);
      return key;
    }
    if (delayed_.empty()) {
      ready_.wait(lock);
    } else {
      ready_.wait_until(lock, delayed_.begin()->first);
    }
  }
}

void WorkQueue::done(const std::string& key) {
  std::lock_guard lock(mutex_);
  processing_.erase(key);
  if (dirty_.erase(key) != 0 && queued_.insert(key).second) {
    push_locked(key);
    ready_.notify_one();
  }
}

void WorkQueue::shut_down() {
  std::lock_guard lock(mutex_);
  shutting_down_ = true;
  ready_.notify_all();
}

std::size_t WorkQueue::depth() const {
  std::lock_guard lock(mutex_);
  return queued_.size() + delayed_.size();
}

}  // namespace kubeload::controller
