#include "common/scenario/regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <new>

#include "common/scenario/message.hpp"

namespace kubeload::scenario {
namespace {

// Deep enough for patterns with nested groups over a large body; the
// default (32 KiB on the machine stack) fails such matches as "no match".
constexpr std::size_t jit_stack_start_bytes = 32 * 1024;
constexpr std::size_t jit_stack_max_bytes = 1024 * 1024;

}  // namespace

MatchScratch::MatchScratch()
    : data_(pcre2_match_data_create(max_regex_group + 1, nullptr)),
      context_(pcre2_match_context_create(nullptr)),
      jit_stack_(pcre2_jit_stack_create(jit_stack_start_bytes, jit_stack_max_bytes, nullptr)) {
  if (data_ == nullptr || context_ == nullptr) {
    pcre2_match_data_free(data_);
    pcre2_match_context_free(context_);
    pcre2_jit_stack_free(jit_stack_);
    throw std::bad_alloc();
  }
  pcre2_set_match_limit(context_, regex_match_limit);
  // Without JIT (or without its stack) matching falls back to the
  // interpreter, which is bounded by the match limit too.
  if (jit_stack_ != nullptr) pcre2_jit_stack_assign(context_, nullptr, jit_stack_);
}

MatchScratch::~MatchScratch() {
  pcre2_match_data_free(data_);
  pcre2_match_context_free(context_);
  pcre2_jit_stack_free(jit_stack_);
}

void Regex::Free::operator()(pcre2_real_code_8* code) const {
  pcre2_code_free(code);
}

std::variant<Regex, std::string> Regex::compile(std::string_view pattern, Anchoring anchoring) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  // NEVER_UTF: a pattern may not switch itself to UTF mode with (*UTF), which
  // would make matching check (or, unchecked, misread) every body as UTF-8.
  std::uint32_t options = PCRE2_NEVER_UTF;
  if (anchoring == Anchoring::whole) options |= PCRE2_ANCHORED | PCRE2_ENDANCHORED;
  const char* text = pattern.data() != nullptr ? pattern.data() : "";
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(text), pattern.size(), options,
                                   &error, &error_offset, nullptr);
  if (code == nullptr) {
    std::array<PCRE2_UCHAR, 256> message{};
    pcre2_get_error_message(error, message.data(), message.size());
    return "regular expression " + quoted(pattern) + ": " +
           reinterpret_cast<const char*>(message.data()) + " at offset " +
           std::to_string(error_offset);
  }
  Regex regex;
  regex.pattern_ = pattern;
  regex.code_.reset(code);
  // A failed JIT compile (no JIT on this machine, no executable memory) is
  // not an error: the interpreter matches the same.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &regex.capture_count_);
  return regex;
}

std::optional<std::string_view> Regex::search(std::string_view text, std::uint32_t group,
                                              MatchScratch& scratch) const {
  // PCRE2 10.42 refuses a null subject even when it is empty.
  const char* subject = text.data() != nullptr ? text.data() : "";
  const int matched = pcre2_match(code_.get(), reinterpret_cast<PCRE2_SPTR>(subject), text.size(),
                                  0, 0, scratch.data_, scratch.context_);
  // 0: matched, with more groups than the block holds; the first ones are set.
  if (matched < 0) return std::nullopt;
  if (group > max_regex_group || (matched > 0 && group >= static_cast<std::uint32_t>(matched))) {
    return std::nullopt;
  }
  const PCRE2_SIZE* offsets = pcre2_get_ovector_pointer(scratch.data_);
  const PCRE2_SIZE start = offsets[2 * group];
  const PCRE2_SIZE end = offsets[2 * group + 1];
  if (start == PCRE2_UNSET || end < start) return std::nullopt;  // end < start: \K tricks
  return text.substr(start, end - start);
}

}  // namespace kubeload::scenario
