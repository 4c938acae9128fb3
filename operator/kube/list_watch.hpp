#pragma once
// An informer in miniature: list a collection, deliver its objects, watch from
// the list's resourceVersion, and keep a cache keyed by namespace/name. A 410
// (resourceVersion too old) relists and delivers only what changed meanwhile;
// a dropped connection or API-server restart re-watches with capped
// exponential backoff. One thread per ListWatch, stopped and joined by the
// destructor.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "operator/kube/client.hpp"

namespace kubeload::kube {

enum class CacheKeep {
  // All of it but metadata.managedFields and kubectl's last-applied copy.
  all,
  // apiVersion, kind and metadata: for objects whose body the reader fetches
  // fresh when it needs it (a LoadTest's spec, request bodies and all, is
  // read by each reconcile).
  metadata,
  // ... and status, without spec: for objects made by others from a template
  // the reader already knows (a Job's pods: the spec is the Job's template,
  // a few KiB per pod that 1,000 workers would multiply).
  metadata_and_status,
  // ... metadata and the members of status that ListWatchOptions::status_fields
  // names (status.phase unless told): for objects whose status is large and
  // whose readers need a few facts of it (a LoadTest's merged result stays on
  // the server; the end of a run still reaches the handler).
  metadata_and_status_fields,
};

struct ListWatchOptions {
  ResourceRef resource;  // namespace_ "" = all namespaces
  std::string label_selector;
  std::string field_selector;
  int watch_timeout_seconds = 300;  // each watch request; the loop then re-watches
  long page_size = 500;
  // Non-empty: watch from this resourceVersion before any list (resuming from
  // one remembered across a restart). Until a list happens the cache only
  // holds what changed since; a 410 falls back to a list as usual.
  std::string start_resource_version;
  // What the cache keeps of each object and hands the handler. Less than all
  // of it keeps the cache small whatever the objects hold, as
  // controller-runtime's metadata-only informers and cache transforms do.
  CacheKeep keep = CacheKeep::all;
  // With metadata_and_status_fields: the members of status kept, each a
  // name or a dotted path ("target.addresses": that member alone of target).
  std::vector<std::string> status_fields{"phase"};
  std::chrono::milliseconds backoff_initial{100};
  std::chrono::milliseconds backoff_max{10'000};
};

struct ListWatchStats {
  std::uint64_t lists = 0;     // completed lists (the first one included)
  std::uint64_t watches = 0;   // watch requests that returned
  std::uint64_t gone = 0;      // 410s that forced a relist
  std::uint64_t failures = 0;  // transport errors and error answers, each followed by a backoff
  std::uint64_t events = 0;    // ADDED/MODIFIED/DELETED delivered to the handler
};

// "namespace/name", or "name" for cluster-scoped objects.
std::string object_key(const nlohmann::json& object);

// Cuts `object` down to what `keep` says the cache holds.
void trim_for_cache(nlohmann::json& object, CacheKeep keep = CacheKeep::all,
                    const std::vector<std::string>& status_fields = {"phase"});

class ListWatch {
 public:
  // Called on the ListWatch's thread with ADDED, MODIFIED or DELETED and the
  // object (for DELETED, its last state). The cache already reflects the event.
  using Handler = std::function<void(WatchEventType, const nlohmann::json&)>;

  ListWatch(Client& client, ListWatchOptions options, Handler handler);
  ~ListWatch();
  ListWatch(const ListWatch&) = delete;
  ListWatch& operator=(const ListWatch&) = delete;

  // Stops the loop (cancelling an in-flight request) and joins the thread.
  void stop();
  // True once the first list has been delivered.
  bool wait_until_synced(std::chrono::milliseconds timeout);

  // The cached objects are shared and never changed in place (an update
  // replaces the pointer), so readers hold them without copying, as
  // client-go's informers hand out pointers into their store.
  using Object = std::shared_ptr<const nlohmann::json>;
  Object get(const std::string& key) const;  // null when not cached
  std::vector<Object> items() const;
  std::string resource_version() const;
  ListWatchStats stats() const;
  std::string last_error() const;

 private:
  void run(std::stop_token stop);
  bool relist(std::stop_token stop);
  void on_watch_event(const WatchEvent& ev);
  void sleep_for(std::chrono::milliseconds d, std::stop_token stop);
  void fail(std::string what);

  Client& client_;
  const ListWatchOptions options_;
  const Handler handler_;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::map<std::string, Object> cache_;
  std::string resource_version_;
  bool synced_ = false;
  ListWatchStats stats_;
  std::string last_error_;

  std::jthread thread_;  // last: starts once everything above exists
};

}  // namespace kubeload::kube
