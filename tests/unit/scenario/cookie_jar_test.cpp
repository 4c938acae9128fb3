#include "common/scenario/cookie_jar.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "allocation_counter.hpp"

namespace kubeload::scenario {
namespace {

constexpr std::int64_t kNow = 1796464800000;  // 2026-12-05 10:00:00 UTC
constexpr std::int64_t kSecond = 1000;

// A jar fed Set-Cookie fields as a response to `path` at kNow.
void set_cookies(CookieJar& jar, std::vector<std::string_view> set_cookie_values,
                 std::string_view path = "/", std::int64_t now = kNow) {
  std::vector<Header> headers;
  for (std::string_view value : set_cookie_values) headers.push_back(Header{"Set-Cookie", value});
  jar.update(headers, path, now);
}

std::string cookie_header(const CookieJar& jar, std::string_view path = "/", bool secure = false,
                          std::int64_t now = kNow) {
  std::string out;
  jar.append_cookie_header(path, secure, now, out);
  return out;
}

// ---- Section 5.1.1: dates ----

TEST(CookieDateTest, ReadsTheThreeHttpDateFormats) {
  constexpr std::int64_t want = 784111777 * kSecond;  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(parse_cookie_date("Sun, 06 Nov 1994 08:49:37 GMT"), want);   // IMF-fixdate
  EXPECT_EQ(parse_cookie_date("Sunday, 06-Nov-94 08:49:37 GMT"), want);  // RFC 850
  EXPECT_EQ(parse_cookie_date("Sun Nov  6 08:49:37 1994"), want);        // asctime
}

TEST(CookieDateTest, ReadsWhatServersMakeOfThem) {
  constexpr std::int64_t want = 784111777 * kSecond;
  EXPECT_EQ(parse_cookie_date("06 nov 1994 8:49:37"), want);  // any order, any case
  EXPECT_EQ(parse_cookie_date("Sun, 06-November-1994 08:49:37 UTC"), want);
  EXPECT_EQ(parse_cookie_date("1994 Nov 6, 8:49:37"), want);
  EXPECT_EQ(parse_cookie_date("Thu, 29 Feb 2024 12:00:00 GMT"), 1709208000 * kSecond);
}

TEST(CookieDateTest, TwoDigitYearsAreThe1900sFrom70AndThe2000sBelow) {
  EXPECT_EQ(parse_cookie_date("Thu, 01 Jan 70 00:00:00 GMT"), 0);
  EXPECT_EQ(parse_cookie_date("Tue, 01 Jan 69 00:00:00 GMT"), 3124224000 * kSecond);
  EXPECT_EQ(parse_cookie_date("Mon, 01 Jan 1601 00:00:00 GMT"), -11644473600 * kSecond);
}

TEST(CookieDateTest, RefusesWhatIsNoDate) {
  for (const char* text :
       {"", "tomorrow", "Sun, 06 Nov 1994 GMT", "Sun, 06 1994 08:49:37 GMT",
        "Sun, Nov 1994 08:49:37 GMT", "Sun, 06 Nov 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 32 Nov 1994 08:49:37 GMT", "Mon, 30 Feb 2026 08:49:37 GMT",
        "Thu, 29 Feb 2023 08:49:37 GMT", "Sun, 06 Nov 1600 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:60 GMT", "Sun, 06 Nov 19945 08:49:37 GMT",
        "Sun, 06 Nov 1994 108:49:37 GMT", "0"}) {
    EXPECT_EQ(parse_cookie_date(text), std::nullopt) << text;
  }
}

// ---- Section 5.1.4: paths ----

TEST(CookiePathTest, DefaultPathIsTheRequestPathUpToItsLastSlash) {
  EXPECT_EQ(default_cookie_path(""), "/");
  EXPECT_EQ(default_cookie_path("/"), "/");
  EXPECT_EQ(default_cookie_path("/login"), "/");
  EXPECT_EQ(default_cookie_path("/shop/login"), "/shop");
  EXPECT_EQ(default_cookie_path("/shop/cart/"), "/shop/cart");
  EXPECT_EQ(default_cookie_path("/shop/login?next=/a/b/c"), "/shop");
  EXPECT_EQ(default_cookie_path("/login?next=/a/b"), "/");
  EXPECT_EQ(default_cookie_path("login/x"), "/");  // not an absolute path
}

TEST(CookiePathTest, PathMatchIsByWholeSegments) {
  EXPECT_TRUE(cookie_path_matches("/shop", "/shop"));
  EXPECT_TRUE(cookie_path_matches("/shop/cart", "/shop"));
  EXPECT_TRUE(cookie_path_matches("/shop/", "/shop/"));
  EXPECT_TRUE(cookie_path_matches("/shop/cart", "/shop/"));
  EXPECT_TRUE(cookie_path_matches("/anything", "/"));
  EXPECT_TRUE(cookie_path_matches("", "/"));
  EXPECT_TRUE(cookie_path_matches("/shop?cart=1", "/shop"));
  EXPECT_TRUE(cookie_path_matches("/shop#top", "/shop"));
  EXPECT_FALSE(cookie_path_matches("/shopping", "/shop"));
  EXPECT_FALSE(cookie_path_matches("/", "/shop"));
  EXPECT_FALSE(cookie_path_matches("/Shop", "/shop"));  // paths are case-sensitive
  EXPECT_FALSE(cookie_path_matches("/x?/shop", "/shop"));
}

// ---- The jar ----

TEST(CookieJarTest, EmptyJarAppendsNothing) {
  CookieJar jar;
  std::string out = "GET / HTTP/1.1\r\n";
  jar.append_cookie_header("/", true, kNow, out);
  EXPECT_EQ(out, "GET / HTTP/1.1\r\n");
  EXPECT_EQ(jar.size(), 0u);
}

TEST(CookieJarTest, SendsStoredCookiesInOneFieldAppendedToTheRequest) {
  CookieJar jar;
  set_cookies(jar, {"theme=dark", "session=alice.1; HttpOnly"});
  std::string out = "GET /items HTTP/1.1\r\n";
  jar.append_cookie_header("/items", false, kNow, out);
  EXPECT_EQ(out, "GET /items HTTP/1.1\r\nCookie: theme=dark; session=alice.1\r\n");
}

TEST(CookieJarTest, ReadsSetCookieInAnyCaseAndNothingElse) {
  CookieJar jar;
  const std::vector<Header> headers{{"set-cookie", "a=1"},
                                    {"SET-COOKIE", "b=2"},
                                    {"Cookie", "c=3"},
                                    {"Set-Cookie2", "d=4"},
                                    {"X-Set-Cookie", "e=5"}};
  jar.update(headers, "/", kNow);
  EXPECT_EQ(cookie_header(jar), "Cookie: a=1; b=2\r\n");
}

TEST(CookieJarTest, NameAndValueAreTrimmedAndQuotesKept) {
  CookieJar jar;
  set_cookies(jar, {" \tname = \"a b\" \t;Path=/", "empty=", "eq=a=b=c"});
  EXPECT_EQ(cookie_header(jar), "Cookie: name=\"a b\"; empty=; eq=a=b=c\r\n");
}

TEST(CookieJarTest, MalformedSetCookieFieldsAreIgnored) {
  CookieJar jar;
  set_cookies(jar, {"novalue", "=nameless", "  =x", "", ";a=1", "bad=line\r\nX-Injected: 1",
                    "nul=a\x01b", "del=\x7f"});
  EXPECT_EQ(jar.size(), 0u);
  EXPECT_EQ(cookie_header(jar), "");
  set_cookies(jar, {"tab=a\tb"});  // HTAB is no control character here
  EXPECT_EQ(cookie_header(jar), "Cookie: tab=a\tb\r\n");
}

TEST(CookieJarTest, DefaultPathComesFromTheRequestThatSetTheCookie) {
  CookieJar jar;
  set_cookies(jar, {"cart=7"}, "/shop/cart/add?item=3");
  EXPECT_EQ(cookie_header(jar, "/shop/cart"), "Cookie: cart=7\r\n");
  EXPECT_EQ(cookie_header(jar, "/shop/cart/checkout"), "Cookie: cart=7\r\n");
  EXPECT_EQ(cookie_header(jar, "/shop"), "");
  EXPECT_EQ(cookie_header(jar, "/shop/cartoon"), "");
}

TEST(CookieJarTest, PathAttributeWinsUnlessItIsNotAnAbsolutePath) {
  CookieJar jar;
  set_cookies(jar, {"a=1; Path=/api", "b=2; path=relative", "c=3; Path=", "d=4; Path=/x; Path=/y"},
              "/shop/login");
  EXPECT_EQ(cookie_header(jar, "/api/items"), "Cookie: a=1\r\n");
  EXPECT_EQ(cookie_header(jar, "/apis"), "");
  EXPECT_EQ(cookie_header(jar, "/shop/cart"), "Cookie: b=2; c=3\r\n");  // the default, /shop
  EXPECT_EQ(cookie_header(jar, "/y"), "Cookie: d=4\r\n");               // the last Path attribute
  EXPECT_EQ(cookie_header(jar, "/x"), "");
}

TEST(CookieJarTest, LongerPathsFirstThenOldestFirst) {
  CookieJar jar;
  set_cookies(jar, {"root=1; Path=/", "deep=2; Path=/shop/cart", "mid=3; Path=/shop",
                    "root2=4; Path=/", "mid2=5; Path=/shop"});
  EXPECT_EQ(cookie_header(jar, "/shop/cart/1"),
            "Cookie: deep=2; mid=3; mid2=5; root=1; root2=4\r\n");
}

TEST(CookieJarTest, SameNameAndPathReplacesKeepingItsPlace) {
  CookieJar jar;
  set_cookies(jar, {"a=1", "b=2"});
  set_cookies(jar, {"a=3"});
  EXPECT_EQ(jar.size(), 2u);
  EXPECT_EQ(cookie_header(jar), "Cookie: a=3; b=2\r\n");
}

TEST(CookieJarTest, SameNameOnAnotherPathIsAnotherCookie) {
  CookieJar jar;
  set_cookies(jar, {"id=root; Path=/", "id=shop; Path=/shop"});
  EXPECT_EQ(jar.size(), 2u);
  EXPECT_EQ(cookie_header(jar, "/shop/x"), "Cookie: id=shop; id=root\r\n");
  EXPECT_EQ(cookie_header(jar, "/items"), "Cookie: id=root\r\n");
}

TEST(CookieJarTest, MaxAgeSetsTheExpiry) {
  CookieJar jar;
  set_cookies(jar, {"a=1; Max-Age=60", "b=2"});
  EXPECT_EQ(cookie_header(jar, "/", false, kNow + 59 * kSecond), "Cookie: a=1; b=2\r\n");
  EXPECT_EQ(cookie_header(jar, "/", false, kNow + 60 * kSecond), "Cookie: b=2\r\n");
}

TEST(CookieJarTest, MaxAgeOfZeroOrLessDeletes) {
  CookieJar jar;
  set_cookies(jar, {"a=1", "b=2", "c=3"});
  set_cookies(jar, {"a=gone; Max-Age=0", "b=gone; max-age=-1", "new=x; Max-Age=0"});
  EXPECT_EQ(jar.size(), 1u);
  EXPECT_EQ(cookie_header(jar), "Cookie: c=3\r\n");
}

TEST(CookieJarTest, DeletionMatchesNameAndPath) {
  CookieJar jar;
  set_cookies(jar, {"a=1; Path=/shop"});
  set_cookies(jar, {"a=; Max-Age=0; Path=/"});
  EXPECT_EQ(cookie_header(jar, "/shop"), "Cookie: a=1\r\n");
  set_cookies(jar, {"a=; Max-Age=0"}, "/shop/login");  // default path /shop
  EXPECT_EQ(cookie_header(jar, "/shop"), "");
}

TEST(CookieJarTest, InvalidMaxAgeIsIgnored) {
  CookieJar jar;
  set_cookies(jar, {"a=1; Max-Age=1x", "b=2; Max-Age=", "c=3; Max-Age=+5",
                    "d=4; Max-Age=60; Max-Age=oops"});
  EXPECT_EQ(cookie_header(jar, "/", false, kNow + 3600 * kSecond), "Cookie: a=1; b=2; c=3\r\n");
}

TEST(CookieJarTest, HugeMaxAgeMeansForever) {
  CookieJar jar;
  set_cookies(jar, {"a=1; Max-Age=99999999999999999999999999"});
  EXPECT_EQ(cookie_header(jar, "/", false, std::numeric_limits<std::int64_t>::max() - 1),
            "Cookie: a=1\r\n");
}

TEST(CookieJarTest, ExpiresSetsTheExpiryAndInThePastDeletes) {
  CookieJar jar;
  set_cookies(jar, {"later=1; Expires=Sat, 05 Dec 2026 10:01:00 GMT",
                    "old=2; Expires=Sat, 05 Dec 2026 09:59:59 GMT",
                    "bad=3; Expires=someday"});  // not a date: a session cookie
  EXPECT_EQ(cookie_header(jar), "Cookie: later=1; bad=3\r\n");
  EXPECT_EQ(cookie_header(jar, "/", false, kNow + 60 * kSecond), "Cookie: bad=3\r\n");
  set_cookies(jar, {"bad=; expires=Thu, 01 Jan 1970 00:00:00 GMT"});
  EXPECT_EQ(cookie_header(jar), "Cookie: later=1\r\n");
}

TEST(CookieJarTest, MaxAgeWinsOverExpiresInEitherOrder) {
  CookieJar jar;
  set_cookies(jar, {"a=1; Max-Age=3600; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
                    "b=2; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=3600",
                    "c=3; Expires=Fri, 01 Jan 2100 00:00:00 GMT; Max-Age=0"});
  EXPECT_EQ(cookie_header(jar), "Cookie: a=1; b=2\r\n");
}

TEST(CookieJarTest, SecureCookiesGoOnlyOverTls) {
  CookieJar jar;
  set_cookies(jar, {"plain=1", "tls=2; Secure", "tls2=3; secure=whatever"});
  EXPECT_EQ(cookie_header(jar, "/", false), "Cookie: plain=1\r\n");
  EXPECT_EQ(cookie_header(jar, "/", true), "Cookie: plain=1; tls=2; tls2=3\r\n");
}

TEST(CookieJarTest, DomainHttpOnlySameSiteAndUnknownAttributesAreIgnored) {
  CookieJar jar;
  set_cookies(jar, {"a=1; Domain=other.example; HttpOnly; SameSite=Strict; Priority=High; x"});
  EXPECT_EQ(cookie_header(jar), "Cookie: a=1\r\n");
}

TEST(CookieJarTest, NameAndValueUpToTheLimitAreKeptLongerOnesIgnored) {
  CookieJar jar;
  const std::string fits = "n=" + std::string(CookieJar::max_cookie_bytes - 1, 'v');
  const std::string too_long = "m=" + std::string(CookieJar::max_cookie_bytes, 'v');
  set_cookies(jar, {fits, too_long});
  EXPECT_EQ(cookie_header(jar), "Cookie: " + fits + "\r\n");
  // A longer one does not replace the one kept either.
  set_cookies(jar, {"n=" + std::string(CookieJar::max_cookie_bytes, 'w')});
  EXPECT_EQ(cookie_header(jar), "Cookie: " + fits + "\r\n");
}

TEST(CookieJarTest, PathLongerThanTheLimitIsIgnored) {
  CookieJar jar;
  const std::string path = "/" + std::string(CookieJar::max_cookie_bytes, 'p');
  set_cookies(jar, {"a=1; Path=" + path});
  EXPECT_EQ(jar.size(), 0u);
  set_cookies(jar, {"b=1"}, path + "/x");  // the default path is as long
  EXPECT_EQ(jar.size(), 0u);
}

std::vector<std::string> numbered_cookies(int from, int to, std::string_view attributes = "") {
  std::vector<std::string> cookies;
  for (int i = from; i < to; ++i) {
    cookies.push_back("c" + std::to_string(i) + "=" + std::to_string(i) + std::string(attributes));
  }
  return cookies;
}

void set_all(CookieJar& jar, const std::vector<std::string>& cookies) {
  std::vector<std::string_view> views(cookies.begin(), cookies.end());
  set_cookies(jar, views);
}

TEST(CookieJarTest, TheOldestIsEvictedBeyondTheLimit) {
  CookieJar jar;
  const int limit = static_cast<int>(CookieJar::max_cookies);
  set_all(jar, numbered_cookies(0, limit + 2));
  EXPECT_EQ(jar.size(), CookieJar::max_cookies);
  const std::string header = cookie_header(jar);
  EXPECT_EQ(header.find(" c0=0;"), std::string::npos);
  EXPECT_EQ(header.find(" c1=1;"), std::string::npos);
  EXPECT_EQ(header.rfind("Cookie: c2=2; c3=3;", 0), 0u);
  EXPECT_NE(header.find("; c51=51\r\n"), std::string::npos);
}

TEST(CookieJarTest, ExpiredCookiesAreEvictedBeforeTheOldest) {
  CookieJar jar;
  const int limit = static_cast<int>(CookieJar::max_cookies);
  set_all(jar, numbered_cookies(0, limit - 1));
  set_cookies(jar, {"short=1; Max-Age=1"});
  ASSERT_EQ(jar.size(), CookieJar::max_cookies);
  set_cookies(jar, {"new=1"}, "/", kNow + 2 * kSecond);
  EXPECT_EQ(jar.size(), CookieJar::max_cookies);
  const std::string header = cookie_header(jar, "/", false, kNow + 2 * kSecond);
  EXPECT_EQ(header.rfind("Cookie: c0=0;", 0), 0u);
  EXPECT_EQ(header.find("short"), std::string::npos);
  EXPECT_NE(header.find("; new=1\r\n"), std::string::npos);
}

TEST(CookieJarTest, ClearForgetsEverything) {
  CookieJar jar;
  set_cookies(jar, {"a=1", "b=2"});
  jar.clear();
  EXPECT_EQ(jar.size(), 0u);
  EXPECT_EQ(cookie_header(jar), "");
  set_cookies(jar, {"c=3"});
  EXPECT_EQ(cookie_header(jar), "Cookie: c=3\r\n");
}

TEST(CookieJarTest, SettingTheSameCookiesEachIterationDoesNotAllocate) {
  // A login journey: the session and a cart cookie each iteration, a
  // tracking cookie deleted and set again, read back on two paths.
  const std::vector<Header> login{
      {"Content-Type", "application/json"},
      {"Set-Cookie", "session=alice.1.f995b351a89961d1; Path=/; HttpOnly; Max-Age=3600"},
      {"Set-Cookie", "track=; Max-Age=0"},
      {"Set-Cookie", "track=t-123; Expires=Fri, 01 Jan 2100 00:00:00 GMT"}};
  const std::vector<Header> add_to_cart{{"Set-Cookie", "cart=3,7,9; Secure"}};
  CookieJar jar;
  std::string request;
  const auto iteration = [&](std::int64_t now, bool new_user) {
    if (new_user) jar.clear();  // else the same cookies replace themselves
    jar.update(login, "/login", now);
    request.clear();
    jar.append_cookie_header("/shop/cart/add?item=7", true, now, request);
    jar.update(add_to_cart, "/shop/cart/add?item=7", now);
    request.clear();
    jar.append_cookie_header("/shop/cart/checkout", true, now, request);
  };
  iteration(kNow, true);  // the buffers grow here
  {
    kubeload::testing::AllocationCounter allocations;
    for (int i = 1; i <= 100; ++i) iteration(kNow + i * kSecond, i % 10 == 0);
    EXPECT_EQ(allocations.count(), 0u);
  }
  EXPECT_EQ(request, "Cookie: cart=3,7,9; session=alice.1.f995b351a89961d1; track=t-123\r\n");
}

}  // namespace
}  // namespace kubeload::scenario
