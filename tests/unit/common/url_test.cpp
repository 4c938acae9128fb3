#include "kubeload/url.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "kubeload/names.hpp"
#include "kubeload/spec.hpp"
#include "loadgen/engine/plan.hpp"

namespace kubeload {
namespace {

const HttpUrl* parts(const std::variant<HttpUrl, std::string>& parsed) {
  return std::get_if<HttpUrl>(&parsed);
}

TEST(HttpUrl, SplitsATargetIntoItsParts) {
  auto parsed = parse_http_url("HTTPS://Example.test:8443/a/b?x=1#frag");
  ASSERT_TRUE(parts(parsed)) << std::get<std::string>(parsed);
  EXPECT_EQ(parts(parsed)->scheme, "https");
  EXPECT_EQ(parts(parsed)->host, "Example.test");
  EXPECT_EQ(parts(parsed)->port, 8443);
  EXPECT_EQ(parts(parsed)->target, "/a/b?x=1");

  parsed = parse_http_url("http://[::1]/");
  ASSERT_TRUE(parts(parsed));
  EXPECT_EQ(parts(parsed)->host, "::1");
  EXPECT_EQ(parts(parsed)->port, 80);

  parsed = parse_http_url("https://h?q");
  ASSERT_TRUE(parts(parsed));
  EXPECT_EQ(parts(parsed)->port, 443);
  EXPECT_EQ(parts(parsed)->target, "/?q");
}

TEST(HttpUrl, SaysWhyAndNeverEchoesCredentials) {
  EXPECT_EQ(std::get<std::string>(parse_http_url("ftp://x/")),
            "must be an http:// or https:// URL with a host, got \"ftp://x/\"");
  EXPECT_EQ(std::get<std::string>(parse_http_url("http://h:99999/")),
            "invalid port \"99999\" in \"http://h:99999/\"");
  const std::string secret = std::get<std::string>(parse_http_url("http://admin:hunter2@h/"));
  EXPECT_EQ(secret.find("hunter2"), std::string::npos) << secret;
}

// The spec (spec.target.url) and loadgen (the command line, --target, the
// worker's resolved target) accept exactly the same URLs: one grammar.
TEST(HttpUrl, SpecAndLoadgenAgreeOnEveryUrl) {
  for (const std::string url :
       {"http://127.0.0.1:8080/x", "HTTP://h", "https://h:443/p?q#f", "http://[::1]:81/",
        "http://a_b.c-d/", "ftp://x/", "127.0.0.1:80", "http://:80/", "http://h:0/",
        "http://h:99999/", "http://h:8x/", "http://u@h/", "http://h:/", "http://h /",
        "http://[::1/", "http://[::1]x/", "http://a:b:80/", "http://h\t/", "http://exa mple/"}) {
    const ParsedLoadTest spec = parse_loadtest(
        "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: t}\n"
        "spec: {target: {url: '" +
        url + "'}, load: {requests: 1}}\n");
    std::string error;
    const bool loadgen_accepts = loadgen::parse_target(url, error).has_value();
    EXPECT_EQ(spec.ok(), loadgen_accepts) << url << ": " << error;
    EXPECT_EQ(loadgen_accepts, parts(parse_http_url(url)) != nullptr) << url;
  }
}

TEST(Names, KubernetesRules) {
  EXPECT_TRUE(is_dns1123_label("web-1"));
  EXPECT_FALSE(is_dns1123_label("-web"));
  EXPECT_FALSE(is_dns1123_label(std::string(64, 'a')));
  EXPECT_TRUE(is_dns1035_label("web"));
  EXPECT_FALSE(is_dns1035_label("1web"));
  EXPECT_TRUE(is_dns1123_subdomain("a.b-c.d"));
  EXPECT_FALSE(is_dns1123_subdomain("a..b"));
  EXPECT_TRUE(is_qualified_name("kubeload.dev/test"));
  EXPECT_FALSE(is_qualified_name("kubeload.dev/"));
  EXPECT_TRUE(is_label_value(""));
  EXPECT_FALSE(is_label_value("a b"));
  EXPECT_TRUE(is_request_name("cart_v2"));
  EXPECT_FALSE(is_request_name("Cart"));
  EXPECT_TRUE(is_http_method("PATCH"));
  EXPECT_FALSE(is_http_method("get"));
  EXPECT_TRUE(is_secret_key("tls.crt"));
  EXPECT_FALSE(is_secret_key("a/b"));
}

}  // namespace
}  // namespace kubeload
