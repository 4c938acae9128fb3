#pragma once
// Templates of a scenario's requests (path, query, headers, body): text with
// ${...} references, compiled once into segments and rendered per request
// into a caller-owned buffer without a heap allocation once that buffer has
// grown to its size. Pure: no I/O, no clock; the caller passes the values.
//
// The syntax (docs/scenarios.md):
//   ${name}            a variable of the virtual user (extracted or set earlier)
//   ${source.column}   a column of the virtual user's current data row
//   ${vu}              the virtual user's index (0-based, within the run)
//   ${iteration}       the iteration's index (0-based, per virtual user)
//   ${worker}          the worker's index (0-based)
//   ${random(A,B)}     an integer drawn uniformly from [A, B], A <= B, both
//                      64-bit signed decimal
//   ${uuid}            a random UUID, version 4, lower-case
//   ${now}             the Unix time in milliseconds
//   $${                a literal "${"; any other '$' is itself
// Names are [A-Za-z_][A-Za-z0-9_-]*, at most 64 bytes. A reference to a name
// the vocabulary does not hold is refused when the template is compiled.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/scenario/random.hpp"

namespace kubeload::scenario {

inline constexpr std::size_t max_name_bytes = 64;

// The built-ins' names: no variable or data source may take one.
inline constexpr std::string_view builtin_names[] = {"vu",     "iteration", "worker",
                                                     "random", "uuid",      "now"};

// A data source a template may read: its name and its columns, in order.
struct DataSource {
  std::string name;
  std::vector<std::string> columns;
  // The columns are not known yet (the spec declares none; the data's header
  // gives them when it is read): a reference to any well-formed column name
  // of this source compiles, without a slot (unresolved_slot). Such a
  // template is for checking a spec before the run; the run compiles it
  // again against the columns the data has, which gives the slots. Its
  // `columns` are ignored and take no slots in RenderContext::columns.
  bool any_column = false;
};

// The slot of a column reference to a source of any_column: none, so a
// render appends nothing for it (Template::is_resolved says so beforehand).
inline constexpr std::size_t unresolved_slot = static_cast<std::size_t>(-1);

// What a template may name. A variable's slot is its index in `variables`;
// a column's slot is its index in the concatenation of every source's
// columns, in order (the layout of RenderContext::columns).
struct Vocabulary {
  std::vector<std::string> variables;
  std::vector<DataSource> sources;
};

// Why a name cannot be declared (a variable or a data source), or nothing:
// the name grammar, and a built-in's name is taken.
std::optional<std::string> check_name(std::string_view name);
// Why a column name cannot be declared, or nothing: the name grammar alone
// (${user.vu} is no built-in, so a column may be called "vu").
std::optional<std::string> check_column_name(std::string_view name);
// Every problem of a vocabulary at once (bad names, duplicates), each naming
// the offender; empty when it is fine.
std::vector<std::string> check_vocabulary(const Vocabulary& vocabulary);

// The values a render reads. `variables` and `columns` are laid out by slot
// as the vocabulary the template was compiled against; a variable that has
// no value yet is nullopt.
struct RenderContext {
  std::span<const std::optional<std::string_view>> variables;
  std::span<const std::string_view> columns;
  std::uint64_t vu = 0;
  std::uint64_t iteration = 0;
  std::uint64_t worker = 0;
  std::int64_t now_unix_ms = 0;
  Random* random = nullptr;  // needed by ${random(...)} and ${uuid} only
};

struct RenderResult {
  // False when a variable had no value: the output is then incomplete.
  bool complete = true;
  std::string_view missing;  // that variable's name
};

class Template {
 public:
  enum class Kind : std::uint8_t {
    literal,
    variable,
    column,
    vu,
    iteration,
    worker,
    random,
    uuid,
    now
  };

  struct Segment {
    Kind kind = Kind::literal;
    // literal: offset and length in the literal text; variable, column: the slot.
    std::size_t offset = 0;
    std::size_t length = 0;
    // random: the inclusive range.
    std::int64_t low = 0;
    std::int64_t high = 0;
  };

  // Compiles `text`. `name` says which template this is in messages
  // (e.g. "steps[2].path"). Either the template or every problem found:
  //   template steps[2].path: unknown variable "tokn" in "${tokn}"
  // With an empty `name` the message is the problems alone, for a caller
  // that names the field itself (the spec parser's field paths):
  //   unknown variable "tokn" in "${tokn}"
  static std::variant<Template, std::string> compile(std::string_view name, std::string_view text,
                                                     const Vocabulary& vocabulary);

  // Appends the rendered text to `out`.
  [[nodiscard]] RenderResult render(const RenderContext& context, std::string& out) const;

  // Whether rendering gives the same text every time (no reference at all).
  bool is_constant() const;
  // False when a column reference has no slot (a source of any_column):
  // compile it again against the data's columns before rendering.
  bool is_resolved() const;
  // A literal segment's text (unescaped: "$${" reads "${").
  std::string_view literal(const Segment& segment) const {
    return std::string_view(literals_).substr(segment.offset, segment.length);
  }
  const std::vector<Segment>& segments() const { return segments_; }
  // The variables' names by slot, for RenderResult::missing.
  std::span<const std::string> variable_names() const { return variable_names_; }

 private:
  std::string literals_;  // every literal segment's text, unescaped, back to back
  std::vector<Segment> segments_;
  std::vector<std::string> variable_names_;
};

// The 36 characters of a version 4 UUID from 128 random bits.
inline constexpr std::size_t uuid_bytes = 36;
void append_uuid(std::uint64_t high, std::uint64_t low, std::string& out);

}  // namespace kubeload::scenario
