// The ListWatch retry loop and the client's transport errors, with nothing
// listening at the address: no API server is needed to see that a refused
// connection becomes a TransportError, that retries back off up to the cap, and
// that stop() ends the loop promptly. The behaviour against a real API server
// is covered by tests/e2e/kube_client_e2e.sh.

#include "operator/kube/list_watch.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace kubeload::kube {
namespace {

using namespace std::chrono_literals;

// A loopback port that refuses connections: bound (so nobody else takes it
// during the test) but never listened on.
class ClosedPort {
 public:
  ClosedPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~ClosedPort() { ::close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

ClusterConfig config_for(const std::string& url) {
  ClusterConfig cfg;
  cfg.server = url;
  cfg.source = "test";
  return cfg;
}

TEST(KubeClient, RefusedConnectionIsATransportError) {
  ClosedPort port;
  Client c(config_for(port.url()));
  try {
    c.get(resources::configmaps("default"), "x");
    FAIL() << "expected a TransportError";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find(port.url()), std::string::npos) << e.what();
  }
  EXPECT_THROW(c.watch(resources::configmaps("default"), {}, [](const WatchEvent&) {}, {}),
               TransportError);
}

TEST(KubeClient, BadTlsMaterialFailsAtConstruction) {
  ClusterConfig cfg = config_for("https://127.0.0.1:1");
  cfg.client_cert_pem = "not a certificate";
  cfg.client_key_pem = "not a key";
  EXPECT_THROW(Client{cfg}, ConfigError);
}

TEST(KubeClient, CreateInAllNamespacesIsRejectedBeforeSending) {
  ClosedPort port;
  Client c(config_for(port.url()));
  EXPECT_THROW(c.create(resources::configmaps(), {{"metadata", {{"name", "x"}}}}),
               std::invalid_argument);
}

TEST(KubeListWatch, BacksOffWhileUnreachableAndStopsPromptly) {
  ClosedPort port;
  Client c(config_for(port.url()));
  ListWatchOptions o;
  o.resource = resources::configmaps("default");
  o.backoff_initial = 10ms;
  o.backoff_max = 80ms;
  int delivered = 0;
  auto lw = std::make_unique<ListWatch>(
      c, o, [&](WatchEventType, const nlohmann::json&) { ++delivered; });
  EXPECT_FALSE(lw->wait_until_synced(1200ms));
  const ListWatchStats s = lw->stats();
  // Sleeps of 10, 20, 40, then 80 ms: about 16 attempts in 1.2 s. A loop
  // without backoff would retry a refused connect far more often.
  EXPECT_GE(s.failures, 5u);
  EXPECT_LE(s.failures, 40u);
  EXPECT_EQ(s.lists, 0u);
  EXPECT_NE(lw->last_error().find(port.url()), std::string::npos) << lw->last_error();
  const auto t0 = std::chrono::steady_clock::now();
  lw.reset();  // the destructor stops and joins
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(delivered, 0);
}

TEST(KubeListWatch, ObjectKey) {
  EXPECT_EQ(object_key({{"metadata", {{"name", "a"}, {"namespace", "n"}}}}), "n/a");
  EXPECT_EQ(object_key({{"metadata", {{"name", "node-1"}}}}), "node-1");
  EXPECT_EQ(object_key(nlohmann::json::object()), "");
}

TEST(KubeListWatch, TheCacheKeepsNeitherManagedFieldsNorKubectlsLastAppliedCopy) {
  using nlohmann::json;
  const std::string body(200 * 1024, 'x');  // a large request body, written once in the spec
  json object = {
      {"metadata",
       {{"name", "a"},
        {"managedFields", json::array({{{"manager", "kubectl"}}})},
        {"annotations",
         {{"kubectl.kubernetes.io/last-applied-configuration", "{\"spec\":\"" + body + "\"}"},
          {"team", "payments"}}}}},
      {"spec", {{"requests", json::array({{{"body", body}}})}}}};
  trim_for_cache(object);
  EXPECT_FALSE(object["metadata"].contains("managedFields"));
  EXPECT_EQ(object["metadata"]["annotations"], (json{{"team", "payments"}}));
  EXPECT_EQ(object["spec"]["requests"][0]["body"], body);  // the spec itself stays whole
  EXPECT_LT(object.dump().size(), body.size() + 1024);

  json only_last_applied = {
      {"metadata",
       {{"name", "b"},
        {"annotations", {{"kubectl.kubernetes.io/last-applied-configuration", "{}"}}}}}};
  trim_for_cache(only_last_applied);
  EXPECT_EQ(only_last_applied, (json{{"metadata", {{"name", "b"}}}}));

  // Metadata only: what a LoadTest's cache entry is, its spec and status gone.
  json loadtest = {
      {"apiVersion", "kubeload.dev/v1alpha1"},
      {"kind", "LoadTest"},
      {"metadata", {{"name", "c"}, {"generation", 2}, {"managedFields", json::array()}}},
      {"spec", {{"requests", json::array({{{"body", body}}})}}},
      {"status", {{"phase", "Running"}}}};
  trim_for_cache(loadtest, CacheKeep::metadata);
  EXPECT_EQ(loadtest, (json{{"apiVersion", "kubeload.dev/v1alpha1"},
                            {"kind", "LoadTest"},
                            {"metadata", {{"name", "c"}, {"generation", 2}}}}));

  // Metadata and status: what a worker pod's cache entry is, the Job's
  // template (its spec) gone.
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "w-0"}, {"managedFields", json::array()}}},
              {"spec", {{"containers", json::array({{{"name", "loadgen"}}})}}},
              {"status", {{"phase", "Running"}, {"podIP", "10.244.1.7"}}}};
  trim_for_cache(pod, CacheKeep::metadata_and_status);
  EXPECT_EQ(pod, (json{{"apiVersion", "v1"},
                       {"kind", "Pod"},
                       {"metadata", {{"name", "w-0"}}},
                       {"status", {{"phase", "Running"}, {"podIP", "10.244.1.7"}}}}));

  // Metadata and the phase: a LoadTest's merged result stays on the server.
  json run = {{"apiVersion", "kubeload.dev/v1alpha1"},
              {"kind", "LoadTest"},
              {"metadata", {{"name", "c"}}},
              {"spec", {{"workers", 2}}},
              {"status", {{"phase", "Succeeded"}, {"result", {{"requests", 10}}}}}};
  trim_for_cache(run, CacheKeep::metadata_and_status_fields);
  EXPECT_EQ(run, (json{{"apiVersion", "kubeload.dev/v1alpha1"},
                       {"kind", "LoadTest"},
                       {"metadata", {{"name", "c"}}},
                       {"status", {{"phase", "Succeeded"}}}}));
  json unseen = {{"metadata", {{"name", "d"}}}, {"status", {{"observedGeneration", 0}}}};
  trim_for_cache(unseen, CacheKeep::metadata_and_status_fields);
  EXPECT_EQ(unseen, (json{{"metadata", {{"name", "d"}}}}));
  // Or the members of status named: a LoadTest's window and target addresses.
  json ended = {{"metadata", {{"name", "e"}}},
                {"status",
                 {{"phase", "Succeeded"},
                  {"startTime", "2026-12-01T10:00:00Z"},
                  {"result", {{"requests", 10}}},
                  {"target", {{"addresses", {"10.244.0.5"}}, {"stages", json::array({1, 2})}}}}}};
  trim_for_cache(ended, CacheKeep::metadata_and_status_fields,
                 {"phase", "startTime", "completionTime", "target.addresses", "result.nothing"});
  EXPECT_EQ(ended, (json{{"metadata", {{"name", "e"}}},
                         {"status",
                          {{"phase", "Succeeded"},
                           {"startTime", "2026-12-01T10:00:00Z"},
                           {"target", {{"addresses", {"10.244.0.5"}}}}}}}));
}

}  // namespace
}  // namespace kubeload::kube
