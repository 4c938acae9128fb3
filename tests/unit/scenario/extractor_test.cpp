#include "common/scenario/extractor.hpp"

#include <gtest/gtest.h>

#include <array>
#include <ostream>
#include <string>

#include "allocation_counter.hpp"
#include "common/scenario/check.hpp"

namespace kubeload::scenario {
namespace {

// What the shop fixture's login answers (tests/fixtures/fault_server/shop.hpp).
constexpr std::array login_headers{
    Header{"Content-Type", "application/json"},
    Header{"set-cookie", "theme=dark; Path=/"},
    Header{"Set-Cookie", "session=alice.1.f995b351a89961d1; Path=/shop; HttpOnly"},
    Header{"X-Request-Id", "  r-42  "},
    Header{"Set-Cookie", "flag"},  // no '=': ignored
    Header{"Set-Cookie", " quoted = \"a b\" ;Secure"},
    Header{"Set-Cookie", "theme=light"},
    Header{"x-request-id", "second"},
};
constexpr std::string_view login_body =
    R"({"token":"alice.1.f995b351a89961d1","user":"alice","roles":["buyer"],"n":7})";

ResponseView login_response() {
  return ResponseView{200, login_headers, login_body};
}

struct Extraction_ {
  ExtractFrom from;
  const char* expression;
  std::optional<std::uint32_t> group;
  const char* want;  // nullptr: not found
};

void PrintTo(const Extraction_& row, std::ostream* out) {
  *out << static_cast<int>(row.from) << " \"" << row.expression << '"';
}

class Extract : public ::testing::TestWithParam<Extraction_> {};

TEST_P(Extract, FindsOrSaysNotFound) {
  const Extraction_& row = GetParam();
  auto compiled = Extractor::compile("e", ExtractRule{row.from, row.expression, row.group});
  ASSERT_TRUE(std::holds_alternative<Extractor>(compiled)) << std::get<std::string>(compiled);
  MatchScratch scratch;
  std::string out = "old value";
  const Extraction got = std::get<Extractor>(compiled).extract(login_response(), out, scratch);
  if (row.want == nullptr) {
    EXPECT_EQ(got, Extraction::not_found);
    EXPECT_EQ(out, "");
    return;
  }
  EXPECT_EQ(got, Extraction::found);
  EXPECT_EQ(out, row.want);
}

using F = ExtractFrom;

INSTANTIATE_TEST_SUITE_P(
    Table, Extract,
    ::testing::Values(
        Extraction_{F::json, "/token", {}, "alice.1.f995b351a89961d1"},
        Extraction_{F::json, "/roles/0", {}, "buyer"},
        Extraction_{F::json, "/roles", {}, R"(["buyer"])"}, Extraction_{F::json, "/n", {}, "7"},
        Extraction_{F::json, "/missing", {}, nullptr},
        Extraction_{F::json, "/roles/1", {}, nullptr},
        // Headers: any case, the first, trimmed.
        Extraction_{F::header, "content-type", {}, "application/json"},
        Extraction_{F::header, "X-REQUEST-ID", {}, "r-42"},
        Extraction_{F::header, "Location", {}, nullptr},
        // Cookies: exact name, the last, the value up to ';' trimmed, quotes kept.
        Extraction_{F::cookie, "session", {}, "alice.1.f995b351a89961d1"},
        Extraction_{F::cookie, "theme", {}, "light"},
        Extraction_{F::cookie, "quoted", {}, "\"a b\""},
        Extraction_{F::cookie, "Session", {}, nullptr}, Extraction_{F::cookie, "flag", {}, nullptr},
        Extraction_{F::cookie, "Path", {}, nullptr},
        // Regular expressions: group 1 by default when there is one, else the match.
        Extraction_{F::regex, R"re("user":"([^"]+)")re", {}, "alice"},
        Extraction_{F::regex, R"("user":"[^"]+")", {}, R"("user":"alice")"},
        Extraction_{F::regex, R"re("(t)oken":"([^"]+)")re", 2u, "alice.1.f995b351a89961d1"},
        Extraction_{F::regex, R"re("(t)oken":"([^"]+)")re", 0u,
                    R"("token":"alice.1.f995b351a89961d1")"},
        Extraction_{F::regex, R"re("(x)?user")re", {}, nullptr},  // the group took no part
        Extraction_{F::regex, R"("nobody")", {}, nullptr},
        Extraction_{F::regex, R"re((?i)"USER":"(\w+)")re", {}, "alice"}));

struct BadRule {
  ExtractFrom from;
  const char* expression;
  std::optional<std::uint32_t> group;
  const char* message;
};

void PrintTo(const BadRule& row, std::ostream* out) {
  *out << '"' << row.expression << '"';
}

class RefuseExtraction : public ::testing::TestWithParam<BadRule> {};

TEST_P(RefuseExtraction, NamesTheExtractionAndTheBadText) {
  const BadRule& row = GetParam();
  const auto compiled = Extractor::compile("steps[0].extract.token",
                                           ExtractRule{row.from, row.expression, row.group});
  ASSERT_TRUE(std::holds_alternative<std::string>(compiled)) << row.expression;
  EXPECT_EQ(std::get<std::string>(compiled), row.message);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RefuseExtraction,
    ::testing::Values(
        BadRule{
            F::json,
            "token",
            {},
            R"(extraction steps[0].extract.token: JSON pointer "token": must be empty or start with "/")"},
        BadRule{F::header,
                "",
                {},
                R"(extraction steps[0].extract.token: header name "" is not a token (RFC 9110))"},
        BadRule{
            F::header,
            "X Id",
            {},
            R"(extraction steps[0].extract.token: header name "X Id" is not a token (RFC 9110))"},
        BadRule{
            F::cookie,
            "a=b",
            {},
            R"(extraction steps[0].extract.token: cookie name "a=b" is not a token (RFC 9110))"},
        BadRule{
            F::regex,
            "(unclosed",
            {},
            R"(extraction steps[0].extract.token: regular expression "(unclosed": missing closing parenthesis at offset 9)"},
        BadRule{F::regex, "a(b)", 2u,
                R"m(extraction steps[0].extract.token: group 2 of "a(b)", which has 1 group)m"},
        BadRule{
            F::regex,
            "(*UTF)x",
            {},
            R"(extraction steps[0].extract.token: regular expression "(*UTF)x": using UTF is disabled by the application at offset 6)"},
        BadRule{F::json, "/a", 1u,
                R"(extraction steps[0].extract.token: a group is for a regular expression only)"}));

TEST(Extractor, WithoutANameTheMessageIsTheProblemAlone) {
  const auto compiled = Extractor::compile("", ExtractRule{F::header, "X Id", {}});
  EXPECT_EQ(std::get<std::string>(compiled), R"(header name "X Id" is not a token (RFC 9110))");
}

TEST(Extractor, RegexBacktrackingIsBoundedAndFindsNothing) {
  // Exponential backtracking on a body of 'a's: the match limit ends it.
  auto compiled = Extractor::compile("e", ExtractRule{F::regex, "(a+)+$", {}});
  const std::string body = std::string(5000, 'a') + "!";
  MatchScratch scratch;
  std::string out;
  EXPECT_EQ(std::get<Extractor>(compiled).extract(ResponseView{200, {}, body}, out, scratch),
            Extraction::not_found);
}

TEST(Extractor, RegexMatchesBytesNotUtf8) {
  auto compiled = Extractor::compile("e", ExtractRule{F::regex, "x(.)y", {}});
  MatchScratch scratch;
  std::string out;
  const std::string body = "x\xC3\xA9y x\xFFy";  // é is two bytes: no match there
  EXPECT_EQ(std::get<Extractor>(compiled).extract(ResponseView{200, {}, body}, out, scratch),
            Extraction::found);
  EXPECT_EQ(out, "\xFF");
}

// The steady state: values taken from each response into buffers that
// already have their size allocate nothing through operator new. (PCRE2
// allocates with malloc, which this counter does not see; matching into the
// MatchScratch made beforehand, JIT-compiled, it does not allocate either.)
TEST(Extractor, ExtractingIntoReusedBuffersDoesNotAllocate) {
  const auto json = std::get<Extractor>(Extractor::compile("e", {F::json, "/token", {}}));
  const auto cookie = std::get<Extractor>(Extractor::compile("e", {F::cookie, "session", {}}));
  const auto header = std::get<Extractor>(Extractor::compile("e", {F::header, "x-request-id", {}}));
  const auto regex =
      std::get<Extractor>(Extractor::compile("e", {F::regex, R"re("user":"([^"]+)")re", {}}));
  const auto check =
      std::get<Check>(Check::compile("c", {CheckKind::json_matches, "/user", "[a-z]+"}));
  MatchScratch scratch;
  std::string out;
  out.reserve(256);
  std::string check_scratch;
  check_scratch.reserve(256);
  const ResponseView response = login_response();
  testing::AllocationCounter counter;
  for (int i = 0; i < 10000; ++i) {
    ASSERT_EQ(json.extract(response, out, scratch), Extraction::found);
    ASSERT_EQ(cookie.extract(response, out, scratch), Extraction::found);
    ASSERT_EQ(header.extract(response, out, scratch), Extraction::found);
    ASSERT_EQ(regex.extract(response, out, scratch), Extraction::found);
    ASSERT_TRUE(check.passes(response, check_scratch, scratch));
  }
  EXPECT_EQ(counter.count(), 0u);
}

TEST(Extractor, TokenRule) {
  EXPECT_TRUE(is_token("X-Request-Id"));
  EXPECT_TRUE(is_token("a!#$%&'*+-.^_`|~9"));
  EXPECT_FALSE(is_token(""));
  EXPECT_FALSE(is_token("a:b"));
  EXPECT_FALSE(is_token("a\tb"));
  EXPECT_FALSE(is_token("caf\xC3\xA9"));
}

}  // namespace
}  // namespace kubeload::scenario
