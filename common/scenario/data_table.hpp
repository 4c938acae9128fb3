#pragma once
// Test data for scenarios (docs/scenarios.md#test-data): the rows of a CSV or
// JSON-lines file, which templates read as ${SOURCE.COLUMN}. Pure: the caller
// reads the file (and bounds its size) and hands over its text.
//
// Held once: every cell's bytes back to back in one buffer, and one 32-bit
// offset per cell, so a million rows cost little more than the file itself
// (no string, no allocation per cell), and a cell is found in O(1).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kubeload::scenario {

// The two formats of spec.data[].format.
enum class DataFormat : std::uint8_t { csv, jsonl };

// A row is one user's record (a name, a password, an id), read into a
// template's vocabulary; each row change re-points every column of a virtual
// user, so the columns bound that work. 64 is more than such a record needs,
// and a JSON line's columns fit one 64-bit mask.
inline constexpr std::size_t max_data_columns = 64;
// A cell goes into a request (a path, a header, a body). 64 KiB is more than
// a server takes in a header line or a user record holds, and bounds what one
// reference adds to a request.
inline constexpr std::size_t max_data_cell_bytes = 64 * 1024;
// Rows are handed out by 64-bit counters, so this is not arithmetic: it keeps
// a worker from being asked to hold a table beyond its memory (100 million
// rows are gigabytes) and says so clearly instead of failing allocation.
inline constexpr std::size_t max_data_rows = 100'000'000;
// The cells' offsets are 32-bit (half the memory of size_t's), so the text
// must be under 4 GiB. The caller bounds files well below this (a ConfigMap
// holds 1 MiB); this is the table's own limit, checked too.
inline constexpr std::size_t max_data_bytes = UINT32_MAX;

class DataTable {
 public:
  // The table of `text`, or why not, naming the source, the line and the
  // bad text (cut when long):
  //   data source "users" (users.csv) line 7: 2 fields where the header has 3: "alice,pw"
  // `source_name` is how messages name the data ("data source \"users\"
  // (users.csv)").
  //
  // CSV (RFC 4180): the first line is the header, the columns' names; fields
  // are separated by commas, lines by CRLF or LF; a field in double quotes
  // may hold commas, line breaks and "" (one quote). A UTF-8 byte order mark
  // is skipped; empty lines at the end are not rows; every row has the
  // header's number of fields.
  //
  // JSON lines: each non-empty line is one flat JSON object whose values are
  // strings (unescaped), numbers or booleans (their JSON text) or null
  // (empty). The first line's keys, in order, are the columns; a later line
  // may leave one out (empty) but not name another.
  //
  // Column names follow check_name (template.hpp), and no name twice. A
  // table has at least one row.
  static std::variant<DataTable, std::string> parse(std::string_view source_name, DataFormat format,
                                                    std::string_view text);

  std::size_t rows() const { return rows_; }
  // The columns' names, in order.
  std::span<const std::string> columns() const { return columns_; }
  std::optional<std::size_t> column_index(std::string_view name) const;
  // The text of a cell; row < rows(), column < columns().size().
  std::string_view cell(std::size_t row, std::size_t column) const {
    const std::size_t index = row * columns_.size() + column;
    return std::string_view(bytes_).substr(cell_starts_[index],
                                           cell_starts_[index + 1] - cell_starts_[index]);
  }

 private:
  friend class DataTableBuilder;
  std::vector<std::string> columns_;
  std::size_t rows_ = 0;
  std::string bytes_;  // every cell's bytes, row after row, column after column
  // Where cell i (row * columns + column) begins in bytes_; one more entry
  // than cells, so cell i ends where cell i + 1 begins.
  std::vector<std::uint32_t> cell_starts_;
};

}  // namespace kubeload::scenario
