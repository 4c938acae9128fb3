// Extraction against arbitrary responses: the first line is a JSON pointer,
// the second a header value read as a Set-Cookie, the rest the body. Finding
// must never read outside the body, a found value must lie inside it, and
// JSON extraction must agree with the pointer's own lookup.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "common/scenario/check.hpp"
#include "common/scenario/extractor.hpp"
#include "common/scenario/json_pointer.hpp"

namespace {

bool inside(std::string_view part, std::string_view whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kubeload::scenario;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t first = input.find('\n');
  const std::string_view pointer_text = input.substr(0, first);
  input.remove_prefix(first == std::string_view::npos ? input.size() : first + 1);
  const std::size_t second = input.find('\n');
  const std::string_view cookie = input.substr(0, second);
  const std::string_view body =
      second == std::string_view::npos ? std::string_view() : input.substr(second + 1);

  static MatchScratch scratch;
  const std::array headers{Header{"Set-Cookie", cookie}, Header{"X-Echo", cookie}};
  const ResponseView response{200, headers, body};
  std::string out;

  const auto pointer = JsonPointer::parse(pointer_text);
  if (const auto* parsed = std::get_if<JsonPointer>(&pointer)) {
    const auto found = parsed->find(body);
    if (found && (!inside(found->raw, body) || found->raw.empty())) std::abort();
    const auto extractor =
        Extractor::compile("fuzz", ExtractRule{ExtractFrom::json, std::string(pointer_text), {}});
    const bool extracted =
        std::get<Extractor>(extractor).extract(response, out, scratch) == Extraction::found;
    if (extracted && !found) std::abort();
    if (!extracted && !out.empty()) std::abort();
  } else if (std::get<std::string>(pointer).empty()) {
    std::abort();
  }

  // The whole cookie header names its cookie, or is no cookie at all.
  const std::string_view pair = cookie.substr(0, cookie.find(';'));
  const std::size_t equals = pair.find('=');
  if (const auto value = find_set_cookie(response, "session")) {
    if (!inside(*value, cookie) || equals == std::string_view::npos) std::abort();
  }
  if (const auto value = find_header(response, "x-echo"); !value || !inside(*value, cookie)) {
    std::abort();
  }

  // A fixed pattern over an arbitrary body.
  static const auto regex = std::get<Extractor>(
      Extractor::compile("fuzz", ExtractRule{ExtractFrom::regex, R"re("id"\s*:\s*(\d+))re", {}}));
  regex.extract(response, out, scratch);
  static const auto check = std::get<Check>(
      Check::compile("fuzz", CheckRule{CheckKind::json_matches, "/status", "ok|done"}));
  check.passes(response, out, scratch);
  return 0;
}
