#include "operator/kube/list_watch.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

namespace kubeload::kube {

std::string object_key(const nlohmann::json& object) {
  const auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return {};
  const std::string name = m->value("name", "");
  const std::string ns = m->value("namespace", "");
  return ns.empty() ? name : ns + "/" + name;
}

// managedFields and kubectl's last-applied copy (a second whole spec, request
// bodies and all) are often the largest part of an object and nothing the
// operator decides on; the cache is kept without them. Nothing writes a
// cached object back whole, so they are never lost on the server.
void trim_for_cache(nlohmann::json& object, CacheKeep keep,
                    const std::vector<std::string>& status_fields) {
  if (keep != CacheKeep::all && object.is_object()) {
    for (auto it = object.begin(); it != object.end();) {
      const std::string& key = it.key();
      const bool kept = key == "apiVersion" || key == "kind" || key == "metadata" ||
                        (key == "status" && (keep == CacheKeep::metadata_and_status ||
                                             keep == CacheKeep::metadata_and_status_fields));
      it = kept ? std::next(it) : object.erase(it);
    }
  }
  if (keep == CacheKeep::metadata_and_status_fields) {
    if (auto status = object.find("status"); status != object.end()) {
      nlohmann::json kept = nlohmann::json::object();
      for (const std::string& field : status_fields) {
        // A dotted path ("target.addresses") keeps that member alone of the
        // objects on its way.
        const nlohmann::json* from = &*status;
        nlohmann::json::json_pointer path;
        for (std::string_view rest = field; from != nullptr;) {
          const std::size_t dot = rest.find('.');
          const std::string key(rest.substr(0, dot));
          const auto member = from->is_object() ? from->find(key) : from->end();
          from = member == from->end() ? nullptr : &*member;
          path /= key;
          if (dot == std::string_view::npos) break;
          rest.remove_prefix(dot + 1);
        }
        if (from != nullptr) kept[path] = *from;
      }
      if (kept.empty()) {
        object.erase(status);
      } else {
        *status = std::move(kept);
      }
    }
  }
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    meta->erase("managedFields");
    if (auto annotations = meta->find("annotations");
        annotations != meta->end() && annotations->is_object()) {
      annotations->erase("kubectl.kubernetes.io/last-applied-configuration");
      if (annotations->empty()) meta->erase(annotations);
    }
  }
}

namespace {
std::string resource_version_of(const nlohmann::json& object) {
  const auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return {};
  return m->value("resourceVersion", "");
}
}  // namespace

ListWatch::ListWatch(Client& client, ListWatchOptions options, Handler handler)
    : client_(client),
      options_(std::move(options)),
      handler_(std::move(handler)),
      thread_([this](std::stop_token st) { run(st); }) {}

ListWatch::~ListWatch() {
  stop();
}

void ListWatch::stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

bool ListWatch::wait_until_synced(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return synced_; });
}

ListWatch::Object ListWatch::get(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return nullptr;
  return it->second;
}

std::vector<ListWatch::Object> ListWatch::items() const {
  std::lock_guard lock(mu_);
  std::vector<Object> out;
  out.reserve(cache_.size());
  for (const auto& [k, v] : cache_) out.push_back(v);
  return out;
}

std::string ListWatch::resource_version() const {
  std::lock_guard lock(mu_);
  return resource_version_;
}

ListWatchStats ListWatch::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::string ListWatch::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

void ListWatch::fail(std::string what) {
  std::lock_guard lock(mu_);
  ++stats_.failures;
  last_error_ = std::move(what);
}

void ListWatch::sleep_for(std::chrono::milliseconds d, std::stop_token stop) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, stop, d, [] { return false; });
}

void ListWatch::run(std::stop_token stop) {
  using namespace std::chrono;
  milliseconds backoff = options_.backoff_initial;
  auto back_off = [&] {
    sleep_for(backoff, stop);
    backoff = std::min(backoff * 2, options_.backoff_max);
  };
  bool need_list = options_.start_resource_version.empty();
  if (!need_list) {
    std::lock_guard lock(mu_);
    resource_version_ = options_.start_resource_version;
  }
  while (!stop.stop_requested()) {
    try {
      if (need_list) {
        if (!relist(stop)) {
          back_off();
          continue;
        }
        need_list = false;
      }
      WatchOptions w;
      w.label_selector = options_.label_selector;
      w.field_selector = options_.field_selector;
      w.resource_version = resource_version();
      w.timeout_seconds = options_.watch_timeout_seconds;
      const auto started = steady_clock::now();
      const WatchResult res = client_.watch(
          options_.resource, w, [this](const WatchEvent& ev) { on_watch_event(ev); }, stop);
      {
        std::lock_guard lock(mu_);
        ++stats_.watches;
      }
      switch (res.end) {
        case WatchResult::End::Stopped:
          return;
        case WatchResult::End::Gone:
          // Our resourceVersion was compacted away or fell out of the watch
          // cache: only a fresh list can tell what changed.
          {
            std::lock_guard lock(mu_);
            ++stats_.gone;
          }
          need_list = true;
          break;
        case WatchResult::End::Error:
          fail("watch " + options_.resource.plural + ": " +
               (res.status ? std::to_string(res.status->code) + " " + res.status->reason + ": " +
                                 res.status->message
                           : std::string("error event without a Status")));
          back_off();
          break;
        case WatchResult::End::Closed:
          // A normal end (timeoutSeconds). An empty stream that ends at once
          // means the server is going away: do not spin on it.
          if (res.events == 0 && steady_clock::now() - started < seconds(1)) {
            back_off();
          } else {
            backoff = options_.backoff_initial;
          }
          break;
      }
    } catch (const TransportError& e) {
      if (stop.stop_requested()) return;
      fail(e.what());
      back_off();
    } catch (const std::exception& e) {
      // A throwing handler (or an unexpected answer) must not take the thread
      // down; after it, a fresh list is the only state we can trust.
      if (stop.stop_requested()) return;
      fail(std::string("list/watch loop: ") + e.what());
      need_list = true;
      back_off();
    }
  }
}

bool ListWatch::relist(std::stop_token stop) {
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  if (options_.page_size > 0) lo.limit = options_.page_size;
  std::map<std::string, Object> fresh;
  std::string list_rv;
  while (true) {
    Response resp = client_.list(options_.resource, lo, stop);
    if (resp.is_gone() && !lo.continue_token.empty()) {
      // The continue token expired between pages: start over in one piece.
      fresh.clear();
      lo.continue_token.clear();
      lo.limit.reset();
      continue;
    }
    if (!resp.ok()) {
      fail("list " + options_.resource.plural + ": " + resp.describe());
      return false;
    }
    if (auto it = resp.body.find("items"); it != resp.body.end() && it->is_array()) {
      for (auto& item : *it) {
        // List items come without apiVersion/kind; handlers building owner
        // references or events need them.
        if (!item.contains("apiVersion")) item["apiVersion"] = options_.resource.api_version();
        if (!item.contains("kind") && !options_.resource.kind.empty()) {
          item["kind"] = options_.resource.kind;
        }
        trim_for_cache(item, options_.keep, options_.status_fields);
        std::string key = object_key(item);
        fresh.emplace(std::move(key), std::make_shared<const nlohmann::json>(std::move(item)));
      }
    }
    const nlohmann::json meta = resp.body.value("metadata", nlohmann::json::object());
    list_rv = meta.value("resourceVersion", "");
    lo.continue_token = meta.value("continue", "");
    if (lo.continue_token.empty()) break;
  }

  std::vector<std::pair<WatchEventType, Object>> changes;
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, obj] : fresh) {
      auto old = cache_.find(key);
      if (old == cache_.end()) {
        changes.emplace_back(WatchEventType::Added, obj);
      } else if (resource_version_of(*old->second) != resource_version_of(*obj)) {
        changes.emplace_back(WatchEventType::Modified, obj);
      }
    }
    for (const auto& [key, obj] : cache_) {
      if (!fresh.count(key)) changes.emplace_back(WatchEventType::Deleted, obj);
    }
    cache_ = std::move(fresh);
    resource_version_ = list_rv;
    ++stats_.lists;
    stats_.events += changes.size();
  }
  for (const auto& [type, obj] : changes) handler_(type, *obj);
  {
    std::lock_guard lock(mu_);
    synced_ = true;
  }
  cv_.notify_all();
  return true;
}

void ListWatch::on_watch_event(const WatchEvent& ev) {
  if (ev.type == WatchEventType::Error) return;  // the watch call reports it
  nlohmann::json trimmed = ev.object;
  trim_for_cache(trimmed, options_.keep, options_.status_fields);
  const auto obj = std::make_shared<const nlohmann::json>(std::move(trimmed));
  {
    std::lock_guard lock(mu_);
    if (auto rv = resource_version_of(*obj); !rv.empty()) resource_version_ = rv;
    if (ev.type == WatchEventType::Bookmark) return;
    const std::string key = object_key(*obj);
    if (ev.type == WatchEventType::Deleted) {
      cache_.erase(key);
    } else {
      cache_[key] = obj;
    }
    ++stats_.events;
  }
  handler_(ev.type, *obj);
}

}  // namespace kubeload::kube
