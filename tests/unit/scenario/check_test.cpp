#include "common/scenario/check.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

namespace kubeload::scenario {
namespace {

constexpr std::string_view order_body =
    R"({"order":"order-17","items":2,"paid":true,"note":"caf\u00e9","lines":[{"sku":"A1"}]})";

struct CheckRow {
  CheckKind kind;
  const char* pointer;
  const char* expected;
  bool passes;
};

void PrintTo(const CheckRow& row, std::ostream* out) {
  *out << static_cast<int>(row.kind) << " \"" << row.pointer << "\" \"" << row.expected << '"';
}

class RunCheck : public ::testing::TestWithParam<CheckRow> {};

TEST_P(RunCheck, PassesOrFails) {
  const CheckRow& row = GetParam();
  auto compiled = Check::compile("c", CheckRule{row.kind, row.pointer, row.expected});
  ASSERT_TRUE(std::holds_alternative<Check>(compiled)) << std::get<std::string>(compiled);
  std::string scratch;
  MatchScratch match_scratch;
  EXPECT_EQ(
      std::get<Check>(compiled).passes(ResponseView{200, {}, order_body}, scratch, match_scratch),
      row.passes);
}

using K = CheckKind;

INSTANTIATE_TEST_SUITE_P(
    Table, RunCheck,
    ::testing::Values(
        // equals: the value as extraction reads it (strings unescaped, others as JSON text).
        CheckRow{K::json_equals, "/order", "order-17", true},
        CheckRow{K::json_equals, "/order", "order-1", false},
        CheckRow{K::json_equals, "/items", "2", true},
        CheckRow{K::json_equals, "/paid", "true", true},
        CheckRow{K::json_equals, "/note", "caf\xC3\xA9", true},
        CheckRow{K::json_equals, "/lines/0/sku", "A1", true},
        CheckRow{K::json_equals, "/missing", "", false},
        // matches: the whole value.
        CheckRow{K::json_matches, "/order", "order-[0-9]+", true},
        CheckRow{K::json_matches, "/order", "order", false},
        CheckRow{K::json_matches, "/order", "[0-9]+", false},
        CheckRow{K::json_matches, "/items", "[1-9]", true},
        CheckRow{K::json_matches, "/missing", ".*", false},
        // contains: the raw body.
        CheckRow{K::body_contains, "", R"("paid":true)", true},
        CheckRow{K::body_contains, "", "order-18", false},
        CheckRow{K::body_contains, "", R"(caf\u00e9)", true}));

struct BadCheck {
  CheckKind kind;
  const char* pointer;
  const char* expected;
  const char* message;
};

void PrintTo(const BadCheck& row, std::ostream* out) {
  *out << '"' << row.pointer << "\" \"" << row.expected << '"';
}

class RefuseCheck : public ::testing::TestWithParam<BadCheck> {};

TEST_P(RefuseCheck, NamesTheCheckAndTheBadText) {
  const BadCheck& row = GetParam();
  const auto compiled =
      Check::compile("steps[1].checks[0]", CheckRule{row.kind, row.pointer, row.expected});
  ASSERT_TRUE(std::holds_alternative<std::string>(compiled));
  EXPECT_EQ(std::get<std::string>(compiled), row.message);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RefuseCheck,
    ::testing::Values(
        BadCheck{
            K::json_equals, "order", "x",
            R"(check steps[1].checks[0]: JSON pointer "order": must be empty or start with "/")"},
        BadCheck{
            K::json_matches, "/order", "[",
            R"(check steps[1].checks[0]: regular expression "[": missing terminating ] for character class at offset 1)"},
        BadCheck{K::body_contains, "", "",
                 R"(check steps[1].checks[0]: the text to look for is empty)"}));

TEST(Check, WithoutANameTheMessageIsTheProblemAlone) {
  const auto compiled = Check::compile("", CheckRule{CheckKind::body_contains, "", ""});
  EXPECT_EQ(std::get<std::string>(compiled), "the text to look for is empty");
}

}  // namespace
}  // namespace kubeload::scenario
