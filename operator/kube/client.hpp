#pragma once
// A small, synchronous Kubernetes API client on cpprestsdk. Each call blocks
// the calling thread (the operator's workers and watch loops are threads).
// HTTP-level outcomes, errors included, come back as a Response; only
// transport failures (connect, TLS, reset, cancelled) throw TransportError.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "operator/kube/config.hpp"
#include "operator/kube/exec_credential.hpp"
#include "operator/kube/resource.hpp"
#include "operator/kube/response.hpp"
#include "operator/kube/watch_event_parser.hpp"

namespace kubeload::kube {

// Also thrown when the kubeconfig's exec credential plugin fails (the
// message quotes it): like an unreachable server, a retry may succeed.
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ClientOptions {
  // One request's limit; zero: none (kubectl's --request-timeout=0). Watches
  // have their own, from their timeoutSeconds.
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  // kubectl's --as and --as-group: Impersonate-User, and one Impersonate-Group
  // header per group.
  std::string impersonate_user;
  std::vector<std::string> impersonate_groups;
  // How the kubeconfig's exec credential plugin runs, if it has one.
  ExecRunOptions exec;
  // Sent as fieldManager on apply and by record_event as source.component.
  std::string field_manager = "kubeload-operator";
  std::string user_agent = "kubeload-operator/0.1";
};

// The Accept header that asks the API server for an object's metadata
// alone (PartialObjectMetadata, served since Kubernetes 1.15).
inline constexpr std::string_view kPartialObjectMetadata =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

enum class Propagation { Background, Foreground, Orphan };

struct DeleteOptions {
  std::optional<Propagation> propagation;
  std::string precondition_resource_version;  // delete only this version
  std::string precondition_uid;               // delete only this incarnation
};

struct ApplyOptions {
  std::string field_manager;  // empty: ClientOptions::field_manager
  bool force = false;         // take ownership of fields other managers own
};

// How a watch call ended.
struct WatchResult {
  enum class End {
    Closed,   // the server ended the stream (timeoutSeconds, or the server went away cleanly)
    Stopped,  // the stop token fired
    Gone,     // 410: the resourceVersion is too old; list again
    Error,    // another ERROR event or non-200 answer; see status
  };
  End end = End::Closed;
  std::string resource_version;  // of the last event seen (objects and bookmarks)
  std::optional<ApiStatus> status;
  std::size_t events = 0;        // events delivered, bookmarks included
  std::size_t parse_errors = 0;  // malformed lines skipped
};

class Client {
 public:
  explicit Client(ClusterConfig config, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const ClusterConfig& config() const;

  Response get(const ResourceRef& r, std::string_view name);
  // The object's metadata only, as a meta.k8s.io/v1 PartialObjectMetadata
  // (kPartialObjectMetadata): of a Secret, its labels and annotations
  // without its data. RBAC still calls it a `get`.
  Response get_metadata(const ResourceRef& r, std::string_view name);
  Response list(const ResourceRef& r, const ListOptions& options = {}, std::stop_token stop = {});
  Response create(const ResourceRef& r, const nlohmann::json& object);
  // PUT: the object's metadata.resourceVersion makes it conditional (409 if stale).
  Response replace(const ResourceRef& r, std::string_view name, const nlohmann::json& object);
  // application/merge-patch+json (RFC 7386); `subresource` e.g. "status".
  Response merge_patch(const ResourceRef& r, std::string_view name, const nlohmann::json& patch,
                       std::string_view subresource = {});
  Response patch_status(const ResourceRef& r, std::string_view name, const nlohmann::json& patch) {
    return merge_patch(r, name, patch, "status");
  }
  // Server-side apply (application/apply-patch+yaml; JSON is YAML).
  Response apply(const ResourceRef& r, std::string_view name, const nlohmann::json& object,
                 const ApplyOptions& options = {}, std::string_view subresource = {});
  Response remove(const ResourceRef& r, std::string_view name, const DeleteOptions& options = {});

  // get -> mutate -> PUT, starting over from a fresh read on 409, at most
  // `max_attempts` times. `mutate` returns false to leave the object alone (no
  // write; the GET response is returned). Other errors are returned as they are.
  Response update_with_retry(const ResourceRef& r, std::string_view name,
                             const std::function<bool(nlohmann::json&)>& mutate,
                             int max_attempts = 5);

  // A core/v1 Event about `involved` (a full object or at least apiVersion,
  // kind, metadata.name/namespace/uid). type is "Normal" or "Warning".
  Response record_event(const nlohmann::json& involved, std::string_view type,
                        std::string_view reason, std::string_view message);

  // Streams one watch request until the server closes it, `stop` fires, or an
  // ERROR event arrives (delivered to `on_event` first). Runs on the calling
  // thread; `on_event` is called for every event, bookmarks included.
  WatchResult watch(const ResourceRef& r, const WatchOptions& options,
                    const std::function<void(const WatchEvent&)>& on_event, std::stop_token stop);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string_view to_string(Propagation p);

}  // namespace kubeload::kube
