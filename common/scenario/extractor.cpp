#include "common/scenario/extractor.hpp"

#include <algorithm>

#include "common/scenario/message.hpp"

namespace kubeload::scenario {
namespace {

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

bool is_token(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), is_tchar);
}

std::optional<std::string_view> find_header(const ResponseView& response, std::string_view name) {
  for (const Header& header : response.headers) {
    if (equals_ignoring_case(header.name, name)) return trim(header.value);
  }
  return std::nullopt;
}

std::optional<std::string_view> find_set_cookie(const ResponseView& response,
                                                std::string_view name) {
  // RFC 6265 section 5.2: the cookie pair is what precedes the first ';',
  // split at its first '='; name and value are trimmed. A later Set-Cookie
  // of the same name replaces an earlier one in a jar, so the last one wins.
  std::optional<std::string_view> value;
  for (const Header& header : response.headers) {
    if (!equals_ignoring_case(header.name, "set-cookie")) continue;
    const std::string_view pair = header.value.substr(0, header.value.find(';'));
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos) continue;  // no name: ignored, as the RFC says
    if (trim(pair.substr(0, equals)) == name) value = trim(pair.substr(equals + 1));
  }
  return value;
}

std::variant<Extractor, std::string> Extractor::compile(std::string_view name,
                                                        const ExtractRule& rule) {
  const std::string where = name.empty() ? "" : "extraction " + std::string(name) + ": ";
  Extractor extractor;
  extractor.from_ = rule.from;
  if (rule.group && rule.from != ExtractFrom::regex) {
    return where + "a group is for a regular expression only";
  }
  switch (rule.from) {
    case ExtractFrom::json: {
      auto pointer = JsonPointer::parse(rule.expression);
      if (auto* problem = std::get_if<std::string>(&pointer)) return where + *problem;
      extractor.pointer_ = std::move(std::get<JsonPointer>(pointer));
      return extractor;
    }
    case ExtractFrom::header:
    case ExtractFrom::cookie:
      if (!is_token(rule.expression)) {
        return where + (rule.from == ExtractFrom::header ? "header" : "cookie") + " name " +
               quoted(rule.expression) + " is not a token (RFC 9110)";
      }
      extractor.field_ = rule.expression;
      return extractor;
    case ExtractFrom::regex: {
      auto regex = Regex::compile(rule.expression);
      if (auto* problem = std::get_if<std::string>(&regex)) return where + *problem;
      Regex& compiled = std::get<Regex>(regex);
      const std::uint32_t groups = compiled.capture_count();
      extractor.group_ = rule.group.value_or(groups > 0 ? 1 : 0);
      if (extractor.group_ > groups) {
        return where + "group " + std::to_string(extractor.group_) + " of " +
               quoted(rule.expression) + ", which has " + std::to_string(groups) +
               (groups == 1 ? " group" : " groups");
      }
      if (extractor.group_ > max_regex_group) {
        return where + "group " + std::to_string(extractor.group_) + ": at most " +
               std::to_string(max_regex_group);
      }
      extractor.regex_ = std::move(compiled);
      return extractor;
    }
  }
  return where + "unknown source";
}

Extraction Extractor::extract(const ResponseView& response, std::string& out,
                              MatchScratch& scratch) const {
  out.clear();
  std::optional<std::string_view> value;
  switch (from_) {
    case ExtractFrom::json: {
      const auto found = pointer_->find(response.body);
      if (!found) return Extraction::not_found;
      if (!append_json_text(*found, out)) {
        out.clear();
        return Extraction::not_found;
      }
      return Extraction::found;
    }
    case ExtractFrom::header:
      value = find_header(response, field_);
      break;
    case ExtractFrom::cookie:
      value = find_set_cookie(response, field_);
      break;
    case ExtractFrom::regex:
      value = regex_->search(response.body, group_, scratch);
      break;
  }
  if (!value) return Extraction::not_found;
  out.append(*value);
  return Extraction::found;
}

}  // namespace kubeload::scenario
