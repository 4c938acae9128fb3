#include "operator/kube/resource.hpp"

#include <stdexcept>
#include <utility>
#include <vector>

#include "kubeload/api/meta.hpp"

namespace kubeload::kube {

ResourceRef ResourceRef::in(std::string ns) const {
  ResourceRef r = *this;
  r.namespace_ = std::move(ns);
  return r;
}

std::string ResourceRef::api_version() const {
  return group.empty() ? version : group + "/" + version;
}

namespace resources {
namespace {
ResourceRef make(std::string group, std::string version, std::string plural, std::string kind,
                 std::string ns) {
  return ResourceRef{std::move(group), std::move(version), std::move(plural), std::move(kind), true,
                     std::move(ns)};
}
}  // namespace
ResourceRef pods(std::string ns) {
  return make("", "v1", "pods", "Pod", std::move(ns));
}
ResourceRef configmaps(std::string ns) {
  return make("", "v1", "configmaps", "ConfigMap", std::move(ns));
}
ResourceRef endpointslices(std::string ns) {
  return make("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", std::move(ns));
}
ResourceRef networkpolicies(std::string ns) {
  return make("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", std::move(ns));
}
ResourceRef secrets(std::string ns) {
  return make("", "v1", "secrets", "Secret", std::move(ns));
}
ResourceRef services(std::string ns) {
  return make("", "v1", "services", "Service", std::move(ns));
}
ResourceRef events(std::string ns) {
  return make("", "v1", "events", "Event", std::move(ns));
}
ResourceRef jobs(std::string ns) {
  return make("batch", "v1", "jobs", "Job", std::move(ns));
}
ResourceRef leases(std::string ns) {
  return make("coordination.k8s.io", "v1", "leases", "Lease", std::move(ns));
}
ResourceRef loadtests(std::string ns) {
  return make(std::string(api::kGroup), std::string(api::kVersion), std::string(api::kPlural),
              std::string(api::kKind), std::move(ns));
}
ResourceRef loadtestresults(std::string ns) {
  return make(std::string(api::kGroup), std::string(api::kVersion), std::string(api::kResultPlural),
              std::string(api::kResultKind), std::move(ns));
}
ResourceRef loadtestschedules(std::string ns) {
  return make(std::string(api::kGroup), std::string(api::kVersion),
              std::string(api::kSchedulePlural), std::string(api::kScheduleKind), std::move(ns));
}
}  // namespace resources

std::string url_encode(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xF]);
    }
  }
  return out;
}

namespace {
void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("kube: " + what);
}

std::string join_query(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string q;
  for (const auto& [k, v] : params) {
    q += q.empty() ? '?' : '&';
    q += k;
    q += '=';
    q += url_encode(v);
  }
  return q;
}
}  // namespace

std::string resource_path(const ResourceRef& r, std::string_view name,
                          std::string_view subresource) {
  require(!r.version.empty(), "resource " + r.plural + " has no version");
  require(!r.plural.empty(), "resource has no plural name");
  require(subresource.empty() || !name.empty(), "a subresource needs an object name");
  // Naming an object of a namespaced kind without a namespace is always a bug
  // in the caller; the server would answer 404 for a path that looks fine.
  require(name.empty() || !r.namespaced || !r.namespace_.empty(),
          r.plural + "/" + std::string(name) + " needs a namespace");
  std::string p = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  if (r.namespaced && !r.namespace_.empty()) p += "/namespaces/" + url_encode(r.namespace_);
  p += "/" + r.plural;
  if (!name.empty()) p += "/" + url_encode(name);
  if (!subresource.empty()) p += "/" + std::string(subresource);
  return p;
}

std::string list_query(const ListOptions& o) {
  std::vector<std::pair<std::string, std::string>> params;
  if (!o.label_selector.empty()) params.emplace_back("labelSelector", o.label_selector);
  if (!o.field_selector.empty()) params.emplace_back("fieldSelector", o.field_selector);
  if (o.limit) params.emplace_back("limit", std::to_string(*o.limit));
  if (!o.continue_token.empty()) params.emplace_back("continue", o.continue_token);
  if (!o.resource_version.empty()) params.emplace_back("resourceVersion", o.resource_version);
  return join_query(params);
}

std::string watch_query(const WatchOptions& o) {
  std::vector<std::pair<std::string, std::string>> params{{"watch", "true"}};
  if (o.allow_bookmarks) params.emplace_back("allowWatchBookmarks", "true");
  if (!o.resource_version.empty()) params.emplace_back("resourceVersion", o.resource_version);
  if (o.timeout_seconds > 0)
    params.emplace_back("timeoutSeconds", std::to_string(o.timeout_seconds));
  if (!o.label_selector.empty()) params.emplace_back("labelSelector", o.label_selector);
  if (!o.field_selector.empty()) params.emplace_back("fieldSelector", o.field_selector);
  return join_query(params);
}

}  // namespace kubeload::kube
