#include "common/scenario/json_pointer.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

namespace kubeload::scenario {
namespace {

// RFC 6901 section 5's document, whose every pointer is a row below.
constexpr std::string_view rfc_document = R"({
  "foo": ["bar", "baz"],
  "": 0,
  "a/b": 1,
  "c%d": 2,
  "e^f": 3,
  "g|h": 4,
  "i\\j": 5,
  "k\"l": 6,
  " ": 7,
  "m~n": 8
})";

struct Lookup {
  const char* document;
  const char* pointer;
  const char* want;  // the value's text as extraction reads it; nullptr: not found
};

void PrintTo(const Lookup& row, std::ostream* out) {
  *out << '"' << row.pointer << "\" in " << row.document;
}

class FindJsonValue : public ::testing::TestWithParam<Lookup> {};

TEST_P(FindJsonValue, FindsWhatThePointerNames) {
  const Lookup& row = GetParam();
  const auto pointer = JsonPointer::parse(row.pointer);
  ASSERT_TRUE(std::holds_alternative<JsonPointer>(pointer)) << std::get<std::string>(pointer);
  // As extraction reads it: found, and a string's escapes decode.
  const auto found = std::get<JsonPointer>(pointer).find(row.document);
  std::string text;
  const bool readable = found.has_value() && append_json_text(*found, text);
  if (row.want == nullptr) {
    EXPECT_FALSE(readable) << text;
    return;
  }
  ASSERT_TRUE(readable);
  EXPECT_EQ(text, row.want);
}

INSTANTIATE_TEST_SUITE_P(Rfc6901, FindJsonValue,
                         ::testing::Values(Lookup{rfc_document.data(), "/foo", R"(["bar", "baz"])"},
                                           Lookup{rfc_document.data(), "/foo/0", "bar"},
                                           Lookup{rfc_document.data(), "/", "0"},
                                           Lookup{rfc_document.data(), "/a~1b", "1"},
                                           Lookup{rfc_document.data(), "/c%d", "2"},
                                           Lookup{rfc_document.data(), "/e^f", "3"},
                                           Lookup{rfc_document.data(), "/g|h", "4"},
                                           Lookup{rfc_document.data(), "/i\\j", "5"},
                                           Lookup{rfc_document.data(), "/k\"l", "6"},
                                           Lookup{rfc_document.data(), "/ ", "7"},
                                           Lookup{rfc_document.data(), "/m~0n", "8"}));

INSTANTIATE_TEST_SUITE_P(
    Table, FindJsonValue,
    ::testing::Values(
        // The whole document, and scalars of each type.
        Lookup{R"( {"a":1} )", "", R"({"a":1})"}, Lookup{R"("top")", "", "top"},
        Lookup{R"({"token":"abc.def"})", "/token", "abc.def"},
        Lookup{R"({"n":-12.5e+3})", "/n", "-12.5e+3"},
        Lookup{R"({"t":true,"f":false,"z":null})", "/t", "true"},
        Lookup{R"({"t":true,"f":false,"z":null})", "/f", "false"},
        Lookup{R"({"t":true,"f":false,"z":null})", "/z", "null"},
        // Nesting, skipping values of every kind on the way.
        Lookup{R"({"a":{"x":[1,{"y":"}"}],"s":"]\"["},"items":[{"id":101},{"id":102}]})",
               "/items/1/id", "102"},
        Lookup{R"({ "a" : [ [ ] , { } ] , "b" : "x" })", "/b", "x"},
        Lookup{R"({"items":[{"id":101},{"id":102}]})", "/items/0", R"({"id":101})"},
        // Escapes are decoded in values and in member names.
        Lookup{R"({"s":"a\"b\\c\/d\n\t"})", "/s", "a\"b\\c/d\n\t"},
        Lookup{R"({"s":"\u00e9\u20ac\ud83d\ude00"})", "/s", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"},
        Lookup{R"({"t\u006fken":"x"})", "/token", "x"}, Lookup{R"({"a\/b":"x"})", "/a~1b", "x"},
        // The first of duplicate names wins.
        Lookup{R"({"a":1,"a":2})", "/a", "1"},
        // Absent.
        Lookup{R"({"a":1})", "/b", nullptr}, Lookup{R"({})", "/a", nullptr},
        Lookup{R"([])", "/0", nullptr}, Lookup{R"([1,2])", "/2", nullptr},
        Lookup{R"([1,2])", "/-", nullptr}, Lookup{R"([1,2])", "/01", nullptr},
        Lookup{R"([1,2])", "/a", nullptr}, Lookup{R"({"a":1})", "/a/b", nullptr},
        Lookup{R"({"a":"str"})", "/a/0", nullptr}, Lookup{R"({"0":"k"})", "/0", "k"},
        Lookup{R"({"tok":"x","token2":"y"})", "/token", nullptr},
        // Broken before the value: nothing. Broken after it: the value.
        Lookup{"", "", nullptr}, Lookup{"not json", "/a", nullptr},
        Lookup{R"({"a" 1})", "/a", nullptr}, Lookup{R"({"x":tru,"a":1})", "/a", nullptr},
        Lookup{R"({"x":"unterminated)", "/a", nullptr}, Lookup{R"({"a":"x\q"})", "/a", nullptr},
        Lookup{R"({"a":"\ud83d"})", "/a", nullptr}, Lookup{R"({"a":"\ude00"})", "/a", nullptr},
        Lookup{R"({"a":"\u12"})", "/a", nullptr}, Lookup{R"({"a":1,"b":)", "/a", "1"},
        Lookup{R"({"a":[1,2)", "/a/1", "2"}, Lookup{R"({"a":[1,2)", "/a", nullptr}));

struct BadPointer {
  const char* pointer;
  const char* message;
};

void PrintTo(const BadPointer& row, std::ostream* out) {
  *out << '"' << row.pointer << '"';
}

class RefusePointer : public ::testing::TestWithParam<BadPointer> {};

TEST_P(RefusePointer, NamesTheBadText) {
  const auto parsed = JsonPointer::parse(GetParam().pointer);
  ASSERT_TRUE(std::holds_alternative<std::string>(parsed));
  EXPECT_EQ(std::get<std::string>(parsed), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RefusePointer,
    ::testing::Values(
        BadPointer{"token", R"(JSON pointer "token": must be empty or start with "/")"},
        BadPointer{"#/a", R"(JSON pointer "#/a": must be empty or start with "/")"},
        BadPointer{"/a~2b", R"(JSON pointer "/a~2b": "~" must be followed by 0 or 1, in "a~2b")"},
        BadPointer{"/a/b~", R"(JSON pointer "/a/b~": "~" must be followed by 0 or 1, in "b~")"}));

TEST(JsonPointer, AValueDeeperThanAnyStackWouldHoldIsSkipped) {
  std::string deep = R"({"skip":)";
  deep += std::string(100000, '[');
  deep += std::string(100000, ']');
  deep += R"(,"token":"t"})";
  const auto pointer = std::get<JsonPointer>(JsonPointer::parse("/token"));
  const auto found = pointer.find(deep);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->raw, R"("t")");
  EXPECT_EQ(found->type, JsonType::string);
}

TEST(JsonPointer, TypesOfValues) {
  const std::string_view document = R"({"s":"","n":0,"o":{},"a":[],"b":false,"z":null})";
  const std::pair<const char*, JsonType> rows[] = {
      {"/s", JsonType::string}, {"/n", JsonType::number},  {"/o", JsonType::object},
      {"/a", JsonType::array},  {"/b", JsonType::boolean}, {"/z", JsonType::null}};
  for (const auto& [text, type] : rows) {
    const auto found = std::get<JsonPointer>(JsonPointer::parse(text)).find(document);
    ASSERT_TRUE(found.has_value()) << text;
    EXPECT_EQ(found->type, type) << text;
  }
}

}  // namespace
}  // namespace kubeload::scenario
