#include "operator/kube/proxy.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "kubeload/text.hpp"
#include "operator/kube/config.hpp"

namespace kubeload::kube {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// An IPv4 or IPv6 address as 16 bytes (v4 mapped), and whether it parsed.
struct Address {
  std::array<unsigned char, 16> bytes{};
  bool v4 = false;
};

std::optional<Address> parse_ip(std::string text) {
  if (text.size() > 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  Address a;
  if (::inet_pton(AF_INET, text.c_str(), a.bytes.data() + 12) == 1) {
    a.bytes[10] = a.bytes[11] = 0xff;
    a.v4 = true;
    return a;
  }
  if (::inet_pton(AF_INET6, text.c_str(), a.bytes.data()) == 1) return a;
  return std::nullopt;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  const auto ip = parse_ip(host);
  if (!ip) return false;
  if (ip->v4) return ip->bytes[12] == 127;
  static constexpr std::array<unsigned char, 16> kV6Loopback{0, 0, 0, 0, 0, 0, 0, 0,
                                                             0, 0, 0, 0, 0, 0, 0, 1};
  return ip->bytes == kV6Loopback;
}

bool in_cidr(const Address& ip, const std::string& cidr) {
  const auto slash = cidr.find('/');
  const auto net = parse_ip(cidr.substr(0, slash));
  if (!net || net->v4 != ip.v4) return false;
  int bits = 0;
  try {
    bits = std::stoi(cidr.substr(slash + 1));
  } catch (const std::exception&) {
    return false;
  }
  if (net->v4) bits += 96;
  if (bits < 0 || bits > 128) return false;
  for (int i = 0; i < 128 && i < bits; ++i) {
    const unsigned char mask = static_cast<unsigned char>(0x80 >> (i % 8));
    if ((ip.bytes[i / 8] & mask) != (net->bytes[i / 8] & mask)) return false;
  }
  return true;
}

// scheme, host (brackets stripped, lower case) and port of an http(s) URL.
struct HostPort {
  std::string scheme, host;
  int port = 0;
};

HostPort split_server(const std::string& server) {
  HostPort hp;
  const auto colon_slashes = server.find("://");
  hp.scheme = lowercase(server.substr(0, colon_slashes));
  std::string rest = colon_slashes == std::string::npos ? server : server.substr(colon_slashes + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const auto at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  std::string port;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    hp.host = rest.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    if (close != std::string::npos && close + 1 < rest.size() && rest[close + 1] == ':') {
      port = rest.substr(close + 2);
    }
  } else if (const auto c = rest.rfind(':'); c != std::string::npos) {
    hp.host = rest.substr(0, c);
    port = rest.substr(c + 1);
  } else {
    hp.host = rest;
  }
  hp.host = lowercase(hp.host);
  hp.port = hp.scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    try {
      hp.port = std::stoi(port);
    } catch (const std::exception&) {
    }
  }
  return hp;
}

}  // namespace

bool no_proxy_matches(const std::string& no_proxy, const std::string& host_in, int port) {
  const std::string host = lowercase(host_in);
  const auto host_ip = parse_ip(host);
  std::stringstream list(no_proxy);
  std::string item;
  while (std::getline(list, item, ',')) {
    std::string entry = lowercase(trim(item));
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (entry.find('/') != std::string::npos) {
      if (host_ip && in_cidr(*host_ip, entry)) return true;
      continue;
    }
    if (const auto ip = parse_ip(entry)) {
      if (host_ip && host_ip->bytes == ip->bytes) return true;
      continue;
    }
    // name[:port]; an IPv6 address with a port is written [addr]:port.
    int entry_port = 0;
    if (!entry.empty() && entry.front() == '[') {
      const auto close = entry.find(']');
      if (close == std::string::npos) continue;
      if (close + 2 < entry.size() && entry[close + 1] == ':') {
        entry_port = std::atoi(entry.c_str() + close + 2);
      }
      const auto ip = parse_ip(entry.substr(0, close + 1));
      if (ip && host_ip && ip->bytes == host_ip->bytes && (entry_port == 0 || entry_port == port)) {
        return true;
      }
      continue;
    }
    if (const auto c = entry.rfind(':'); c != std::string::npos) {
      entry_port = std::atoi(entry.c_str() + c + 1);
      entry = entry.substr(0, c);
    }
    if (entry_port != 0 && entry_port != port) continue;
    if (entry.starts_with("*.")) entry = entry.substr(1);
    if (entry.starts_with(".")) {
      // ".example.com": subdomains only.
      if (host.size() > entry.size() && host.ends_with(entry)) return true;
    } else if (host == entry || (host.size() > entry.size() && host.ends_with("." + entry))) {
      return true;  // "example.com": the name and its subdomains
    }
  }
  return false;
}

std::string proxy_for(const std::string& server, const std::string& proxy_url,
                      const Getenv& getenv) {
  const auto env = [&](const char* name) -> std::string {
    if (getenv) return getenv(name).value_or("");
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  const auto first_set = [&](const char* upper, const char* lower_name) {
    std::string v = env(upper);
    return v.empty() ? env(lower_name) : v;
  };
  const auto checked = [](std::string url, const std::string& from) {
    if (url.find("://") == std::string::npos) url = "http://" + url;
    if (lowercase(url).rfind("http://", 0) != 0) {
      throw ConfigError(from + ": the proxy must be an http:// proxy, got \"" + url +
                        "\" (https and socks5 proxies are not supported)");
    }
    return url;
  };
  if (!proxy_url.empty()) return checked(proxy_url, "proxy-url");
  const HostPort target = split_server(server);
  const bool https = target.scheme == "https";
  const char* name = https ? "HTTPS_PROXY" : "HTTP_PROXY";
  std::string proxy =
      https ? first_set("HTTPS_PROXY", "https_proxy") : first_set("HTTP_PROXY", "http_proxy");
  if (proxy.empty()) return {};
  // Go never proxies requests to the machine itself.
  if (is_loopback(target.host)) return {};
  if (no_proxy_matches(first_set("NO_PROXY", "no_proxy"), target.host, target.port)) return {};
  return checked(proxy, name);
}

}  // namespace kubeload::kube
