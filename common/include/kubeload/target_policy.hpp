#pragma once
// Where load may go: the admin's allowed and denied destinations, decided on
// the address a connection would actually use (after DNS), so that a host
// name, a numeric form such as http://2852039166/ or an IPv4-mapped IPv6
// address cannot get around a rule. A pure function: the worker asks it for
// every resolved address before it connects anywhere, and the tests ask it
// for addresses nobody may send to.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kubeload {

// An IPv4 or IPv6 address. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are
// stored as the IPv4 address they carry: the kernel sends them to it.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};  // IPv4 in the first 4
  bool v4 = true;
  static std::optional<IpAddress> parse(std::string_view text);
  std::string to_string() const;
};

struct Cidr {
  IpAddress network;
  int prefix = 0;
  std::string text;  // as written, for messages
  // "10.0.0.0/8", "fd00:ec2::254/128", or a bare address (a /32 or /128).
  static std::optional<Cidr> parse(std::string_view text);
  bool contains(const IpAddress& address) const;
};

// The ranges no load may reach unless the admin allows them explicitly:
// link-local (cloud metadata lives there: 169.254.169.254, fd00:ec2::254),
// the clouds' metadata addresses outside it (Alibaba Cloud's 100.100.100.200,
// Azure's WireServer 168.63.129.16), loopback, and the unspecified addresses.
std::vector<Cidr> default_denied_ranges();

struct TargetPolicy {
  // Checked first: a match is refused.
  std::vector<Cidr> deny = default_denied_ranges();
  // When not empty, an address must be in one of these as well.
  std::vector<Cidr> allow;
  // Host names refused before they are resolved (the admin's denyHosts),
  // compared as DNS compares them: without case and without the root's dot.
  std::vector<std::string> deny_hosts;
};

struct TargetDecision {
  bool allowed = false;
  std::string reason;  // for a refusal: which rule, e.g. "denied by 169.254.0.0/16"
};

TargetDecision decide_target(const TargetPolicy& policy, const IpAddress& address);
// Whether `text` can be a DNS host name (letters, digits, '-', '_', '.', at
// most 253 characters): what a deny-host flag accepts.
bool is_host_name(std::string_view text);
// The name as written in the target URL; its addresses are decided after.
TargetDecision decide_host(const TargetPolicy& policy, std::string_view host);

}  // namespace kubeload
