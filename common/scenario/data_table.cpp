#include "common/scenario/data_table.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "common/scenario/json_pointer.hpp"
#include "common/scenario/message.hpp"
#include "common/scenario/template.hpp"

namespace kubeload::scenario {

// Fills a DataTable cell by cell and says what is wrong, by line.
class DataTableBuilder {
 public:
  DataTableBuilder(std::string_view source_name, std::string_view text)
      : source_name_(source_name), text_(text) {}

  std::string error(std::size_t line, std::string_view what) const {
    return std::string(source_name_) + " line " + std::to_string(line) + ": " + std::string(what);
  }
  // A problem of the whole text, not of one line.
  std::string error(std::string_view what) const {
    return std::string(source_name_) + ": " + std::string(what);
  }

  // Before the rows: capacity for the whole text at once, so that a million
  // rows grow nothing (the offsets for as many rows as the text has lines).
  void reserve(std::size_t columns) {
    table_.bytes_.reserve(text_.size());
    const auto lines = static_cast<std::size_t>(std::count(text_.begin(), text_.end(), '\n')) + 1;
    table_.cell_starts_.reserve(lines * columns + 1);
  }

  std::string& bytes() { return table_.bytes_; }
  void begin_cell() { table_.cell_starts_.push_back(static_cast<std::uint32_t>(size())); }
  std::size_t size() const { return table_.bytes_.size(); }
  std::size_t cells() const { return table_.cell_starts_.size(); }
  std::size_t rows() const { return table_.rows_; }
  std::size_t columns() const { return table_.columns_.size(); }

  // The cells from `first_cell` on become the columns' names: checked, then
  // taken out of the cell storage.
  std::optional<std::string> take_header(std::size_t first_cell, std::size_t line) {
    std::vector<std::string>& names = table_.columns_;
    for (std::size_t cell = first_cell; cell < cells(); ++cell) {
      const std::size_t end = cell + 1 < cells() ? table_.cell_starts_[cell + 1] : size();
      names.emplace_back(std::string_view(table_.bytes_)
                             .substr(table_.cell_starts_[cell], end - table_.cell_starts_[cell]));
    }
    table_.cell_starts_.resize(first_cell);
    table_.bytes_.clear();
    return check_columns(line);
  }
  void add_column(std::string name) { table_.columns_.push_back(std::move(name)); }
  std::optional<std::string> check_columns(std::size_t line) const {
    const std::vector<std::string>& names = table_.columns_;
    if (names.size() > max_data_columns) {
      return error(line, std::to_string(names.size()) + " columns, more than the " +
                             std::to_string(max_data_columns) + " a data source may have");
    }
    for (std::size_t c = 0; c < names.size(); ++c) {
      if (auto problem = check_name(names[c])) return error(line, "column " + *problem);
      if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(c), names[c]) !=
          names.begin() + static_cast<std::ptrdiff_t>(c)) {
        return error(line, "column " + quoted(names[c]) + " is named twice");
      }
    }
    return std::nullopt;
  }

  // Before a row begins: whether one more fits.
  std::optional<std::string> check_row_count(std::size_t line) const {
    if (table_.rows_ < max_data_rows) return std::nullopt;
    return error(line,
                 "more than the " + std::to_string(max_data_rows) + " rows a data source may have");
  }
  void end_row() { ++table_.rows_; }

  std::variant<DataTable, std::string> finish() {
    if (table_.rows_ == 0) return error("no rows after the header");
    table_.cell_starts_.push_back(static_cast<std::uint32_t>(size()));
    return std::move(table_);
  }

  DataTable& table() { return table_; }

 private:
  std::string_view source_name_;
  std::string_view text_;
  DataTable table_;
};

namespace {

constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";

std::string cell_too_big(std::size_t bytes) {
  return "a cell of " + std::to_string(bytes) + " bytes, more than the " +
         std::to_string(max_data_cell_bytes) + " a cell may hold";
}

// The line from `start` to its end (without the line break), for a message.
std::string_view line_at(std::string_view text, std::size_t start) {
  std::string_view line = text.substr(std::min(start, text.size()));
  line = line.substr(0, line.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// ---- CSV (RFC 4180)

class CsvReader {
 public:
  CsvReader(DataTableBuilder& out, std::string_view text) : out_(out), text_(text) {
    for (const char c : {',', '"', '\r', '\n'}) special_[static_cast<unsigned char>(c)] = true;
  }

  std::optional<std::string> read() {
    if (text_.starts_with(utf8_bom)) at_ = utf8_bom.size();
    if (only_line_breaks_left())
      return out_.error("empty: want a header line with the columns' names");
    std::size_t fields = 0;
    const std::size_t header_line = line_;
    if (auto problem = read_record(fields)) return problem;
    if (auto problem = out_.take_header(0, header_line)) return problem;
    out_.reserve(out_.columns());
    while (!only_line_breaks_left()) {
      const std::size_t record_start = at_;
      const std::size_t record_line = line_;
      if (auto problem = out_.check_row_count(record_line)) return problem;
      if (auto problem = read_record(fields)) return problem;
      if (fields != out_.columns()) {
        return out_.error(record_line,
                          std::to_string(fields) + (fields == 1 ? " field" : " fields") +
                              " where the header has " + std::to_string(out_.columns()) + ": " +
                              quoted(line_at(text_, record_start)));
      }
      out_.end_row();
    }
    return std::nullopt;
  }

 private:
  // Whether nothing but line breaks is left: empty lines at the end are no rows.
  bool only_line_breaks_left() const {
    return std::all_of(text_.begin() + static_cast<std::ptrdiff_t>(at_), text_.end(),
                       [](char c) { return c == '\n' || c == '\r'; });
  }

  // One record from at_, through its line break; its fields appended as cells.
  std::optional<std::string> read_record(std::size_t& fields) {
    fields = 0;
    for (;;) {
      out_.begin_cell();
      ++fields;
      const std::size_t cell_start = out_.size();
      if (at_ < text_.size() && text_[at_] == '"') {
        if (auto problem = read_quoted()) return problem;
      } else {
        std::size_t end = at_;
        while (end < text_.size() && !special_[static_cast<unsigned char>(text_[end])]) ++end;
        out_.bytes().append(text_.data() + at_, end - at_);
        if (end < text_.size() && text_[end] == '"') {
          return out_.error(line_,
                            "a quote inside a field that does not begin with one (quote "
                            "the whole field and double the quote inside): " +
                                quoted(line_at(text_, line_start_)));
        }
        at_ = end;
      }
      if (out_.size() - cell_start > max_data_cell_bytes) {
        return out_.error(line_, cell_too_big(out_.size() - cell_start));
      }
      if (at_ == text_.size()) return std::nullopt;
      if (text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (text_[at_] == '\r') {
        if (at_ + 1 == text_.size() || text_[at_ + 1] != '\n') {
          return out_.error(line_, "a carriage return not followed by a line feed: " +
                                       quoted(line_at(text_, line_start_)));
        }
        ++at_;
      }
      // text_[at_] is '\n' here: what ends an unquoted field and is not ',' or '"'.
      ++at_;
      next_line();
      return std::nullopt;
    }
  }

  // A quoted field from its opening quote at at_, through its closing one.
  std::optional<std::string> read_quoted() {
    const std::size_t opened_line = line_;
    const std::size_t opened_at = at_;
    ++at_;
    for (;;) {
      const std::size_t quote = text_.find('"', at_);
      if (quote == std::string_view::npos) {
        return out_.error(opened_line,
                          "a quoted field is not closed: " + quoted(line_at(text_, opened_at)));
      }
      const std::string_view piece = text_.substr(at_, quote - at_);
      out_.bytes().append(piece);
      for (std::size_t i = piece.find('\n'); i != std::string_view::npos;
           i = piece.find('\n', i + 1)) {
        ++line_;
        line_start_ = at_ + i + 1;
      }
      if (quote + 1 < text_.size() && text_[quote + 1] == '"') {
        out_.bytes() += '"';
        at_ = quote + 2;
        continue;
      }
      at_ = quote + 1;
      break;
    }
    if (at_ < text_.size() && text_[at_] != ',' && text_[at_] != '\n' && text_[at_] != '\r') {
      return out_.error(
          line_, "text after a quoted field's closing quote: " + quoted(line_at(text_, at_)));
    }
    return std::nullopt;
  }

  void next_line() {
    ++line_;
    line_start_ = at_;
  }

  DataTableBuilder& out_;
  std::string_view text_;
  std::size_t at_ = 0;
  std::size_t line_ = 1;             // of at_, 1-based
  std::size_t line_start_ = 0;       // where line_ begins
  std::array<bool, 256> special_{};  // the bytes that end an unquoted field's run
};

// ---- JSON lines

bool is_json_space(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// The end of a JSON number from `i` (RFC 8259's grammar), or npos.
std::size_t number_end(std::string_view s, std::size_t i) {
  constexpr std::size_t npos = std::string_view::npos;
  const auto digit = [&](std::size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  if (i < s.size() && s[i] == '-') ++i;
  if (!digit(i)) return npos;
  if (s[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < s.size() && s[i] == '.') {
    if (!digit(++i)) return npos;
    while (digit(i)) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digit(i)) return npos;
    while (digit(i)) ++i;
  }
  return i;
}

// From the opening quote at `i`: just past the closing one, or npos. Control
// bytes are not allowed raw in a JSON string.
std::size_t string_end(std::string_view s, std::size_t i) {
  for (++i; i < s.size(); ++i) {
    const auto byte = static_cast<unsigned char>(s[i]);
    if (byte == '\\') {
      ++i;
    } else if (byte == '"') {
      return i + 1;
    } else if (byte < 0x20) {
      return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

class JsonLinesReader {
 public:
  JsonLinesReader(DataTableBuilder& out, std::string_view text) : out_(out), text_(text) {}

  std::optional<std::string> read() {
    std::size_t at = text_.starts_with(utf8_bom) ? utf8_bom.size() : 0;
    bool have_columns = false;
    for (std::size_t line_number = 1; at <= text_.size(); ++line_number) {
      std::size_t end = text_.find('\n', at);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(at, end - at);
      at = end + 1;
      while (!line.empty() && (is_json_space(line.back()))) line.remove_suffix(1);
      while (!line.empty() && (is_json_space(line.front()))) line.remove_prefix(1);
      if (line.empty()) continue;
      if (auto problem = read_object(line, line_number)) return problem;
      if (!have_columns) {
        for (const Member& member : members_) add_column(member.key);
        if (auto problem = out_.check_columns(line_number)) return problem;
        if (out_.columns() == 0) {
          return out_.error(line_number, "the first line names no column: " + quoted(line));
        }
        out_.reserve(out_.columns());
        have_columns = true;
      }
      if (auto problem = out_.check_row_count(line_number)) return problem;
      if (auto problem = store_row(line, line_number)) return problem;
      out_.end_row();
    }
    if (!have_columns) return out_.error("empty: want a JSON object on each line");
    return std::nullopt;
  }

 private:
  // A member of the line's object, as ranges of scratch_.
  struct Range {
    std::size_t offset = 0;
    std::size_t length = 0;
  };
  struct Member {
    Range key;
    Range value;
  };

  void add_column(Range key) {
    out_.add_column(std::string(std::string_view(scratch_).substr(key.offset, key.length)));
  }
  std::string_view text_of(Range range) const {
    return std::string_view(scratch_).substr(range.offset, range.length);
  }

  // The line's members into members_ (keys and values unescaped into scratch_).
  std::optional<std::string> read_object(std::string_view line, std::size_t line_number) {
    scratch_.clear();
    members_.clear();
    const auto bad = [&](std::size_t at, std::string_view want) {
      return out_.error(line_number, "not a flat JSON object: want " + std::string(want) + " at " +
                                         quoted(line.substr(std::min(at, line.size()))));
    };
    const auto skip_space = [&](std::size_t i) {
      while (i < line.size() && is_json_space(line[i])) ++i;
      return i;
    };
    std::size_t i = 0;
    if (line[i] != '{') return bad(i, "\"{\"");
    i = skip_space(i + 1);
    const auto finish_object = [&](std::size_t after) -> std::optional<std::string> {
      after = skip_space(after);
      if (after != line.size()) return bad(after, "the end of the line after the object");
      return std::nullopt;
    };
    if (i < line.size() && line[i] == '}') return finish_object(i + 1);
    for (;;) {
      if (members_.size() == max_data_columns) {
        return out_.error(line_number, "more than the " + std::to_string(max_data_columns) +
                                           " columns a data source may have: " + quoted(line));
      }
      Member member;
      if (i >= line.size() || line[i] != '"') return bad(i, "a quoted key");
      std::size_t end = string_end(line, i);
      if (end == std::string_view::npos) return bad(i, "a closed string");
      member.key.offset = scratch_.size();
      if (!append_json_text(JsonValue{JsonType::string, line.substr(i, end - i)}, scratch_)) {
        return bad(i, "a string with valid escapes");
      }
      member.key.length = scratch_.size() - member.key.offset;
      i = skip_space(end);
      if (i >= line.size() || line[i] != ':') return bad(i, "\":\"");
      i = skip_space(i + 1);
      member.value.offset = scratch_.size();
      const char first = i < line.size() ? line[i] : '\0';
      if (first == '"') {
        end = string_end(line, i);
        if (end == std::string_view::npos) return bad(i, "a closed string");
        if (!append_json_text(JsonValue{JsonType::string, line.substr(i, end - i)}, scratch_)) {
          return bad(i, "a string with valid escapes");
        }
      } else if (first == '{' || first == '[') {
        return out_.error(line_number, "the value of " + quoted(text_of(member.key)) + " is " +
                                           (first == '{' ? "an object" : "an array") +
                                           ": want a string, number, boolean or null");
      } else if (line.substr(i, 4) == "null") {
        end = i + 4;  // an empty cell
      } else if (line.substr(i, 4) == "true" || line.substr(i, 5) == "false") {
        end = i + (first == 't' ? 4 : 5);
        scratch_.append(line.substr(i, end - i));
      } else {
        end = number_end(line, i);
        if (end == std::string_view::npos) {
          return bad(i, "a string, number, boolean or null");
        }
        scratch_.append(line.substr(i, end - i));
      }
      member.value.length = scratch_.size() - member.value.offset;
      if (member.value.length > max_data_cell_bytes) {
        return out_.error(line_number, "the value of " + quoted(text_of(member.key)) + ": " +
                                           cell_too_big(member.value.length));
      }
      members_.push_back(member);
      i = skip_space(end);
      if (i < line.size() && line[i] == ',') {
        i = skip_space(i + 1);
        continue;
      }
      if (i < line.size() && line[i] == '}') return finish_object(i + 1);
      return bad(i, "\",\" or \"}\"");
    }
  }

  // members_ as a row, in the columns' order; a column the line leaves out
  // is empty.
  std::optional<std::string> store_row(std::string_view line, std::size_t line_number) {
    std::array<const Member*, max_data_columns> by_column{};
    const std::size_t columns = out_.columns();
    for (std::size_t m = 0; m < members_.size(); ++m) {
      const std::string_view key = text_of(members_[m].key);
      // Lines usually repeat the first line's order: try that column first.
      std::size_t column = m;
      if (column >= columns || out_.table().columns()[column] != key) {
        const auto names = out_.table().columns();
        column =
            static_cast<std::size_t>(std::find(names.begin(), names.end(), key) - names.begin());
      }
      if (column == columns) {
        return out_.error(line_number, "key " + quoted(key) +
                                           " is not a column (the first line's keys are) in " +
                                           quoted(line));
      }
      if (by_column[column] != nullptr) {
        return out_.error(line_number, "key " + quoted(key) + " is given twice in " + quoted(line));
      }
      by_column[column] = &members_[m];
    }
    for (std::size_t column = 0; column < columns; ++column) {
      out_.begin_cell();
      if (by_column[column] != nullptr) out_.bytes().append(text_of(by_column[column]->value));
    }
    return std::nullopt;
  }

  DataTableBuilder& out_;
  std::string_view text_;
  std::string scratch_;          // the current line's keys and values, unescaped
  std::vector<Member> members_;  // the current line's, in the line's order
};

}  // namespace

std::variant<DataTable, std::string> DataTable::parse(std::string_view source_name,
                                                      DataFormat format, std::string_view text) {
  DataTableBuilder builder(source_name, text);
  if (text.size() > max_data_bytes) {
    return builder.error(std::to_string(text.size()) + " bytes, more than the " +
                         std::to_string(max_data_bytes) + " a data source may have");
  }
  std::optional<std::string> problem;
  if (format == DataFormat::csv) {
    problem = CsvReader(builder, text).read();
  } else {
    problem = JsonLinesReader(builder, text).read();
  }
  if (problem) return *std::move(problem);
  return builder.finish();
}

std::optional<std::size_t> DataTable::column_index(std::string_view name) const {
  const auto found = std::find(columns_.begin(), columns_.end(), name);
  if (found == columns_.end()) return std::nullopt;
  return static_cast<std::size_t>(found - columns_.begin());
}

}  // namespace kubeload::scenario
