#include "kubeload/url.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <system_error>

#include "kubeload/text.hpp"

namespace kubeload {
namespace {}  // namespace

std::variant<HttpUrl, std::string> parse_http_url(std::string_view url) {
  const std::string generic = "must be an http:// or https:// URL with a host, got " + quote(url);
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return generic;
  HttpUrl parsed;
  parsed.scheme = lowercase(url.substr(0, scheme_end));
  if (parsed.scheme != "http" && parsed.scheme != "https") return generic;
  const std::string_view rest = url.substr(scheme_end + 3);
  const size_t authority_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, authority_end);
  // Do not echo the URL: the part before '@' is a password.
  if (authority.find('@') != std::string_view::npos) {
    return std::string("must not contain credentials (user:password@); use headersFrom");
  }
  if (has_space_or_control(url)) return "must not contain spaces or control characters";

  std::string_view host = authority;
  std::optional<std::string_view> port;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return generic;
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (!after.starts_with(':')) return generic;
      port = after.substr(1);
    }
    const bool ipv6_chars = std::all_of(
        host.begin(), host.end(), [](char c) { return is_hex_digit(c) || c == ':' || c == '.'; });
    if (host.empty() || !ipv6_chars) return generic;
  } else {
    const size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    const bool host_chars = std::all_of(host.begin(), host.end(), [](char c) {
      return is_alnum(c) || c == '-' || c == '.' || c == '_';
    });
    if (host.empty() || !host_chars) return generic;
  }
  parsed.host = std::string(host);
  parsed.port = parsed.scheme == "https" ? 443 : 80;
  if (port) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port->data(), port->data() + port->size(), value);
    if (port->empty() || ec != std::errc() || end != port->data() + port->size() || value < 1 ||
        value > 65535) {
      return "invalid port " + quote(*port) + " in " + quote(url);
    }
    parsed.port = static_cast<uint16_t>(value);
  }
  std::string_view target =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  target = target.substr(0, target.find('#'));
  parsed.target =
      target.empty() || target.front() != '/' ? "/" + std::string(target) : std::string(target);
  return parsed;
}

}  // namespace kubeload
