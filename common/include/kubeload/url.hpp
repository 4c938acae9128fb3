#pragma once
// The one grammar of a target URL, for the spec (spec.target.url), the
// loadgen command line and the worker: http or https (any case), a host (a
// name of letters, digits, '-', '.', '_', or an [IPv6] address), an optional
// port from 1 to 65535, then the path and query; no user:password@ (headers
// carry credentials), no spaces or control characters.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace kubeload {

struct HttpUrl {
  std::string scheme;  // "http" | "https", lower case
  std::string host;    // without the brackets of an IPv6 address
  uint16_t port = 80;  // the scheme's default when the URL has none
  std::string target;  // path and query, at least "/"; the fragment dropped
};

// The URL's parts, or why it is not a target: a message to put after the
// field's name ("must be an http:// or https:// URL with a host, got ..."),
// which quotes the URL except when it holds credentials.
std::variant<HttpUrl, std::string> parse_http_url(std::string_view url);

}  // namespace kubeload
