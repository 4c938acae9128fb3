// The template language against arbitrary text: compiled, it is a template
// or one message naming the template; a template renders without reading
// past its values, and a text without "$" renders as itself.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/scenario/template.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kubeload::scenario;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const Vocabulary vocabulary{{"token", "id"}, {DataSource{"user", {"name", "pw"}}}};
  const auto compiled = Template::compile("fuzz", text, vocabulary);
  if (const auto* message = std::get_if<std::string>(&compiled)) {
    if (!message->starts_with("template fuzz: ")) std::abort();
    return 0;
  }
  const Template& compiled_template = std::get<Template>(compiled);
  // Half the variables unset, to walk the incomplete path too.
  const std::array<std::optional<std::string_view>, 2> variables{"t0k3n", std::nullopt};
  const std::array<std::string_view, 2> columns{"alice", "pw"};
  Random random(size);
  const RenderContext context{variables, columns, 1, 2, 3, 4, &random};
  std::string out;
  const RenderResult result = compiled_template.render(context, out);
  if (!result.complete && result.missing != "id") std::abort();
  if (text.find('$') == std::string_view::npos && (out != text || !result.complete)) std::abort();
  if (compiled_template.is_constant() && !result.complete) std::abort();
  return 0;
}
