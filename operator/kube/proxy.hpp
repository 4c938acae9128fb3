#pragma once
// Which HTTP proxy the client goes through to reach the API server: the
// cluster's proxy-url, else the environment's, by the rules of Go's
// net/http.ProxyFromEnvironment that kubectl follows.

#include <functional>
#include <optional>
#include <string>

namespace kubeload::kube {

using Getenv = std::function<std::optional<std::string>(const char*)>;

// The proxy URL for requests to `server` ("https://host:port"), or "" for a
// direct connection. A non-empty `proxy_url` (the kubeconfig's) always wins.
// Otherwise HTTPS_PROXY/https_proxy for an https server and
// HTTP_PROXY/http_proxy for an http one, unless NO_PROXY/no_proxy matches
// the host or the host is localhost or a loopback address. A proxy given
// without a scheme is http://. `getenv` null: ::getenv. Throws ConfigError
// for a proxy that is not http:// (cpprestsdk talks to proxies in clear text;
// https through it still uses CONNECT).
std::string proxy_for(const std::string& server, const std::string& proxy_url,
                      const Getenv& getenv = {});

// Whether the NO_PROXY list (comma-separated: "*", host names, ".domain" or
// "*.domain" suffixes, "name" also matching its subdomains, IP addresses,
// CIDRs, each optionally with ":port") exempts host:port from the proxy.
bool no_proxy_matches(const std::string& no_proxy, const std::string& host, int port);

}  // namespace kubeload::kube
