#pragma once
// Regular expressions for extraction and checks: PCRE2 (Debian's
// libpcre2-dev), compiled once, JIT-compiled where the machine allows.
//
// Why PCRE2 rather than std::regex or RE2: std::regex is slow and allocates
// per match; RE2 guarantees linear time but its submatch engines allocate on
// each search. PCRE2 matches into a match block prepared beforehand (a
// MatchScratch, one per thread) and, JIT-compiled, allocates nothing per
// match. Its backtracking is bounded by a match limit, so a hostile body and
// a careless pattern cost a bounded amount of work and find nothing. The
// syntax is Perl's, as JMeter's and most tools' extractors use.
//
// Patterns match bytes, not UTF-8 characters: a response body need not be
// valid UTF-8, and checking that it is would read the whole body each time.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

// PCRE2's opaque types, named as pcre2.h names them, so that its header (and
// its macros) stay inside regex.cpp.
struct pcre2_real_code_8;
struct pcre2_real_match_data_8;
struct pcre2_real_match_context_8;
struct pcre2_real_jit_stack_8;

namespace kubeload::scenario {

// The most capture groups an extraction may name (and a MatchScratch holds).
inline constexpr std::uint32_t max_regex_group = 15;
// Backtracking steps one match may take before it gives up (finds nothing).
inline constexpr std::uint32_t regex_match_limit = 1'000'000;

// What one thread needs to match: the match block, and the limits and JIT
// stack of its matches. Allocated once; not shared between threads.
class MatchScratch {
 public:
  MatchScratch();
  ~MatchScratch();
  MatchScratch(const MatchScratch&) = delete;
  MatchScratch& operator=(const MatchScratch&) = delete;

 private:
  friend class Regex;
  pcre2_real_match_data_8* data_ = nullptr;
  pcre2_real_match_context_8* context_ = nullptr;
  pcre2_real_jit_stack_8* jit_stack_ = nullptr;
};

class Regex {
 public:
  enum class Anchoring : unsigned char {
    search,  // the pattern may match anywhere in the text
    whole,   // the pattern must match the whole text
  };

  // The compiled pattern, or PCRE2's message with the offset it points at.
  static std::variant<Regex, std::string> compile(std::string_view pattern,
                                                  Anchoring anchoring = Anchoring::search);

  std::uint32_t capture_count() const { return capture_count_; }
  const std::string& pattern() const { return pattern_; }

  // The first match's group `group` (0: the whole match) in `text`, or
  // nothing: no match, the group took no part, or the match limit ran out.
  // Shared between threads, each with its own scratch.
  std::optional<std::string_view> search(std::string_view text, std::uint32_t group,
                                         MatchScratch& scratch) const;

 private:
  struct Free {
    void operator()(pcre2_real_code_8* code) const;
  };
  std::string pattern_;
  std::unique_ptr<pcre2_real_code_8, Free> code_;
  std::uint32_t capture_count_ = 0;
};

}  // namespace kubeload::scenario
