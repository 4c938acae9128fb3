// Test data files against arbitrary text: the first byte picks the format
// (even: CSV, odd: JSON lines), the rest is the file. Parsing gives a table
// or one line of message naming the source; a table's cells together are
// never more than the file's bytes, every column is found by its name, and
// the table written back out (every field quoted, every value a JSON string)
// parses to the same table.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "common/scenario/data_table.hpp"

namespace {

using kubeload::scenario::DataFormat;
using kubeload::scenario::DataTable;

void append_csv_field(std::string_view cell, std::string& out) {
  out += '"';
  for (const char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_json_string(std::string_view text, std::string& out) {
  static constexpr std::string_view hex = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      out += "\\u00";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
}

std::string written(const DataTable& table, DataFormat format) {
  std::string out;
  const auto columns = table.columns();
  if (format == DataFormat::csv) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) out += ',';
      append_csv_field(columns[c], out);
    }
    out += "\r\n";
  }
  for (std::size_t r = 0; r < table.rows(); ++r) {
    if (format == DataFormat::jsonl) out += '{';
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) out += ',';
      if (format == DataFormat::csv) {
        append_csv_field(table.cell(r, c), out);
      } else {
        append_json_string(columns[c], out);
        out += ':';
        append_json_string(table.cell(r, c), out);
      }
    }
    out += format == DataFormat::csv ? "\r\n" : "}\n";
  }
  return out;
}

bool same(const DataTable& a, const DataTable& b) {
  if (a.rows() != b.rows() || a.columns().size() != b.columns().size()) return false;
  for (std::size_t c = 0; c < a.columns().size(); ++c) {
    if (a.columns()[c] != b.columns()[c]) return false;
  }
  for (std::size_t r = 0; r < a.rows(); ++r) {
    for (std::size_t c = 0; c < a.columns().size(); ++c) {
      if (a.cell(r, c) != b.cell(r, c)) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const DataFormat format = (data[0] & 1) != 0 ? DataFormat::jsonl : DataFormat::csv;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto parsed = DataTable::parse("fuzz", format, text);
  if (const auto* message = std::get_if<std::string>(&parsed)) {
    if (!message->starts_with("fuzz") || message->find('\n') != std::string::npos) std::abort();
    return 0;
  }
  const DataTable& table = std::get<DataTable>(parsed);
  if (table.rows() == 0 || table.columns().empty()) std::abort();
  std::size_t bytes = 0;
  for (std::size_t r = 0; r < table.rows(); ++r) {
    for (std::size_t c = 0; c < table.columns().size(); ++c) bytes += table.cell(r, c).size();
  }
  if (bytes > text.size()) std::abort();
  for (std::size_t c = 0; c < table.columns().size(); ++c) {
    if (table.column_index(table.columns()[c]) != c) std::abort();
  }
  const auto again = DataTable::parse("fuzz", format, written(table, format));
  if (!std::holds_alternative<DataTable>(again) || !same(table, std::get<DataTable>(again))) {
    std::abort();
  }
  return 0;
}
