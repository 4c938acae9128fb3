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
#include <set>
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
  bool operator==(const IpAddress&) const = default;
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

// The ports of the control plane's own servers, never a load target on any
// address: the kubelet's API (10250) and read-only port (10255), etcd's
// client and peer ports (2379, 2380), the controller manager's (10257) and
// the scheduler's (10259). Where those live (every node, the control-plane
// nodes, sometimes pods) differs by cluster; their ports do not.
std::set<uint16_t> default_denied_ports();

// An in-cluster address the operator decided for this run (issue 26): the
// target Service's cluster IP with the endpoints kube-proxy sends its traffic
// to (`behind`), or an endpoint reached directly (a headless Service's pod:
// `behind` empty). The worker only knows the address it connects to; what is
// behind a cluster IP is decided here, so a denied pod behind an allowed
// Service is refused.
struct DecidedDestination {
  IpAddress address;
  std::vector<IpAddress> behind;
};

struct TargetPolicy {
  // Checked first: a match is refused.
  std::vector<Cidr> deny = default_denied_ranges();
  // When not empty, an address must be in one of these as well.
  std::vector<Cidr> allow;
  // Host names refused before they are resolved (the admin's denyHosts),
  // compared as DNS compares them: without case and without the root's dot.
  std::vector<std::string> deny_hosts;
  // Refused on every address (default_denied_ports()).
  std::set<uint16_t> deny_ports = default_denied_ports();
  // The cluster's own ranges (pods, Services, and nodes where the admin lists
  // them): an address in one is allowed only when it is one of `decided`,
  // since what a cluster address leads to (DNAT, another team's pod) is
  // known only to whoever read the cluster. Empty: not checked.
  std::vector<Cidr> cluster_ranges;
  std::vector<DecidedDestination> decided;
};

struct TargetDecision {
  bool allowed = false;
  std::string reason;  // for a refusal: which rule, e.g. "denied by 169.254.0.0/16"
};

// An address as the socket would use it: the deny list, then the cluster's
// ranges (what a decided destination sends to is decided as well), then the
// allow list.
TargetDecision decide_target(const TargetPolicy& policy, const IpAddress& address);
// The same, and the port (deny_ports).
TargetDecision decide_target(const TargetPolicy& policy, const IpAddress& address, uint16_t port);
// "10.245.0.20=10.244.1.5,10.244.2.9" (a destination and what is behind it;
// nothing after '=' for a direct one): what the worker's
// --decided-destination takes. nullopt when it is not that.
std::optional<DecidedDestination> parse_decided_destination(std::string_view text);
std::string format_decided_destination(const DecidedDestination& destination);
// Whether `text` can be a DNS host name (letters, digits, '-', '_', '.', at
// most 253 characters): what a deny-host flag accepts.
bool is_host_name(std::string_view text);
// The name as written in the target URL; its addresses are decided after.
TargetDecision decide_host(const TargetPolicy& policy, std::string_view host);

}  // namespace kubeload
