#include "operator/kube/resource.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kubeload::kube {
namespace {

TEST(KubeResource, CorePathsUseApiV1) {
  EXPECT_EQ(resource_path(resources::pods("ns1")), "/api/v1/namespaces/ns1/pods");
  EXPECT_EQ(resource_path(resources::pods("ns1"), "p-0"), "/api/v1/namespaces/ns1/pods/p-0");
  EXPECT_EQ(resource_path(resources::configmaps("a"), "cm"), "/api/v1/namespaces/a/configmaps/cm");
  EXPECT_EQ(resource_path(resources::events("x")), "/api/v1/namespaces/x/events");
}

TEST(KubeResource, GroupedPathsUseApisGroupVersion) {
  EXPECT_EQ(resource_path(resources::jobs("ns"), "j"), "/apis/batch/v1/namespaces/ns/jobs/j");
  EXPECT_EQ(resource_path(resources::leases("kube-system"), "kubeload"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubeload");
  EXPECT_EQ(resource_path(resources::loadtests("d"), "lt", "status"),
            "/apis/kubeload.dev/v1alpha1/namespaces/d/loadtests/lt/status");
}

TEST(KubeResource, EmptyNamespaceMeansAllNamespacesForCollections) {
  EXPECT_EQ(resource_path(resources::pods()), "/api/v1/pods");
  EXPECT_EQ(resource_path(resources::loadtests()), "/apis/kubeload.dev/v1alpha1/loadtests");
  EXPECT_EQ(resource_path(resources::loadtestschedules("d"), "nightly", "status"),
            "/apis/kubeload.dev/v1alpha1/namespaces/d/loadtestschedules/nightly/status");
  EXPECT_EQ(resources::loadtestschedules().kind, "LoadTestSchedule");
}

TEST(KubeResource, ClusterScopedIgnoresNamespace) {
  ResourceRef nodes{"", "v1", "nodes", "Node", false, "ignored"};
  EXPECT_EQ(resource_path(nodes), "/api/v1/nodes");
  EXPECT_EQ(resource_path(nodes, "kl-node-1"), "/api/v1/nodes/kl-node-1");
  ResourceRef crds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", false, ""};
  EXPECT_EQ(resource_path(crds, "loadtests.kubeload.dev"),
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/loadtests.kubeload.dev");
}

TEST(KubeResource, NamedObjectOfNamespacedKindNeedsNamespace) {
  EXPECT_THROW(resource_path(resources::pods(), "p"), std::invalid_argument);
  EXPECT_THROW(resource_path(resources::pods("n"), "", "status"), std::invalid_argument);
  ResourceRef broken{"", "", "pods", "", true, "n"};
  EXPECT_THROW(resource_path(broken), std::invalid_argument);
}

TEST(KubeResource, ApiVersion) {
  EXPECT_EQ(resources::pods().api_version(), "v1");
  EXPECT_EQ(resources::jobs().api_version(), "batch/v1");
  EXPECT_EQ(resources::loadtests().api_version(), "kubeload.dev/v1alpha1");
  EXPECT_EQ(resources::pods("a").in("b").namespace_, "b");
}

TEST(KubeResource, UrlEncodeKeepsOnlyUnreserved) {
  EXPECT_EQ(url_encode("abc-._~XYZ019"), "abc-._~XYZ019");
  EXPECT_EQ(url_encode("app=web,tier!=db"), "app%3Dweb%2Ctier%21%3Ddb");
  EXPECT_EQ(url_encode("env in (a, b)"), "env%20in%20%28a%2C%20b%29");
  EXPECT_EQ(url_encode("k8s.io/x&y#z?"), "k8s.io%2Fx%26y%23z%3F");
  EXPECT_EQ(url_encode("\xC3\xA9"), "%C3%A9");
}

TEST(KubeResource, ListQueryEscapesSelectorsAndCarriesPaging) {
  EXPECT_EQ(list_query({}), "");
  ListOptions o;
  o.label_selector = "app in (a,b),tier!=web";
  o.field_selector = "metadata.name=x";
  o.limit = 50;
  o.continue_token = "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ==";
  EXPECT_EQ(list_query(o),
            "?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Dweb"
            "&fieldSelector=metadata.name%3Dx&limit=50"
            "&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ%3D%3D");
}

TEST(KubeResource, WatchQuery) {
  WatchOptions w;
  w.resource_version = "12345";
  w.timeout_seconds = 290;
  w.label_selector = "kubeload.dev/loadtest=lt1";
  EXPECT_EQ(watch_query(w),
            "?watch=true&allowWatchBookmarks=true&resourceVersion=12345&timeoutSeconds=290"
            "&labelSelector=kubeload.dev%2Floadtest%3Dlt1");
  WatchOptions bare;
  bare.allow_bookmarks = false;
  bare.timeout_seconds = 0;
  EXPECT_EQ(watch_query(bare), "?watch=true");
}

}  // namespace
}  // namespace kubeload::kube
