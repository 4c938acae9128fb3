// kubectl's JSONPath templates: parsed once into pieces, then run over the
// object. Hand-written because no Debian package reads kubectl's dialect
// (jsoncons' JSONPath is Goessner's, without {range}, text or kubectl's printing).

#include "plugin/jsonpath.hpp"

#include <charconv>
#include <regex>

#include "plugin/go_json.hpp"

namespace kubeload::plugin {
namespace {

using nlohmann::json;
using Step = JsonPath::Step;
using Piece = JsonPath::Piece;

// client-go's isTerminator: what ends a field name.
bool ends_field(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\r':
    case '\n':
    case '.':
    case ',':
    case '[':
    case ']':
    case '$':
    case '@':
    case '{':
    case '}':
      return true;
    default:
      return false;
  }
}

bool is_word_char(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

std::string in_quotes(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

Step step_of(Step::Kind kind, std::string text = {}) {
  Step step;
  step.kind = kind;
  step.text = std::move(text);
  return step;
}

Piece text_piece(std::string text) {
  Piece piece;
  piece.text = std::move(text);
  return piece;
}

// Parses one {...} at `pos` (just after the '{'); leaves `pos` after the '}'.
class ActionParser {
 public:
  ActionParser(std::string_view input, size_t& pos) : input_(input), pos_(pos) {}

  Piece parse() {
    Piece piece;
    piece.kind = Piece::Kind::path;
    skip_spaces();
    if (const std::string word = peek_word(); word == "range" || word == "end") {
      pos_ += word.size();
      piece.kind = word == "range" ? Piece::Kind::range : Piece::Kind::end;
    }
    while (true) {
      if (pos_ >= input_.size() || input_[pos_] == '\n' || input_[pos_] == '\r') {
        throw JsonPathError("unclosed action: a '{' without its '}'");
      }
      const char c = input_[pos_];
      if (c == '}') {
        ++pos_;
        break;
      }
      if (piece.kind == Piece::Kind::end && c != ' ' && c != '\t') {
        throw JsonPathError("{end} takes nothing after it, got " +
                            in_quotes(input_.substr(pos_, 1)));
      }
      if (c == ' ' || c == '\t' || c == '@' || c == '$') {
        ++pos_;
      } else if (input_.substr(pos_, 2) == "..") {
        throw JsonPathError("recursive descent \"..\" is not supported");
      } else if (input_.substr(pos_, 3) == "[?(") {
        piece.steps.push_back(filter());
      } else if (c == '.') {
        ++pos_;
        piece.steps.push_back(field());
      } else if (c == '[') {
        piece.steps.push_back(bracket());
      } else if (c == '"' || c == '\'') {
        piece.steps.push_back(step_of(Step::Kind::text, quoted_text(c)));
      } else if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
        throw JsonPathError("number literals are not supported, got " + in_quotes(rest_word()));
      } else if (is_word_char(c)) {
        const std::string word = peek_word();
        if (word == "true" || word == "false") {
          throw JsonPathError("bool literals are not supported, got \"" + word + "\"");
        }
        throw JsonPathError("unrecognized identifier \"" + word +
                            "\" (range and end come first in their {...})");
      } else {
        throw JsonPathError("unrecognized character in action: " +
                            in_quotes(input_.substr(pos_, 1)));
      }
    }
    return piece;
  }

 private:
  void skip_spaces() {
    while (pos_ < input_.size() && (input_[pos_] == ' ' || input_[pos_] == '\t')) ++pos_;
  }
  std::string peek_word() const {
    size_t end = pos_;
    while (end < input_.size() && is_word_char(input_[end])) ++end;
    return std::string(input_.substr(pos_, end - pos_));
  }
  std::string rest_word() const {
    size_t end = pos_ + 1;
    while (end < input_.size() && !ends_field(input_[end])) ++end;
    return std::string(input_.substr(pos_, end - pos_));
  }

  // After a '.': the name up to a terminator; a backslash keeps the next character.
  Step field() {
    std::string name;
    while (pos_ < input_.size() && !ends_field(input_[pos_])) {
      if (input_[pos_] == '\\' && pos_ + 1 < input_.size()) ++pos_;
      name += input_[pos_++];
    }
    if (name == "*") return step_of(Step::Kind::wildcard);
    if (name.empty()) {
      throw JsonPathError("a '.' without a field name ({@} is the current object)");
    }
    return step_of(Step::Kind::field, std::move(name));
  }

  Step bracket() {
    const size_t close = input_.find(']', pos_);
    const size_t newline = input_.find('\n', pos_);
    if (close == std::string_view::npos || newline < close) {
      throw JsonPathError("unterminated array: a '[' without its ']'");
    }
    const std::string inside(input_.substr(pos_ + 1, close - pos_ - 1));
    pos_ = close + 1;
    if (inside.find(',') != std::string::npos) {
      throw JsonPathError("unions \"[" + inside + "]\" are not supported");
    }
    if (inside.size() >= 2 && inside.front() == '\'' && inside.back() == '\'') {
      return step_of(Step::Kind::field, inside.substr(1, inside.size() - 2));
    }
    if (inside == "*") {
      Step step = step_of(Step::Kind::wildcard);
      step.array_only = true;
      return step;
    }
    // [N], [N:M], [N:M:S], each part optional (client-go's sliceOperatorRex).
    Step step = step_of(Step::Kind::slice);
    std::vector<std::string> parts;
    size_t from = 0;
    for (size_t colon; (colon = inside.find(':', from)) != std::string::npos; from = colon + 1) {
      parts.push_back(inside.substr(from, colon - from));
    }
    parts.push_back(inside.substr(from));
    if (parts.size() > 3) throw JsonPathError("invalid array index \"[" + inside + "]\"");
    std::optional<long>* const bounds[] = {&step.start, &step.end, &step.step};
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string& part = parts[i];
      if (part.empty()) continue;
      long value = 0;
      const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
      if (ec != std::errc() || end != part.data() + part.size()) {
        throw JsonPathError("invalid array index \"[" + inside + "]\"");
      }
      *bounds[i] = value;
    }
    if (parts.size() == 1) {
      if (!step.start) throw JsonPathError("invalid array index \"[]\"");
      step.end = *step.start + 1;
      step.end_derived = true;
    }
    if (step.step && *step.step <= 0)
      throw JsonPathError("step must be > 0 in \"[" + inside + "]\"");
    return step;
  }

  // [?(LEFT)] or [?(LEFT OP RIGHT)], as client-go splits it: the ')' that
  // ends it is the first outside a quoted text.
  Step filter() {
    const size_t begin = pos_ + 3;
    size_t i = begin;
    char quote = 0;
    for (; i < input_.size() && input_[i] != '\n'; ++i) {
      const char c = input_[i];
      if (quote) {
        if (c == quote && input_[i - 1] != '\\') quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == ')') {
        break;
      }
    }
    if (i >= input_.size() || input_[i] != ')') throw JsonPathError("unterminated filter");
    if (i + 1 >= input_.size() || input_[i + 1] != ']') {
      throw JsonPathError("unclosed filter: expected ']' after ')'");
    }
    const std::string text(input_.substr(begin, i - begin));
    pos_ = i + 2;
    static const std::regex kComparison(R"(^([^!<>=]+)([!<>=~]+)(.+?)$)");
    std::smatch match;
    Step step = step_of(Step::Kind::filter);
    if (!std::regex_match(text, match, kComparison)) {
      step.left = path_of(text);
      return step;
    }
    step.op = match[2];
    if (step.op != "==" && step.op != "!=" && step.op != "<" && step.op != ">" && step.op != "<=" &&
        step.op != ">=") {
      throw JsonPathError("filter operator \"" + step.op + "\" in \"[?(" + text +
                          ")]\" is not supported (==, !=, <, >, <=, >=)");
    }
    step.left = path_of(match[1]);
    std::string right = match[3];
    while (!right.empty() && right.front() == ' ') right.erase(0, 1);
    while (!right.empty() && right.back() == ' ') right.pop_back();
    if (right == "true" || right == "false") {
      step.right_value = right == "true";
    } else if (!right.empty() && (right.front() == '"' || right.front() == '\'')) {
      std::vector<Step> literal = path_of(right);
      if (literal.size() != 1 || literal[0].kind != Step::Kind::text) {
        throw JsonPathError("a filter's value \"" + right + "\" is not one quoted text");
      }
      step.right_value = literal[0].text;
    } else if (!right.empty() && (right.front() == '-' || right.front() == '+' ||
                                  (right.front() >= '0' && right.front() <= '9'))) {
      double number = 0;
      const char* first = right.data() + (right.front() == '+' ? 1 : 0);
      const auto [end, ec] = std::from_chars(first, right.data() + right.size(), number);
      if (ec != std::errc() || end != right.data() + right.size()) {
        throw JsonPathError("a filter's value \"" + right + "\" is not a number");
      }
      step.right_value = number;
    } else {
      step.right = path_of(right);
    }
    return step;
  }

  // The steps of a path inside a filter ("@.a.b"), parsed as an action of its own.
  static std::vector<Step> path_of(const std::string& text) {
    const std::string action = text + "}";
    size_t pos = 0;
    Piece piece = ActionParser(action, pos).parse();
    if (piece.kind != Piece::Kind::path) {
      throw JsonPathError("\"" + text + "\" in a filter is not a path");
    }
    return piece.steps;
  }

  // A quoted text with Go's escapes (\n \t \r \\ \" \').
  std::string quoted_text(char quote) {
    std::string text;
    size_t i = pos_ + 1;
    for (; i < input_.size() && input_[i] != quote; ++i) {
      if (input_[i] == '\n') break;
      if (input_[i] != '\\') {
        text += input_[i];
        continue;
      }
      if (++i >= input_.size()) break;
      switch (input_[i]) {
        case 'n':
          text += '\n';
          break;
        case 't':
          text += '\t';
          break;
        case 'r':
          text += '\r';
          break;
        case '\\':
        case '"':
        case '\'':
          text += input_[i];
          break;
        default:
          throw JsonPathError("unsupported escape \"\\" + std::string(1, input_[i]) +
                              "\" in a quoted text (\\n \\t \\r \\\\ \\\" \\')");
      }
    }
    if (i >= input_.size() || input_[i] != quote) {
      throw JsonPathError("unterminated quoted text starting " +
                          in_quotes(input_.substr(pos_, 12)));
    }
    pos_ = i + 1;
    return text;
  }

  std::string_view input_;
  size_t& pos_;
};

std::string type_name(const json& value) {
  if (value.is_object()) return "an object";
  if (value.is_string()) return "a string";
  if (value.is_number()) return "a number";
  if (value.is_boolean()) return "a bool";
  return "null";
}

using Values = std::vector<const json*>;
Values evaluate(const std::vector<Step>& steps, const json& data, std::vector<json>& texts);

// Go's template comparisons: numbers with numbers, strings with strings, bools
// only by == and !=; anything else is kubectl's "incompatible types".
bool compare(const json& left, const std::string& op, const json& right) {
  int order = 0;
  if (left.is_number() && right.is_number()) {
    const double a = left.get<double>(), b = right.get<double>();
    order = a < b ? -1 : (a > b ? 1 : 0);
  } else if (left.is_string() && right.is_string()) {
    order = left.get_ref<const std::string&>().compare(right.get_ref<const std::string&>());
  } else if (left.is_boolean() && right.is_boolean() && (op == "==" || op == "!=")) {
    order = left == right ? 0 : 1;
  } else {
    throw JsonPathError("incompatible types for comparison: " + left.dump() + " " + op + " " +
                        right.dump());
  }
  if (op == "==") return order == 0;
  if (op == "!=") return order != 0;
  if (op == "<") return order < 0;
  if (op == ">") return order > 0;
  if (op == "<=") return order <= 0;
  return order >= 0;
}

// client-go's evalFilter: the items of each array that pass.
void filter(const Step& step, const json& array, Values& out) {
  for (const json& item : array) {
    std::vector<json> texts;
    texts.reserve(step.left.size() + step.right.size());
    const Values lefts = evaluate(step.left, item, texts);
    if (step.op.empty()) {
      if (!lefts.empty()) out.push_back(&item);
      continue;
    }
    if (lefts.empty()) continue;
    if (lefts.size() > 1) throw JsonPathError("can only compare one element at a time");
    const json* right = nullptr;
    if (step.right_value) {
      right = &*step.right_value;
    } else {
      const Values rights = evaluate(step.right, item, texts);
      if (rights.empty()) continue;
      if (rights.size() > 1) throw JsonPathError("can only compare one element at a time");
      right = rights.front();
    }
    if (compare(*lefts.front(), step.op, *right)) out.push_back(&item);
  }
}

// client-go's evalArray: Python-like bounds, errors out of range.
void slice(const Step& step, const json& array, Values& out) {
  const long length = static_cast<long>(array.size());
  long start = step.start.value_or(0);
  if (start < 0) start += length;
  long end = step.end.value_or(length);
  if (step.end && (end < 0 || (end == 0 && step.end_derived))) end += length;
  if (end == start) return;
  if (start < 0 || start >= length) {
    throw JsonPathError("array index out of bounds: index " + std::to_string(start) + ", length " +
                        std::to_string(length));
  }
  if (end < 0 || end > length) {
    throw JsonPathError("array index out of bounds: index " + std::to_string(end - 1) +
                        ", length " + std::to_string(length));
  }
  if (start > end) {
    throw JsonPathError("starting index " + std::to_string(start) +
                        " is greater than ending index " + std::to_string(end));
  }
  for (long i = start; i < end; i += step.step.value_or(1)) out.push_back(&array[i]);
}

Values evaluate(const std::vector<Step>& steps, const json& data, std::vector<json>& texts) {
  Values values = {&data};
  for (const Step& step : steps) {
    Values next;
    switch (step.kind) {
      case Step::Kind::text:
        texts.emplace_back(step.text);
        next.push_back(&texts.back());
        break;
      case Step::Kind::field:
        for (const json* value : values) {
          if (!value->is_object()) continue;  // a missing key prints nothing, as in kubectl
          if (const auto found = value->find(step.text); found != value->end()) {
            next.push_back(&*found);
          }
        }
        break;
      case Step::Kind::wildcard:
        for (const json* value : values) {
          if (value->is_null()) continue;
          if (value->is_array() || (value->is_object() && !step.array_only)) {
            for (const json& item : *value) next.push_back(&item);
          } else {
            throw JsonPathError(std::string(step.array_only ? "[*]" : ".*") + " on " +
                                type_name(*value) + ", not " +
                                (step.array_only ? "an array" : "an object or array"));
          }
        }
        break;
      case Step::Kind::filter:
        for (const json* value : values) {
          if (value->is_null()) continue;
          if (!value->is_array()) {
            throw JsonPathError("a filter on " + type_name(*value) + ", not an array");
          }
          filter(step, *value, next);
        }
        break;
      case Step::Kind::slice:
        for (const json* value : values) {
          if (value->is_null()) continue;
          if (!value->is_array()) {
            throw JsonPathError("an index on " + type_name(*value) + ", not an array");
          }
          slice(step, *value, next);
        }
        break;
    }
    values = std::move(next);
  }
  return values;
}

// kubectl prints strings raw, objects and arrays as compact JSON, other
// scalars as Go's fmt.Print does.
void print_value(std::ostream& out, const json& value) {
  if (value.is_string()) {
    out << value.get_ref<const std::string&>();
  } else if (value.is_object() || value.is_array()) {
    out << go_json(value, false);
  } else if (value.is_number_float()) {
    out << go_float(value.get<double>());
  } else if (value.is_null()) {
    out << "<nil>";
  } else {
    out << value.dump();
  }
}

}  // namespace

JsonPath::JsonPath(std::string_view template_text) {
  std::vector<size_t> open_ranges;
  size_t pos = 0;
  std::string text;
  while (pos < template_text.size()) {
    if (template_text[pos] != '{') {
      text += template_text[pos++];
      continue;
    }
    if (!text.empty()) pieces_.push_back(text_piece(std::move(text)));
    text.clear();
    ++pos;
    Piece piece = ActionParser(template_text, pos).parse();
    if (piece.kind == Piece::Kind::range) {
      if (piece.steps.empty()) throw JsonPathError("{range} needs a path, e.g. {range .items[*]}");
      open_ranges.push_back(pieces_.size());
    } else if (piece.kind == Piece::Kind::end) {
      if (open_ranges.empty()) throw JsonPathError("{end} without a {range}: nothing to end");
      pieces_[open_ranges.back()].end_index = pieces_.size();
      open_ranges.pop_back();
    }
    pieces_.push_back(std::move(piece));
  }
  if (!text.empty()) pieces_.push_back(text_piece(std::move(text)));
  // As in kubectl, a {range} without {end} runs to the end of the template.
  for (const size_t open : open_ranges) pieces_[open].end_index = pieces_.size();
}

void JsonPath::execute(std::ostream& out, const nlohmann::json& data) const {
  run(out, 0, pieces_.size(), data);
}

void JsonPath::run(std::ostream& out, size_t begin, size_t end, const json& data) const {
  for (size_t i = begin; i < end; ++i) {
    const Piece& piece = pieces_[i];
    std::vector<json> texts;
    texts.reserve(piece.steps.size());  // evaluate points into it
    switch (piece.kind) {
      case Piece::Kind::text:
        out << piece.text;
        break;
      case Piece::Kind::path: {
        const Values values = evaluate(piece.steps, data, texts);
        for (size_t v = 0; v < values.size(); ++v) {
          if (v > 0) out << ' ';
          print_value(out, *values[v]);
        }
        break;
      }
      case Piece::Kind::range: {
        for (const json* item : evaluate(piece.steps, data, texts)) {
          run(out, i + 1, piece.end_index, *item);
        }
        i = piece.end_index;
        break;
      }
      case Piece::Kind::end:
        break;
    }
  }
}

}  // namespace kubeload::plugin
