#include "common/scenario/template.hpp"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <ostream>
#include <regex>
#include <string>
#include <string_view>

#include "allocation_counter.hpp"

namespace kubeload::scenario {
namespace {

// token (slot 0), cart (slot 1); data source user with columns name, password.
Vocabulary vocabulary() {
  return Vocabulary{{"token", "cart"}, {DataSource{"user", {"name", "password"}}}};
}

struct Rendered {
  const char* text;
  const char* want;
};

void PrintTo(const Rendered& row, std::ostream* out) {
  *out << '"' << row.text << '"';
}

class RenderTemplate : public ::testing::TestWithParam<Rendered> {};

TEST_P(RenderTemplate, GivesTheText) {
  const Rendered& row = GetParam();
  auto compiled = Template::compile("t", row.text, vocabulary());
  ASSERT_TRUE(std::holds_alternative<Template>(compiled)) << std::get<std::string>(compiled);
  const std::array<std::optional<std::string_view>, 2> variables{"abc.def", "7"};
  const std::array<std::string_view, 2> columns{"alice", "pw"};
  Random random(1);
  const RenderContext context{variables, columns, 3, 41, 2, 1700000000123, &random};
  std::string out = "prefix:";
  const RenderResult result = std::get<Template>(compiled).render(context, out);
  EXPECT_TRUE(result.complete);
  EXPECT_EQ(out, std::string("prefix:") + row.want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RenderTemplate,
    ::testing::Values(Rendered{"", ""}, Rendered{"plain text", "plain text"},
                      Rendered{"${token}", "abc.def"},
                      Rendered{"Bearer ${token}", "Bearer abc.def"},
                      Rendered{"/cart/${cart}/items?u=${user.name}", "/cart/7/items?u=alice"},
                      Rendered{"${user.name}:${user.password}", "alice:pw"},
                      Rendered{"${token}${token}", "abc.defabc.def"},
                      Rendered{"vu ${vu} it ${iteration} w ${worker}", "vu 3 it 41 w 2"},
                      Rendered{"${now}", "1700000000123"}, Rendered{"${random(5,5)}", "5"},
                      Rendered{"${random( -3 , -3 )}", "-3"},
                      // Only "${" opens a reference; "$${" is a literal "${".
                      Rendered{"cost $5", "cost $5"}, Rendered{"$$", "$$"}, Rendered{"$", "$"},
                      Rendered{"a$", "a$"}, Rendered{"$${token}", "${token}"},
                      Rendered{"$$${token}", "$${token}"},
                      Rendered{"{\"user\": \"${user.name}\"}", "{\"user\": \"alice\"}"},
                      Rendered{"}${token}}", "}abc.def}"},
                      Rendered{"\xC3\xA9${cart}\xE2\x82\xAC",
                               "\xC3\xA9"
                               "7\xE2\x82\xAC"}));

struct Refused {
  const char* text;
  const char* message;
};

void PrintTo(const Refused& row, std::ostream* out) {
  *out << '"' << row.text << '"';
}

class RefuseTemplate : public ::testing::TestWithParam<Refused> {};

TEST_P(RefuseTemplate, NamesTheTemplateAndTheBadText) {
  const Refused& row = GetParam();
  const auto compiled = Template::compile("steps[2].path", row.text, vocabulary());
  ASSERT_TRUE(std::holds_alternative<std::string>(compiled)) << row.text;
  EXPECT_EQ(std::get<std::string>(compiled), row.message);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RefuseTemplate,
    ::testing::Values(
        Refused{"/x/${tokn}", R"(template steps[2].path: unknown variable "tokn" in "${tokn}")"},
        Refused{
            "${user.email}",
            R"(template steps[2].path: unknown column "email" of data source "user" in "${user.email}")"},
        Refused{"${item.id}",
                R"(template steps[2].path: unknown data source "item" in "${item.id}")"},
        Refused{"/x/${token", R"(template steps[2].path: unterminated "${" in "${token")"},
        Refused{"${", R"(template steps[2].path: unterminated "${" in "${")"},
        Refused{"a${}b", R"(template steps[2].path: empty reference in "${}")"},
        Refused{"${ token}",
                R"(template steps[2].path: bad name: want [A-Za-z_][A-Za-z0-9_-]* in "${ token}")"},
        Refused{"${1x}",
                R"(template steps[2].path: bad name: want [A-Za-z_][A-Za-z0-9_-]* in "${1x}")"},
        Refused{
            "${user.}",
            R"(template steps[2].path: bad name: want SOURCE.COLUMN, each [A-Za-z_][A-Za-z0-9_-]* in "${user.}")"},
        Refused{
            "${a.b.c}",
            R"(template steps[2].path: bad name: want SOURCE.COLUMN, each [A-Za-z_][A-Za-z0-9_-]* in "${a.b.c}")"},
        Refused{"${random}",
                R"(template steps[2].path: bad random: want random(A,B) in "${random}")"},
        Refused{"${random(1,100}",
                R"(template steps[2].path: bad random: want random(A,B) in "${random(1,100}")"},
        Refused{"${random(10,1)}",
                R"(template steps[2].path: bad random range: A is above B in "${random(10,1)}")"},
        Refused{
            "${random(1)}",
            R"(template steps[2].path: bad random range: want random(A,B) with A and B 64-bit integers in "${random(1)}")"},
        Refused{
            "${random(a,b)}",
            R"(template steps[2].path: bad random range: want random(A,B) with A and B 64-bit integers in "${random(a,b)}")"},
        Refused{
            "${random(1,99999999999999999999)}",
            R"(template steps[2].path: bad random range: want random(A,B) with A and B 64-bit integers in "${random(1,99999999999999999999)}")"},
        Refused{
            "${random(1.5,2)}",
            R"(template steps[2].path: bad random range: want random(A,B) with A and B 64-bit integers in "${random(1.5,2)}")"},
        // Every problem at once, in order.
        Refused{
            "${a}/${b}",
            R"(template steps[2].path: unknown variable "a" in "${a}"; unknown variable "b" in "${b}")"},
        Refused{
            "${x\ny}",
            R"(template steps[2].path: bad name: want [A-Za-z_][A-Za-z0-9_-]* in "${x\x0ay}")"}));

TEST(Template, RendersAnUnsetVariableAsIncompleteNamingIt) {
  auto compiled = Template::compile("t", "a=${token}&b=${cart}", vocabulary());
  const std::array<std::optional<std::string_view>, 2> variables{std::nullopt, "7"};
  std::string out;
  const RenderResult result =
      std::get<Template>(compiled).render(RenderContext{variables, {}, 0, 0, 0, 0, nullptr}, out);
  EXPECT_FALSE(result.complete);
  EXPECT_EQ(result.missing, "token");
  EXPECT_EQ(out, "a=&b=7");
}

TEST(Template, RandomStaysInItsRangeAndReachesBothEnds) {
  auto compiled = Template::compile("t", "${random(-2,2)}", vocabulary());
  Random random(42);
  const RenderContext context{{}, {}, 0, 0, 0, 0, &random};
  std::array<int, 5> seen{};
  for (int i = 0; i < 1000; ++i) {
    std::string out;
    ASSERT_TRUE(std::get<Template>(compiled).render(context, out).complete);
    const int value = std::stoi(out);
    ASSERT_GE(value, -2);
    ASSERT_LE(value, 2);
    ++seen[static_cast<std::size_t>(value + 2)];
  }
  for (const int count : seen) EXPECT_GT(count, 100);  // about 200 each
}

TEST(Template, RandomOverTheWholeRangeOfInt64) {
  Random random(7);
  bool negative = false;
  bool positive = false;
  for (int i = 0; i < 100; ++i) {
    const std::int64_t value = random.between(INT64_MIN, INT64_MAX);
    negative = negative || value < 0;
    positive = positive || value > 0;
  }
  EXPECT_TRUE(negative && positive);
}

TEST(Template, UuidIsVersion4AndDiffersEachTime) {
  auto compiled = Template::compile("t", "${uuid}", vocabulary());
  Random random(3);
  const RenderContext context{{}, {}, 0, 0, 0, 0, &random};
  std::string first;
  std::string second;
  ASSERT_TRUE(std::get<Template>(compiled).render(context, first).complete);
  ASSERT_TRUE(std::get<Template>(compiled).render(context, second).complete);
  const std::regex v4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  EXPECT_TRUE(std::regex_match(first, v4)) << first;
  EXPECT_TRUE(std::regex_match(second, v4)) << second;
  EXPECT_NE(first, second);
}

TEST(Template, UuidOfFixedBits) {
  std::string out;
  append_uuid(0, 0, out);
  EXPECT_EQ(out, "00000000-0000-4000-8000-000000000000");
  out.clear();
  append_uuid(UINT64_MAX, UINT64_MAX, out);
  EXPECT_EQ(out, "ffffffff-ffff-4fff-bfff-ffffffffffff");
}

TEST(Template, SameSeedSameDraws) {
  Random a(99);
  Random b(99);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.next(), b.next());
}

TEST(Template, ConstantOnlyWithoutReferences) {
  EXPECT_TRUE(std::get<Template>(Template::compile("t", "/a/$${b}", vocabulary())).is_constant());
  EXPECT_FALSE(std::get<Template>(Template::compile("t", "/a/${vu}", vocabulary())).is_constant());
}

TEST(Template, AdjacentLiteralsAreOneSegment) {
  const auto compiled = std::get<Template>(Template::compile("t", "a$${b$c${vu}d", vocabulary()));
  ASSERT_EQ(compiled.segments().size(), 3u);
  EXPECT_EQ(compiled.segments()[0].kind, Template::Kind::literal);
  EXPECT_EQ(compiled.segments()[1].kind, Template::Kind::vu);
  EXPECT_EQ(compiled.segments()[2].kind, Template::Kind::literal);
}

TEST(Template, SlotsFollowTheVocabularyLayout) {
  const Vocabulary two_sources{{"a"}, {DataSource{"s", {"x", "y"}}, DataSource{"t", {"z"}}}};
  const auto compiled = std::get<Template>(Template::compile("t", "${t.z}${s.y}${a}", two_sources));
  ASSERT_EQ(compiled.segments().size(), 3u);
  EXPECT_EQ(compiled.segments()[0].offset, 2u);  // after s's two columns
  EXPECT_EQ(compiled.segments()[1].offset, 1u);
  EXPECT_EQ(compiled.segments()[2].offset, 0u);
}

// A source whose columns the spec does not declare: any well-formed column
// compiles, without a slot, and takes no slots from the sources after it.
TEST(Template, AnyColumnSourceAcceptsEveryColumnAndLeavesItUnresolved) {
  const Vocabulary vocabulary{
      {"a"}, {DataSource{"u", {}, true}, DataSource{"s", {"x", "y"}}, DataSource{"t", {"z"}}}};
  const auto compiled =
      std::get<Template>(Template::compile("t", "${t.z}${u.email}${s.y}", vocabulary));
  ASSERT_EQ(compiled.segments().size(), 3u);
  EXPECT_EQ(compiled.segments()[0].offset, 2u);  // after s's two columns; u takes none
  EXPECT_EQ(compiled.segments()[1].kind, Template::Kind::column);
  EXPECT_EQ(compiled.segments()[1].offset, unresolved_slot);
  EXPECT_EQ(compiled.segments()[2].offset, 1u);
  EXPECT_FALSE(compiled.is_resolved());
  // Rendered anyway, the unresolved column is empty rather than a stray read.
  const std::array<std::string_view, 3> columns{"x0", "y0", "z0"};
  const RenderContext context{{}, columns, 0, 0, 0, 0, nullptr};
  std::string out;
  EXPECT_TRUE(compiled.render(context, out).complete);
  EXPECT_EQ(out, "z0y0");
  // The grammar still holds, and other sources are checked as before.
  EXPECT_EQ(std::get<std::string>(Template::compile("", "${u.first name}", vocabulary)),
            R"(bad name: want SOURCE.COLUMN, each [A-Za-z_][A-Za-z0-9_-]* in "${u.first name}")");
  EXPECT_EQ(std::get<std::string>(Template::compile("", "${s.q}", vocabulary)),
            R"(unknown column "q" of data source "s" in "${s.q}")");
  EXPECT_TRUE(std::get<Template>(Template::compile("t", "${s.x}", vocabulary)).is_resolved());
}

TEST(Template, WithoutANameTheMessageIsTheProblemsAlone) {
  EXPECT_EQ(std::get<std::string>(Template::compile("", "/${tokn}/${}", vocabulary())),
            R"(unknown variable "tokn" in "${tokn}"; empty reference in "${}")");
}

TEST(Template, LiteralSegmentsReadBackUnescaped) {
  const auto compiled =
      std::get<Template>(Template::compile("t", "/a $${b}/${vu}/c", vocabulary()));
  ASSERT_EQ(compiled.segments().size(), 3u);
  EXPECT_EQ(compiled.literal(compiled.segments()[0]), "/a ${b}/");
  EXPECT_EQ(compiled.literal(compiled.segments()[2]), "/c");
}

TEST(Template, ColumnNamesFollowTheGrammarButMayBeBuiltinsNames) {
  EXPECT_FALSE(check_column_name("vu").has_value());
  EXPECT_FALSE(check_column_name("first_name").has_value());
  EXPECT_EQ(check_column_name("first name"),
            R"("first name" is not a name: want [A-Za-z_][A-Za-z0-9_-]*)");
  EXPECT_TRUE(check_column_name("").has_value());
}

// The steady state of a request built from a template: the buffer is reused,
// so once it has grown, rendering allocates nothing.
TEST(Template, RenderingIntoAReusedBufferDoesNotAllocate) {
  const auto compiled = std::get<Template>(
      Template::compile("t",
                        R"({"user":"${user.name}","token":"${token}","n":${random(1,1000000)},)"
                        R"("id":"${uuid}","vu":${vu},"i":${iteration},"w":${worker},"t":${now}})",
                        vocabulary()));
  const std::array<std::optional<std::string_view>, 2> variables{
      "a-token-long-enough-not-to-fit-in-a-small-string-buffer", "1"};
  const std::array<std::string_view, 2> columns{"alice", "pw"};
  Random random(5);
  RenderContext context{variables, columns, 0, 0, 1, 1700000000000, &random};
  std::string buffer;
  buffer.reserve(512);
  testing::AllocationCounter counter;
  for (std::uint64_t i = 0; i < 10000; ++i) {
    context.iteration = i;
    context.vu = i % 100;
    buffer.clear();
    ASSERT_TRUE(compiled.render(context, buffer).complete);
  }
  EXPECT_EQ(counter.count(), 0u);
  EXPECT_NE(buffer.find(R"("user":"alice")"), std::string::npos) << buffer;
}

struct NameRule {
  const char* name;
  bool accepted;
};

void PrintTo(const NameRule& row, std::ostream* out) {
  *out << '"' << row.name << '"';
}

class CheckName : public ::testing::TestWithParam<NameRule> {};

TEST_P(CheckName, FollowsTheGrammarAndSparesTheBuiltins) {
  EXPECT_EQ(!check_name(GetParam().name).has_value(), GetParam().accepted);
}

INSTANTIATE_TEST_SUITE_P(
    Table, CheckName,
    ::testing::Values(
        NameRule{"token", true}, NameRule{"_x", true}, NameRule{"a-b_c9", true},
        NameRule{"T", true}, NameRule{"", false}, NameRule{"9a", false}, NameRule{"-a", false},
        NameRule{"a.b", false}, NameRule{"a b", false}, NameRule{"vu", false},
        NameRule{"iteration", false}, NameRule{"worker", false}, NameRule{"random", false},
        NameRule{"uuid", false}, NameRule{"now", false},
        NameRule{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true},
        NameRule{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false}));

TEST(Template, VocabularyProblemsAllAtOnce) {
  const Vocabulary bad{{"token", "vu", "token", "user"},
                       {DataSource{"user", {"name", "name", "first name"}}}};
  const std::vector<std::string> want{
      R"(variable: "vu" is the name of a built-in)",
      R"(variable: "token" is declared twice)",
      R"(data source: "user" is declared twice)",
      R"(data source "user" column: "name" is declared twice)",
      R"(data source "user" column: "first name" is not a name: want [A-Za-z_][A-Za-z0-9_-]*)",
  };
  EXPECT_EQ(check_vocabulary(bad), want);
  EXPECT_TRUE(check_vocabulary(vocabulary()).empty());
}

}  // namespace
}  // namespace kubeload::scenario
