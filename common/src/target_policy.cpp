#include "kubeload/target_policy.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "kubeload/text.hpp"

namespace kubeload {
namespace {

constexpr std::array<uint8_t, 12> kV4MappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

// "Metadata.Google.Internal." and "metadata.google.internal" name one host.
std::string dns_name(std::string_view host) {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  return lowercase(host);
}

}  // namespace

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  if (text.size() > 64) return std::nullopt;
  const std::string owned(text);
  IpAddress address;
  // inet_pton accepts only the canonical dotted quad: "2852039166" or "0x7f.1"
  // are host names here, and what they resolve to is what gets decided.
  if (inet_pton(AF_INET, owned.c_str(), address.bytes.data()) == 1) {
    address.v4 = true;
    return address;
  }
  if (inet_pton(AF_INET6, owned.c_str(), address.bytes.data()) == 1) {
    if (std::equal(kV4MappedPrefix.begin(), kV4MappedPrefix.end(), address.bytes.begin())) {
      std::copy(address.bytes.begin() + 12, address.bytes.end(), address.bytes.begin());
      std::fill(address.bytes.begin() + 4, address.bytes.end(), 0);
      address.v4 = true;
    } else {
      address.v4 = false;
    }
    return address;
  }
  return std::nullopt;
}

std::string IpAddress::to_string() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  inet_ntop(v4 ? AF_INET : AF_INET6, bytes.data(), buffer, sizeof buffer);
  return buffer;
}

std::optional<Cidr> Cidr::parse(std::string_view text) {
  Cidr cidr;
  cidr.text = std::string(text);
  const auto slash = text.find('/');
  const auto address = IpAddress::parse(text.substr(0, slash));
  if (!address) return std::nullopt;
  cidr.network = *address;
  const int max_prefix = address->v4 ? 32 : 128;
  if (slash == std::string_view::npos) {
    cidr.prefix = max_prefix;
  } else {
    const std::string_view digits = text.substr(slash + 1);
    if (digits.empty() || digits.size() > 3 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    cidr.prefix = std::stoi(std::string(digits));
    if (cidr.prefix > max_prefix) return std::nullopt;
  }
  return cidr;
}

bool Cidr::contains(const IpAddress& address) const {
  if (address.v4 != network.v4) return false;
  int bits = prefix;
  for (size_t i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((address.bytes[i] & mask) != (network.bytes[i] & mask)) return false;
  }
  return true;
}

std::vector<Cidr> default_denied_ranges() {
  std::vector<Cidr> ranges;
  // The chart's admission policy denies the same list
  // (charts/kubeload/templates/admission-policy.yaml; a unit test compares).
  for (const char* text : {"169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128", "100.100.100.200/32",
                           "168.63.129.16/32", "127.0.0.0/8", "::1/128", "0.0.0.0/8", "::/128"}) {
    ranges.push_back(*Cidr::parse(text));
  }
  return ranges;
}

std::set<uint16_t> default_denied_ports() {
  return {2379, 2380, 10250, 10255, 10257, 10259};
}

namespace {

// The deny and allow lists alone.
TargetDecision decide_listed(const TargetPolicy& policy, const IpAddress& address) {
  for (const Cidr& denied : policy.deny) {
    if (denied.contains(address)) {
      return {false, address.to_string() + " is denied by " + denied.text};
    }
  }
  if (!policy.allow.empty() &&
      std::none_of(policy.allow.begin(), policy.allow.end(),
                   [&](const Cidr& allowed) { return allowed.contains(address); })) {
    return {false, address.to_string() + " is in none of the allowed ranges"};
  }
  return {true, ""};
}

}  // namespace

TargetDecision decide_target(const TargetPolicy& policy, const IpAddress& address) {
  TargetDecision listed = decide_listed(policy, address);
  if (!listed.allowed) return listed;
  const auto range = std::find_if(policy.cluster_ranges.begin(), policy.cluster_ranges.end(),
                                  [&](const Cidr& cidr) { return cidr.contains(address); });
  if (range == policy.cluster_ranges.end()) return listed;
  const auto decided =
      std::find_if(policy.decided.begin(), policy.decided.end(),
                   [&](const DecidedDestination& d) { return d.address == address; });
  if (decided == policy.decided.end()) {
    return {false, address.to_string() + " is in the cluster's range " + range->text +
                       " and is not the target Service's (the operator decides what a cluster "
                       "address leads to only for the Service a LoadTest names)"};
  }
  for (const IpAddress& behind : decided->behind) {
    // Behind a cluster IP is where kube-proxy sends the packets: the deny and
    // allow lists hold there too.
    if (TargetDecision endpoint = decide_listed(policy, behind); !endpoint.allowed) {
      return {false, address.to_string() + " sends to the endpoint " + behind.to_string() +
                         ", which is refused: " + endpoint.reason};
    }
  }
  return listed;
}

TargetDecision decide_target(const TargetPolicy& policy, const IpAddress& address, uint16_t port) {
  if (policy.deny_ports.contains(port)) {
    return {false, "port " + std::to_string(port) +
                       " is a control-plane port (kubelet, etcd, controller manager or "
                       "scheduler), denied on every address"};
  }
  return decide_target(policy, address);
}

std::optional<DecidedDestination> parse_decided_destination(std::string_view text) {
  const auto equals = text.find('=');
  if (equals == std::string_view::npos) return std::nullopt;
  DecidedDestination destination;
  const auto address = IpAddress::parse(text.substr(0, equals));
  if (!address) return std::nullopt;
  destination.address = *address;
  std::string_view rest = text.substr(equals + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const auto behind = IpAddress::parse(rest.substr(0, comma));
    if (!behind) return std::nullopt;
    destination.behind.push_back(*behind);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
    if (rest.empty()) return std::nullopt;  // "a=b," is a typo, not a list
  }
  return destination;
}

std::string format_decided_destination(const DecidedDestination& destination) {
  std::string text = destination.address.to_string() + "=";
  for (size_t i = 0; i < destination.behind.size(); ++i) {
    if (i > 0) text += ",";
    text += destination.behind[i].to_string();
  }
  return text;
}

bool is_host_name(std::string_view text) {
  return !text.empty() && text.size() <= 253 && std::all_of(text.begin(), text.end(), [](char c) {
    return is_alnum(c) || c == '-' || c == '_' || c == '.';
  });
}

TargetDecision decide_host(const TargetPolicy& policy, std::string_view host) {
  const std::string name = dns_name(host);
  for (const std::string& denied : policy.deny_hosts) {
    if (dns_name(denied) == name) return {false, "host name " + denied + " is denied"};
  }
  return {true, ""};
}

}  // namespace kubeload
