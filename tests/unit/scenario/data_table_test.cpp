#include "common/scenario/data_table.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kubeload::scenario {
namespace {

using Rows = std::vector<std::vector<std::string>>;

constexpr std::string_view kSource = "data source \"users\" (users.csv)";

DataTable parsed(DataFormat format, std::string_view text) {
  auto result = DataTable::parse(kSource, format, text);
  if (auto* problem = std::get_if<std::string>(&result)) {
    ADD_FAILURE() << *problem;
    return std::get<DataTable>(DataTable::parse("x", DataFormat::csv, "a\n1\n"));
  }
  return std::get<DataTable>(std::move(result));
}

// The header's names, then every row's cells.
Rows contents(const DataTable& table) {
  Rows rows;
  rows.emplace_back(table.columns().begin(), table.columns().end());
  for (std::size_t r = 0; r < table.rows(); ++r) {
    std::vector<std::string>& row = rows.emplace_back();
    for (std::size_t c = 0; c < table.columns().size(); ++c) row.emplace_back(table.cell(r, c));
  }
  return rows;
}

struct Parsed {
  const char* name;
  DataFormat format;
  std::string_view text;
  Rows want;  // the header's names, then the rows
};

void PrintTo(const Parsed& row, std::ostream* out) {
  *out << row.name;
}

class ParseDataTable : public ::testing::TestWithParam<Parsed> {};

TEST_P(ParseDataTable, GivesTheColumnsAndCells) {
  const Parsed& row = GetParam();
  EXPECT_EQ(contents(parsed(row.format, row.text)), row.want);
}

using F = DataFormat;
INSTANTIATE_TEST_SUITE_P(
    Csv, ParseDataTable,
    ::testing::Values(
        Parsed{"plain",
               F::csv,
               "name,password\nalice,pw1\nbob,pw2\n",
               {{"name", "password"}, {"alice", "pw1"}, {"bob", "pw2"}}},
        Parsed{"no final line break",
               F::csv,
               "name,password\nalice,pw1",
               {{"name", "password"}, {"alice", "pw1"}}},
        Parsed{"CRLF",
               F::csv,
               "name,password\r\nalice,pw1\r\nbob,pw2\r\n",
               {{"name", "password"}, {"alice", "pw1"}, {"bob", "pw2"}}},
        Parsed{"byte order mark", F::csv, "\xEF\xBB\xBFid\n7\n", {{"id"}, {"7"}}},
        Parsed{"empty lines at the end", F::csv, "id\n7\n\n\r\n\n", {{"id"}, {"7"}}},
        Parsed{"empty cells",
               F::csv,
               "a,b,c\n,,\nx,,z\n",
               {{"a", "b", "c"}, {"", "", ""}, {"x", "", "z"}}},
        // A one-column file's empty line in the middle is a row with one empty cell.
        Parsed{"empty line of one column", F::csv, "id\n7\n\n8\n", {{"id"}, {"7"}, {""}, {"8"}}},
        Parsed{"quoted",
               F::csv,
               "a,b\n\"x, y\",\"say \"\"hi\"\"\"\n",
               {{"a", "b"}, {"x, y", "say \"hi\""}}},
        Parsed{"quoted line breaks",
               F::csv,
               "a,b\n\"line 1\nline 2\r\nline 3\",z\nq,r\n",
               {{"a", "b"}, {"line 1\nline 2\r\nline 3", "z"}, {"q", "r"}}},
        Parsed{"quoted empty", F::csv, "a,b\n\"\",\"\"\"\"\n", {{"a", "b"}, {"", "\""}}},
        Parsed{"quoted header", F::csv, "\"a\",b\n1,2\n", {{"a", "b"}, {"1", "2"}}},
        Parsed{"spaces kept", F::csv, "a,b\n x , y\n", {{"a", "b"}, {" x ", " y"}}},
        Parsed{"UTF-8", F::csv, "name\n\xC3\xA9lise\n", {{"name"}, {"\xC3\xA9lise"}}}));

INSTANTIATE_TEST_SUITE_P(
    JsonLines, ParseDataTable,
    ::testing::Values(
        Parsed{"plain",
               F::jsonl,
               "{\"name\": \"alice\", \"password\": "
               "\"pw1\"}\n{\"name\":\"bob\",\"password\":\"pw2\"}\n",
               {{"name", "password"}, {"alice", "pw1"}, {"bob", "pw2"}}},
        Parsed{
            "value kinds",
            F::jsonl,
            R"({"s": "a\"b\\c\n\u00e9\ud83d\ude00", "n": -1.5e3, "z": 0, "t": true, "f": false, "null": null})",
            {{"s", "n", "z", "t", "f", "null"},
             {"a\"b\\c\n\xC3\xA9\xF0\x9F\x98\x80", "-1.5e3", "0", "true", "false", ""}}},
        Parsed{"other order and a missing key",
               F::jsonl,
               "{\"a\": 1, \"b\": 2, \"c\": 3}\n{\"c\": 6, \"a\": 4}\n{}\n",
               {{"a", "b", "c"}, {"1", "2", "3"}, {"4", "", "6"}, {"", "", ""}}},
        Parsed{"blank lines and CRLF",
               F::jsonl,
               "\r\n  {\"id\": 1}  \r\n\n\t\n{\"id\": 2}",
               {{"id"}, {"1"}, {"2"}}},
        Parsed{"byte order mark", F::jsonl, "\xEF\xBB\xBF{\"id\": 1}\n", {{"id"}, {"1"}}},
        Parsed{
            "escaped key", F::jsonl, "{\"i\\u0064\": 1}\n{\"id\": 2}\n", {{"id"}, {"1"}, {"2"}}}));

struct Refused {
  const char* name;
  DataFormat format;
  std::string_view text;
  std::string_view message;
};

void PrintTo(const Refused& row, std::ostream* out) {
  *out << row.name;
}

class RefuseDataTable : public ::testing::TestWithParam<Refused> {};

TEST_P(RefuseDataTable, NamesTheSourceTheLineAndTheBadText) {
  const Refused& row = GetParam();
  const auto result = DataTable::parse(kSource, row.format, row.text);
  ASSERT_TRUE(std::holds_alternative<std::string>(result)) << row.name;
  EXPECT_EQ(std::get<std::string>(result), std::string(kSource) + std::string(row.message));
}

INSTANTIATE_TEST_SUITE_P(
    Csv, RefuseDataTable,
    ::testing::Values(
        Refused{"empty", F::csv, "", ": empty: want a header line with the columns' names"},
        Refused{"only line breaks", F::csv, "\n\r\n",
                ": empty: want a header line with the columns' names"},
        Refused{"no rows", F::csv, "name,password\n", ": no rows after the header"},
        Refused{"too few fields", F::csv, "a,b,c\n1,2,3\nalice,pw\n",
                R"( line 3: 2 fields where the header has 3: "alice,pw")"},
        Refused{"too many fields", F::csv, "a\n1,2\n",
                R"( line 2: 2 fields where the header has 1: "1,2")"},
        Refused{"an empty line in the middle", F::csv, "a,b\n1,2\n\n3,4\n",
                R"( line 3: 1 field where the header has 2: "")"},
        Refused{"the line after a quoted line break", F::csv, "a,b\n\"x\ny\",2\n3\n",
                R"( line 4: 1 field where the header has 2: "3")"},
        Refused{"an unclosed quote", F::csv, "a,b\n1,2\n3,\"4\n5,6\n",
                R"( line 3: a quoted field is not closed: ""4")"},
        Refused{"text after a closing quote", F::csv, "a,b\n\"x\"y,2\n",
                R"( line 2: text after a quoted field's closing quote: "y,2")"},
        Refused{
            "a quote inside a field", F::csv, "a,b\n5'10\",2\n",
            R"( line 2: a quote inside a field that does not begin with one (quote the whole field and double the quote inside): "5'10",2")"},
        Refused{"a lone carriage return", F::csv, "a,b\r1,2\n",
                R"( line 1: a carriage return not followed by a line feed: "a,b\x0d1,2")"},
        Refused{
            "a bad column name", F::csv, "name,e mail\nalice,a@x\n",
            R"( line 1: column "e mail" is not a name: want [A-Za-z_][A-Za-z0-9_-]*, at most 64 bytes)"},
        Refused{
            "an empty column name", F::csv, "name,\nalice,a@x\n",
            R"( line 1: column "" is not a name: want [A-Za-z_][A-Za-z0-9_-]*, at most 64 bytes)"},
        Refused{"a built-in's name", F::csv, "vu\n1\n",
                R"( line 1: column "vu" is the name of a built-in)"},
        Refused{"a column twice", F::csv, "id,name,id\n1,2,3\n",
                R"( line 1: column "id" is named twice)"}));

INSTANTIATE_TEST_SUITE_P(
    JsonLines, RefuseDataTable,
    ::testing::Values(
        Refused{"empty", F::jsonl, "\n \n", ": empty: want a JSON object on each line"},
        Refused{"not an object", F::jsonl, "{\"a\": 1}\n[1, 2]\n",
                R"( line 2: not a flat JSON object: want "{" at "[1, 2]")"},
        Refused{
            "a nested object", F::jsonl, "{\"a\": 1}\n{\"a\": {\"b\": 2}}\n",
            R"( line 2: the value of "a" is an object: want a string, number, boolean or null)"},
        Refused{"an array", F::jsonl, "{\"a\": [1]}\n",
                R"( line 1: the value of "a" is an array: want a string, number, boolean or null)"},
        Refused{
            "an unknown key", F::jsonl, "{\"a\": 1}\n\n{\"a\": 2, \"b\": 3}\n",
            R"( line 3: key "b" is not a column (the first line's keys are) in "{"a": 2, "b": 3}")"},
        Refused{"a key twice", F::jsonl, "{\"a\": 1, \"b\": 2}\n{\"a\": 1, \"a\": 2}\n",
                R"( line 2: key "a" is given twice in "{"a": 1, "a": 2}")"},
        Refused{"a key twice on the first line", F::jsonl, "{\"a\": 1, \"a\": 2}\n",
                R"( line 1: column "a" is named twice)"},
        Refused{"a bad number", F::jsonl, "{\"a\": 01}\n",
                R"( line 1: not a flat JSON object: want "," or "}" at "1}")"},
        Refused{
            "a bare word", F::jsonl, "{\"a\": yes}\n",
            R"( line 1: not a flat JSON object: want a string, number, boolean or null at "yes}")"},
        Refused{"an unclosed string", F::jsonl, "{\"a\": \"x}\n",
                R"( line 1: not a flat JSON object: want a closed string at ""x}")"},
        Refused{"a bad escape", F::jsonl, "{\"a\": \"\\q\"}\n",
                R"( line 1: not a flat JSON object: want a string with valid escapes at ""\q"}")"},
        Refused{
            "text after the object", F::jsonl, "{\"a\": 1} x\n",
            R"( line 1: not a flat JSON object: want the end of the line after the object at "x")"},
        Refused{"a missing colon", F::jsonl, "{\"a\" 1}\n",
                R"( line 1: not a flat JSON object: want ":" at "1}")"},
        Refused{"an empty first object", F::jsonl, "{}\n{\"a\": 1}\n",
                R"( line 1: the first line names no column: "{}")"},
        Refused{"a bad column name", F::jsonl, "{\"now\": 1}\n",
                R"( line 1: column "now" is the name of a built-in)"}));

TEST(DataTable, FindsAColumnByName) {
  const DataTable table = parsed(F::csv, "id,name\n1,alice\n");
  EXPECT_EQ(table.column_index("id"), 0u);
  EXPECT_EQ(table.column_index("name"), 1u);
  EXPECT_EQ(table.column_index("email"), std::nullopt);
}

TEST(DataTable, CutsALongBadLineInItsMessage) {
  std::string long_line;
  for (int field = 0; field < 30000; ++field) long_line += "xyz,";
  const std::string text = "a,b\n" + long_line + "\n";
  const auto result = DataTable::parse(kSource, F::csv, text);
  ASSERT_TRUE(std::holds_alternative<std::string>(result));
  const std::string& message = std::get<std::string>(result);
  EXPECT_LT(message.size(), 200u) << message;
  EXPECT_NE(message.find(" line 2: 30001 fields where the header has 2: \"xyz,xyz,"),
            std::string::npos)
      << message;
}

TEST(DataTable, RefusesACellOverItsLimit) {
  const std::string big(max_data_cell_bytes + 1, 'x');
  for (const std::string& text : {"a\n" + big + "\n", "a\n\"" + big + "\"\n"}) {
    const auto result = DataTable::parse(kSource, F::csv, text);
    ASSERT_TRUE(std::holds_alternative<std::string>(result));
    EXPECT_EQ(std::get<std::string>(result),
              std::string(kSource) +
                  " line 2: a cell of 65537 bytes, more than the 65536 a cell "
                  "may hold");
  }
  const auto json = DataTable::parse(kSource, F::jsonl, "{\"a\": \"" + big + "\"}");
  ASSERT_TRUE(std::holds_alternative<std::string>(json));
  EXPECT_EQ(std::get<std::string>(json),
            std::string(kSource) +
                " line 1: the value of \"a\": a cell of 65537 bytes, more "
                "than the 65536 a cell may hold");
  // At the limit it is a cell.
  const std::string fits(max_data_cell_bytes, 'x');
  EXPECT_EQ(parsed(F::csv, "a\n" + fits + "\n").cell(0, 0).size(), max_data_cell_bytes);
}

TEST(DataTable, RefusesMoreColumnsThanItsLimit) {
  std::string header;
  std::string row;
  for (std::size_t c = 0; c <= max_data_columns; ++c) {
    header += (c ? ",c" : "c") + std::to_string(c);
    row += c ? ",1" : "1";
  }
  const auto csv = DataTable::parse(kSource, F::csv, header + "\n" + row + "\n");
  ASSERT_TRUE(std::holds_alternative<std::string>(csv));
  EXPECT_EQ(std::get<std::string>(csv),
            std::string(kSource) + " line 1: 65 columns, more than the 64 a data source may have");
  std::string object = "{";
  for (std::size_t c = 0; c <= max_data_columns; ++c) {
    object += (c ? ",\"c" : "\"c") + std::to_string(c) + "\":1";
  }
  const auto json = DataTable::parse(kSource, F::jsonl, object + "}");
  ASSERT_TRUE(std::holds_alternative<std::string>(json));
  EXPECT_TRUE(std::get<std::string>(json).starts_with(
      std::string(kSource) + " line 1: more than the 64 columns a data source may have: "))
      << std::get<std::string>(json);
}

TEST(DataTable, ReadsEveryRowOfALargerFile) {
  std::string text = "id,name,email\n";
  for (int r = 0; r < 10000; ++r) {
    text += std::to_string(r) + ",user" + std::to_string(r) + ",u" + std::to_string(r) + "@x\n";
  }
  const DataTable table = parsed(F::csv, text);
  ASSERT_EQ(table.rows(), 10000u);
  EXPECT_EQ(table.cell(9999, 0), "9999");
  EXPECT_EQ(table.cell(9999, 1), "user9999");
  EXPECT_EQ(table.cell(9999, 2), "u9999@x");
  EXPECT_EQ(table.cell(0, 2), "u0@x");
}

}  // namespace
}  // namespace kubeload::scenario
