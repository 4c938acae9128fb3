#include "common/scenario/template.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

#include "common/scenario/message.hpp"

namespace kubeload::scenario {
namespace {

constexpr bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
constexpr bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9') || c == '-';
}

bool is_builtin(std::string_view name) {
  return std::find(std::begin(builtin_names), std::end(builtin_names), name) !=
         std::end(builtin_names);
}

// The grammar alone, without the reserved names: a template's reference to a
// built-in is a name too.
bool is_name(std::string_view name) {
  return !name.empty() && name.size() <= max_name_bytes && is_name_start(name.front()) &&
         std::all_of(name.begin() + 1, name.end(), is_name_char);
}

std::string_view trim_spaces(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  text = trim_spaces(text);
  std::int64_t value = 0;
  const auto [end, failure] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || failure != std::errc{} || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

void append_decimal(std::uint64_t value, std::string& out) {
  std::array<char, 20> digits{};
  const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  out.append(digits.data(), result.ptr);
}

void append_decimal(std::int64_t value, std::string& out) {
  std::array<char, 20> digits{};
  const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  out.append(digits.data(), result.ptr);
}

// Resolves what stands between "${" and "}" to a segment, or says why not.
std::variant<Template::Segment, std::string> resolve(std::string_view inner,
                                                     const Vocabulary& vocabulary) {
  using Kind = Template::Kind;
  Template::Segment segment;
  if (inner.empty()) return std::string("empty reference");
  constexpr std::string_view random_open = "random(";
  if (inner.starts_with(random_open)) {
    if (!inner.ends_with(')')) return std::string("bad random: want random(A,B)");
    const std::string_view arguments =
        inner.substr(random_open.size(), inner.size() - random_open.size() - 1);
    const std::size_t comma = arguments.find(',');
    const auto low =
        comma == std::string_view::npos ? std::nullopt : parse_integer(arguments.substr(0, comma));
    const auto high =
        comma == std::string_view::npos ? std::nullopt : parse_integer(arguments.substr(comma + 1));
    if (!low || !high) {
      return std::string("bad random range: want random(A,B) with A and B 64-bit integers");
    }
    if (*low > *high) return std::string("bad random range: A is above B");
    segment.kind = Kind::random;
    segment.low = *low;
    segment.high = *high;
    return segment;
  }
  const std::size_t dot = inner.find('.');
  if (dot == std::string_view::npos) {
    if (!is_name(inner)) return std::string("bad name: want [A-Za-z_][A-Za-z0-9_-]*");
    static constexpr std::array<std::pair<std::string_view, Kind>, 5> builtins{{
        {"vu", Kind::vu},
        {"iteration", Kind::iteration},
        {"worker", Kind::worker},
        {"uuid", Kind::uuid},
        {"now", Kind::now},
    }};
    for (const auto& [builtin, kind] : builtins) {
      if (inner == builtin) {
        segment.kind = kind;
        return segment;
      }
    }
    if (inner == "random") return std::string("bad random: want random(A,B)");
    const auto& variables = vocabulary.variables;
    const auto found = std::find(variables.begin(), variables.end(), inner);
    if (found == variables.end()) return "unknown variable " + quoted(inner);
    segment.kind = Kind::variable;
    segment.offset = static_cast<std::size_t>(found - variables.begin());
    return segment;
  }
  const std::string_view source_name = inner.substr(0, dot);
  const std::string_view column_name = inner.substr(dot + 1);
  if (!is_name(source_name) || !is_name(column_name)) {
    return std::string("bad name: want SOURCE.COLUMN, each [A-Za-z_][A-Za-z0-9_-]*");
  }
  std::size_t slot = 0;
  for (const DataSource& source : vocabulary.sources) {
    if (source.name != source_name) {
      if (!source.any_column) slot += source.columns.size();
      continue;
    }
    if (source.any_column) {
      segment.kind = Kind::column;
      segment.offset = unresolved_slot;
      return segment;
    }
    const auto column = std::find(source.columns.begin(), source.columns.end(), column_name);
    if (column == source.columns.end()) {
      return "unknown column " + quoted(column_name) + " of data source " + quoted(source_name);
    }
    segment.kind = Kind::column;
    segment.offset = slot + static_cast<std::size_t>(column - source.columns.begin());
    return segment;
  }
  return "unknown data source " + quoted(source_name);
}

}  // namespace

std::optional<std::string> check_name(std::string_view name) {
  if (!is_name(name)) {
    return quoted(name) + " is not a name: want [A-Za-z_][A-Za-z0-9_-]*, at most " +
           std::to_string(max_name_bytes) + " bytes";
  }
  if (is_builtin(name)) return quoted(name) + " is the name of a built-in";
  return std::nullopt;
}

std::optional<std::string> check_column_name(std::string_view name) {
  if (!is_name(name)) return quoted(name) + " is not a name: want [A-Za-z_][A-Za-z0-9_-]*";
  return std::nullopt;
}

std::vector<std::string> check_vocabulary(const Vocabulary& vocabulary) {
  std::vector<std::string> problems;
  // Variables and sources share one namespace: ${x} and ${x.y} must not both
  // be readable as "x".
  std::set<std::string_view> taken;
  const auto declare = [&](std::string_view what, std::string_view name) {
    if (auto problem = check_name(name)) {
      problems.push_back(std::string(what) + ": " + *problem);
    } else if (!taken.insert(name).second) {
      problems.push_back(std::string(what) + ": " + quoted(name) + " is declared twice");
    }
  };
  for (const std::string& variable : vocabulary.variables) declare("variable", variable);
  for (const DataSource& source : vocabulary.sources) {
    declare("data source", source.name);
    std::set<std::string_view> columns;
    for (const std::string& column : source.columns) {
      const std::string what = "data source " + quoted(source.name) + " column";
      if (auto problem = check_column_name(column)) {
        problems.push_back(what + ": " + *problem);
      } else if (!columns.insert(column).second) {
        problems.push_back(what + ": " + quoted(column) + " is declared twice");
      }
    }
  }
  return problems;
}

std::variant<Template, std::string> Template::compile(std::string_view name, std::string_view text,
                                                      const Vocabulary& vocabulary) {
  Template compiled;
  compiled.variable_names_ = vocabulary.variables;
  std::vector<std::string> problems;
  std::size_t literal_start = 0;  // where the pending literal begins in literals_
  const auto flush_literal = [&] {
    if (compiled.literals_.size() > literal_start) {
      compiled.segments_.push_back(
          Segment{Kind::literal, literal_start, compiled.literals_.size() - literal_start, 0, 0});
    }
    literal_start = compiled.literals_.size();
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$') {
      // Copy up to the next '$' in one go.
      const std::size_t next = std::min(text.find('$', i), text.size());
      compiled.literals_.append(text.substr(i, next - i));
      i = next;
      continue;
    }
    if (text.substr(i, 3) == "$${") {
      compiled.literals_ += "${";
      i += 3;
      continue;
    }
    if (text.substr(i, 2) != "${") {
      compiled.literals_ += '$';
      ++i;
      continue;
    }
    const std::size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      problems.push_back("unterminated \"${\" in " + quoted(text.substr(i)));
      break;
    }
    const std::string_view reference = text.substr(i, close + 1 - i);
    auto resolved = resolve(text.substr(i + 2, close - i - 2), vocabulary);
    if (const auto* problem = std::get_if<std::string>(&resolved)) {
      problems.push_back(*problem + " in " + quoted(reference));
    } else {
      flush_literal();
      compiled.segments_.push_back(std::get<Segment>(resolved));
    }
    i = close + 1;
  }
  if (!problems.empty()) {
    std::string message = name.empty() ? "" : "template " + std::string(name) + ": ";
    for (std::size_t p = 0; p < problems.size(); ++p) {
      if (p > 0) message += "; ";
      message += problems[p];
    }
    return message;
  }
  flush_literal();
  return compiled;
}

RenderResult Template::render(const RenderContext& context, std::string& out) const {
  RenderResult result;
  for (const Segment& segment : segments_) {
    switch (segment.kind) {
      case Kind::literal:
        out.append(literals_, segment.offset, segment.length);
        break;
      case Kind::variable: {
        const bool has_value = segment.offset < context.variables.size() &&
                               context.variables[segment.offset].has_value();
        if (!has_value) {
          if (result.complete) result = {false, variable_names_[segment.offset]};
          break;
        }
        out.append(*context.variables[segment.offset]);
        break;
      }
      case Kind::column:
        // A caller that laid out fewer columns than the vocabulary has a bug;
        // an empty value is safer than reading past its array.
        if (segment.offset < context.columns.size()) out.append(context.columns[segment.offset]);
        break;
      case Kind::vu:
        append_decimal(context.vu, out);
        break;
      case Kind::iteration:
        append_decimal(context.iteration, out);
        break;
      case Kind::worker:
        append_decimal(context.worker, out);
        break;
      case Kind::random:
        append_decimal(
            context.random ? context.random->between(segment.low, segment.high) : segment.low, out);
        break;
      case Kind::uuid: {
        const std::uint64_t high = context.random ? context.random->next() : 0;
        const std::uint64_t low = context.random ? context.random->next() : 0;
        append_uuid(high, low, out);
        break;
      }
      case Kind::now:
        append_decimal(context.now_unix_ms, out);
        break;
    }
  }
  return result;
}

bool Template::is_resolved() const {
  return std::none_of(segments_.begin(), segments_.end(), [](const Segment& segment) {
    return segment.kind == Kind::column && segment.offset == unresolved_slot;
  });
}

bool Template::is_constant() const {
  return std::all_of(segments_.begin(), segments_.end(),
                     [](const Segment& segment) { return segment.kind == Kind::literal; });
}

void append_uuid(std::uint64_t high, std::uint64_t low, std::string& out) {
  // RFC 9562: version 4 in the high nibble of byte 6, variant 10 in the top
  // bits of byte 8; the other 122 bits random.
  high = (high & ~0xf000ULL) | 0x4000ULL;
  low = (low & ~(0xc0ULL << 56)) | (0x80ULL << 56);
  constexpr std::string_view hex = "0123456789abcdef";
  std::array<char, uuid_bytes> text{};
  std::size_t at = 0;
  const auto put = [&](std::uint64_t word, int from_nibble, int nibbles) {
    for (int n = from_nibble; n < from_nibble + nibbles; ++n) {
      text[at++] = hex[(word >> (60 - 4 * n)) & 0xf];
    }
  };
  put(high, 0, 8);
  text[at++] = '-';
  put(high, 8, 4);
  text[at++] = '-';
  put(high, 12, 4);
  text[at++] = '-';
  put(low, 0, 4);
  text[at++] = '-';
  put(low, 4, 12);
  out.append(text.data(), text.size());
}

}  // namespace kubeload::scenario
