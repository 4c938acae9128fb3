// The admin's target policy as a pure decision on resolved addresses. Nothing
// here sends a packet: the addresses below are only compared with ranges.

#include "kubeload/target_policy.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include <string>
#include <vector>

namespace kubeload {
namespace {

struct Row {
  const char* address;  // as the resolver would return it
  bool allowed;
  const char* rule;  // part of the reason, for refusals
};

// Each row's address decided under `policy`: allowed, or refused naming its rule.
void expect_decisions(const TargetPolicy& policy, const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    const auto address = IpAddress::parse(row.address);
    ASSERT_TRUE(address) << row.address;
    const TargetDecision decision = decide_target(policy, *address);
    EXPECT_EQ(decision.allowed, row.allowed) << row.address << ": " << decision.reason;
    if (!row.allowed) {
      EXPECT_NE(decision.reason.find(row.rule), std::string::npos)
          << row.address << ": " << decision.reason;
    }
  }
}

TargetPolicy policy_with(std::vector<std::string> deny_extra, std::vector<std::string> allow) {
  TargetPolicy policy;
  for (const auto& text : deny_extra) policy.deny.push_back(*Cidr::parse(text));
  for (const auto& text : allow) policy.allow.push_back(*Cidr::parse(text));
  return policy;
}

TEST(TargetPolicy, DefaultDenialsTable) {
  const TargetPolicy policy;  // the defaults only
  const std::vector<Row> rows = {
      {"169.254.169.254", false, "169.254.0.0/16"},         // cloud metadata (AWS, GCP, Azure)
      {"169.254.0.1", false, "169.254.0.0/16"},             // link-local
      {"::ffff:169.254.169.254", false, "169.254.0.0/16"},  // IPv4-mapped IPv6
      {"::ffff:a9fe:a9fe", false, "169.254.0.0/16"},        // the same, in hex
      {"fd00:ec2::254", false, "fd00:ec2::254/128"},        // AWS metadata over IPv6
      {"100.100.100.200", false, "100.100.100.200/32"},     // Alibaba Cloud metadata
      {"::ffff:100.100.100.200", false, "100.100.100.200/32"},
      {"168.63.129.16", false, "168.63.129.16/32"},  // Azure WireServer
      {"100.100.100.201", true, ""},                 // its neighbour (a CGNAT pod range)
      {"168.63.129.17", true, ""},
      {"fe80::1", false, "fe80::/10"},
      {"127.0.0.1", false, "127.0.0.0/8"},
      {"127.255.0.9", false, "127.0.0.0/8"},
      {"::1", false, "::1/128"},
      {"::ffff:127.0.0.1", false, "127.0.0.0/8"},
      {"0.0.0.0", false, "0.0.0.0/8"},
      {"::", false, "::/128"},
      {"10.244.1.7", true, ""},       // a pod
      {"10.245.0.10", true, ""},      // a Service
      {"169.253.255.255", true, ""},  // just below the link-local range
      {"169.255.0.0", true, ""},      // just above
      {"128.0.0.1", true, ""},
      {"fd00:ec2::253", true, ""},
  };
  expect_decisions(policy, rows);
}

TEST(TargetPolicy, NumericHostFormsAreNotAddressesUntilResolved) {
  // http://2852039166/ and friends are host names to the parser; the resolver
  // turns them into 169.254.169.254, and that is what the worker decides on.
  for (const char* text : {"2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518",
                           "169.254.169.254.", "[::1]", ""}) {
    EXPECT_FALSE(IpAddress::parse(text)) << text;
  }
  EXPECT_EQ(IpAddress::parse("::ffff:169.254.169.254")->to_string(), "169.254.169.254");
}

TEST(TargetPolicy, AdminRulesTable) {
  const TargetPolicy policy =
      policy_with({"10.96.0.1", "192.0.2.0/24"}, {"10.0.0.0/8", "2001:db8::/32"});
  const std::vector<Row> rows = {
      {"10.96.0.1", false, "10.96.0.1"},      // the API server's Service address
      {"192.0.2.10", false, "192.0.2.0/24"},  // denied before allow is looked at
      {"10.244.1.7", true, ""},
      {"2001:db8::5", true, ""},
      {"172.16.0.1", false, "none of the allowed"},
      {"2001:db9::5", false, "none of the allowed"},
      {"169.254.169.254", false, "169.254.0.0/16"},  // the defaults stay
  };
  expect_decisions(policy, rows);
}

// Issue 26: a denied pod behind an allowed cluster IP was reached, since the
// worker decided only the cluster IP and kube-proxy's DNAT did the rest.
TEST(TargetPolicy, ClusterAddressesOnlyAsDecidedWithWhatIsBehindThem) {
  TargetPolicy policy = policy_with({"10.244.1.5/32"}, {});
  policy.cluster_ranges = {*Cidr::parse("10.244.0.0/16"), *Cidr::parse("10.245.0.0/16")};
  policy.decided = {*parse_decided_destination("10.245.0.20=10.244.1.5,10.244.2.9"),
                    *parse_decided_destination("10.245.0.30=10.244.2.9,10.244.2.10"),
                    *parse_decided_destination("10.244.2.11=")};
  const std::vector<Row> rows = {
      {"10.245.0.20", false,
       "sends to the endpoint 10.244.1.5, which is refused: 10.244.1.5 is "
       "denied by 10.244.1.5/32"},
      {"10.245.0.30", true, ""},
      {"10.244.2.11", true, ""},  // a headless Service's pod, decided directly
      {"10.244.2.9", false, "is in the cluster's range 10.244.0.0/16 and is not the target"},
      {"10.245.0.1", false, "cluster's range 10.245.0.0/16"},  // another Service's address
      {"::ffff:10.245.0.99", false, "cluster's range 10.245.0.0/16"},
      {"10.244.1.5", false, "denied by 10.244.1.5/32"},  // the deny list comes first
      {"192.0.2.7", true, ""},                           // outside the cluster: lists only
  };
  expect_decisions(policy, rows);
  // Without cluster ranges the decided list changes nothing but the endpoints
  // behind an address are not looked at: the ranges are what turn it on.
  policy.cluster_ranges.clear();
  EXPECT_TRUE(decide_target(policy, *IpAddress::parse("10.245.0.1")).allowed);
  // The allow list holds behind a cluster IP too.
  TargetPolicy allowing = policy_with({}, {"10.245.0.0/16", "10.244.2.0/24"});
  allowing.cluster_ranges = {*Cidr::parse("10.244.0.0/14")};
  allowing.decided = {*parse_decided_destination("10.245.0.20=10.244.2.9,10.244.3.4")};
  const TargetDecision outside = decide_target(allowing, *IpAddress::parse("10.245.0.20"));
  EXPECT_FALSE(outside.allowed);
  EXPECT_NE(outside.reason.find("10.244.3.4 is in none of the allowed ranges"), std::string::npos)
      << outside.reason;
}

TEST(TargetPolicy, DecidedDestinationSyntax) {
  const auto both = parse_decided_destination("10.245.0.20=10.244.1.5,fd00::7");
  ASSERT_TRUE(both);
  EXPECT_EQ(format_decided_destination(*both), "10.245.0.20=10.244.1.5,fd00::7");
  ASSERT_TRUE(parse_decided_destination("10.244.2.11="));
  EXPECT_TRUE(parse_decided_destination("10.244.2.11=")->behind.empty());
  for (const char* bad :
       {"", "10.245.0.20", "=10.244.1.5", "nginx=10.244.1.5", "10.245.0.20=10.244.1.5,",
        "10.245.0.20=10.244.1.5,,10.244.1.6", "10.245.0.20=10.244.1.0/24"}) {
    EXPECT_FALSE(parse_decided_destination(bad)) << bad;
  }
}

// Issue 26 item 1: kubelets (10250) and etcd were valid targets.
TEST(TargetPolicy, ControlPlanePortsAreDeniedOnEveryAddress) {
  const TargetPolicy policy;
  for (uint16_t port : {2379, 2380, 10250, 10255, 10257, 10259}) {
    const TargetDecision decision = decide_target(policy, *IpAddress::parse("10.246.0.1"), port);
    EXPECT_FALSE(decision.allowed) << port;
    EXPECT_NE(decision.reason.find("port " + std::to_string(port) + " is a control-plane port"),
              std::string::npos)
        << decision.reason;
  }
  for (uint16_t port : {80, 443, 8080, 10249, 10251, 2378}) {
    EXPECT_TRUE(decide_target(policy, *IpAddress::parse("10.246.0.1"), port).allowed) << port;
  }
  // The address is still decided on an allowed port.
  EXPECT_FALSE(decide_target(policy, *IpAddress::parse("169.254.169.254"), 80).allowed);
}

TEST(TargetPolicy, DeniedHostNamesWhateverTheirCaseOrFinalDot) {
  TargetPolicy policy;
  policy.deny_hosts = {"metadata.google.internal", "Instance-Data"};
  struct Row {
    const char* host;
    bool allowed;
  };
  for (const Row& row :
       {Row{"metadata.google.internal", false}, Row{"METADATA.Google.Internal", false},
        Row{"metadata.google.internal.", false}, Row{"instance-data", false},
        Row{"instance-data.", false}, Row{"metadata.google.internal.example", true},
        Row{"google.internal", true}, Row{"nginx.shop.svc", true}, Row{"", true}}) {
    const TargetDecision decision = decide_host(policy, row.host);
    EXPECT_EQ(decision.allowed, row.allowed) << row.host;
    if (!row.allowed) {
      EXPECT_NE(decision.reason.find("is denied"), std::string::npos);
    }
  }
  // No name is denied by default.
  EXPECT_TRUE(decide_host(TargetPolicy{}, "metadata.google.internal").allowed);
}

TEST(TargetPolicy, HostNameSyntax) {
  for (const char* good : {"metadata", "metadata.google.internal", "a-b_c.example.", "10.0.0.1"}) {
    EXPECT_TRUE(is_host_name(good)) << good;
  }
  for (const char* bad : {"", "http://x", "x y", "x/y", "x:80", "user@x", "ä.example"}) {
    EXPECT_FALSE(is_host_name(bad)) << bad;
  }
  EXPECT_FALSE(is_host_name(std::string(254, 'a')));
}

TEST(TargetPolicy, CidrParsing) {
  EXPECT_EQ(Cidr::parse("10.0.0.0/8")->prefix, 8);
  EXPECT_EQ(Cidr::parse("10.0.0.1")->prefix, 32);
  EXPECT_EQ(Cidr::parse("fd00::/8")->prefix, 8);
  EXPECT_EQ(Cidr::parse("::1")->prefix, 128);
  EXPECT_TRUE(Cidr::parse("0.0.0.0/0")->contains(*IpAddress::parse("8.8.8.8")));
  EXPECT_FALSE(Cidr::parse("0.0.0.0/0")->contains(*IpAddress::parse("2001:db8::1")));
  for (const char* bad : {"10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8x",
                          "10.0.0/8", "host/8", "/8", "10.0.0.0/0008"}) {
    EXPECT_FALSE(Cidr::parse(bad)) << bad;
  }
}

// The chart's admission policy denies what the worker denies: the same list,
// written in the template, compared here.
// The quoted items of the admission policy's line that defines `variable`
// (`{{- $deny := list "..." ...}}`).
std::set<std::string> chart_list(const std::string& variable) {
  std::ifstream in(std::string(KUBELOAD_SOURCE_DIR) +
                   "/charts/kubeload/templates/admission-policy.yaml");
  EXPECT_TRUE(in) << "admission-policy.yaml";
  std::string line, listed;
  while (std::getline(in, line)) {
    if (line.find(variable + " := list") != std::string::npos) listed = line;
  }
  EXPECT_FALSE(listed.empty()) << variable;
  std::set<std::string> items;
  for (size_t at = listed.find('"'); at != std::string::npos; at = listed.find('"', at)) {
    const size_t end = listed.find('"', at + 1);
    items.insert(listed.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  return items;
}

TEST(TargetPolicy, TheChartDeniesTheSameDefaults) {
  std::set<std::string> in_code;
  for (const Cidr& range : default_denied_ranges()) in_code.insert(range.text);
  EXPECT_EQ(chart_list("$deny"), in_code);
}

TEST(TargetPolicy, TheChartDeniesTheSameControlPlanePorts) {
  std::set<std::string> in_code;
  for (const uint16_t port : default_denied_ports()) in_code.insert(std::to_string(port));
  EXPECT_EQ(chart_list("$deniedPorts"), in_code);
}

}  // namespace
}  // namespace kubeload
