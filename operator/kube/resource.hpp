#pragma once
// Which Kubernetes collection a request addresses, and the URL paths and query
// strings built from it. Pure string work, so it is unit-tested without a server.

#include <optional>
#include <string>
#include <string_view>

namespace kubeload::kube {

// A resource collection: group/version/plural, scoped to one namespace, all
// namespaces (namespace_ empty on a namespaced resource) or cluster-wide.
struct ResourceRef {
  std::string group;  // "" for the core API ("/api/v1")
  std::string version;
  std::string plural;
  std::string kind;  // filled into bodies that lack it (create, apply)
  bool namespaced = true;
  std::string namespace_;

  // The same collection in another namespace ("" = all namespaces).
  ResourceRef in(std::string ns) const;
  // "v1" for core, "group/version" otherwise: the apiVersion objects carry.
  std::string api_version() const;
};

// Helpers for the resources the operator touches.
namespace resources {
ResourceRef pods(std::string ns = {});
ResourceRef configmaps(std::string ns = {});
ResourceRef endpointslices(std::string ns = {});
ResourceRef events(std::string ns = {});
ResourceRef jobs(std::string ns = {});
ResourceRef leases(std::string ns = {});
ResourceRef networkpolicies(std::string ns = {});
ResourceRef loadtests(std::string ns = {});
ResourceRef loadtestresults(std::string ns = {});
ResourceRef loadtestschedules(std::string ns = {});
ResourceRef secrets(std::string ns = {});
ResourceRef services(std::string ns = {});
}  // namespace resources

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::optional<long> limit;
  std::string continue_token;
  std::string resource_version;  // for list: "" means most recent (quorum read)
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // "" = start from now (plus synthetic ADDED events)
  int timeout_seconds = 300;     // the server ends the watch cleanly after this
  bool allow_bookmarks = true;
};

// Percent-encodes everything outside RFC 3986's unreserved set, so selectors
// such as "app in (a,b),tier!=web" survive as one query value.
std::string url_encode(std::string_view s);

// "/api/v1/namespaces/ns/pods[/name[/subresource]]" and the grouped, cluster-wide
// and all-namespaces variants. Throws std::invalid_argument when a name is given
// for a namespaced resource without a namespace, or a part is empty.
std::string resource_path(const ResourceRef& r, std::string_view name = {},
                          std::string_view subresource = {});

// "?labelSelector=...&..." (empty string when there are no options).
std::string list_query(const ListOptions& o);
// Always starts with "?watch=true".
std::string watch_query(const WatchOptions& o);

}  // namespace kubeload::kube
