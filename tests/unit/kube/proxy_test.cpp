// Which proxy the client takes to the API server: the kubeconfig's proxy-url,
// else the environment's by the rules of Go's ProxyFromEnvironment.
#include "operator/kube/proxy.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "operator/kube/config.hpp"

namespace kubeload::kube {
namespace {

Getenv env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(KubeProxy, NoProxyMatchingTable) {
  const struct {
    std::string no_proxy;
    std::string host;
    int port;
    bool matches;
  } rows[] = {
      {"", "api.example.com", 443, false},
      {"*", "api.example.com", 443, true},
      {"example.com", "example.com", 443, true},
      {"example.com", "api.example.com", 443, true},  // a name covers its subdomains
      {"example.com", "notexample.com", 443, false},
      {".example.com", "api.example.com", 443, true},
      {".example.com", "example.com", 443, false},  // a leading dot: subdomains only
      {"*.example.com", "api.example.com", 443, true},
      {"*.example.com", "example.com", 443, false},
      {"EXAMPLE.com", "Api.Example.COM", 443, true},
      {"other.org, example.com", "api.example.com", 443, true},
      {"example.com:6443", "api.example.com", 6443, true},
      {"example.com:6443", "api.example.com", 443, false},
      {"10.0.0.1", "10.0.0.1", 443, true},
      {"10.0.0.1", "10.0.0.2", 443, false},
      {"10.0.0.0/8", "10.1.2.3", 6443, true},
      {"10.0.0.0/8", "11.1.2.3", 6443, false},
      {"192.168.1.0/24", "192.168.1.77", 443, true},
      {"192.168.1.0/24", "192.168.2.1", 443, false},
      {"10.0.0.0/8", "ten.example.com", 443, false},
      {"fd00::/8", "fd00::1", 443, true},
      {"fd00::/8", "fe80::1", 443, false},
      {"::1", "::1", 443, true},
      {"[fd00::1]:6443", "fd00::1", 6443, true},
      {"[fd00::1]:6443", "fd00::1", 443, false},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(no_proxy_matches(row.no_proxy, row.host, row.port), row.matches)
        << "NO_PROXY=" << row.no_proxy << " host " << row.host << ":" << row.port;
  }
}

TEST(KubeProxy, ProxyFromEnvironment) {
  const std::string https = "https://api.example.com:6443";
  // None set: direct.
  EXPECT_EQ(proxy_for(https, "", env_of({})), "");
  // https servers take HTTPS_PROXY, http ones HTTP_PROXY; upper case first.
  EXPECT_EQ(proxy_for(https, "", env_of({{"HTTPS_PROXY", "http://p:3128"}})), "http://p:3128");
  EXPECT_EQ(proxy_for(https, "", env_of({{"https_proxy", "http://low:1"}})), "http://low:1");
  EXPECT_EQ(proxy_for(https, "",
                      env_of({{"HTTPS_PROXY", "http://up:1"}, {"https_proxy", "http://low:1"}})),
            "http://up:1");
  EXPECT_EQ(proxy_for(https, "", env_of({{"HTTP_PROXY", "http://p:3128"}})), "");
  EXPECT_EQ(proxy_for("http://api.example.com", "", env_of({{"HTTP_PROXY", "http://p:3128"}})),
            "http://p:3128");
  // No scheme: http.
  EXPECT_EQ(proxy_for(https, "", env_of({{"HTTPS_PROXY", "p:3128"}})), "http://p:3128");
  // NO_PROXY (then no_proxy) exempts.
  EXPECT_EQ(proxy_for(https, "", env_of({{"HTTPS_PROXY", "p:1"}, {"NO_PROXY", ".example.com"}})),
            "");
  EXPECT_EQ(proxy_for(https, "", env_of({{"HTTPS_PROXY", "p:1"}, {"no_proxy", "*"}})), "");
  // Never for this machine, as in Go.
  for (const char* local : {"https://127.0.0.1:6443", "https://localhost:6443",
                            "https://[::1]:6443", "https://127.8.9.10"}) {
    EXPECT_EQ(proxy_for(local, "", env_of({{"HTTPS_PROXY", "p:1"}})), "") << local;
  }
  // The kubeconfig's proxy-url wins over everything, loopback included.
  EXPECT_EQ(proxy_for("https://127.0.0.1:6443", "http://127.0.0.1:3128",
                      env_of({{"HTTPS_PROXY", "http://other:1"}, {"NO_PROXY", "*"}})),
            "http://127.0.0.1:3128");
  // Only http:// proxies.
  EXPECT_THROW(proxy_for(https, "", env_of({{"HTTPS_PROXY", "socks5://p:1080"}})), ConfigError);
  try {
    proxy_for(https, "", env_of({{"HTTPS_PROXY", "https://p:1"}}));
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("HTTPS_PROXY: the proxy must be an http:// proxy, got "
                                         "\"https://p:1\""),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kubeload::kube
