#include "common/scenario/message.hpp"

#include <cstddef>

namespace kubeload::scenario {

std::string quoted(std::string_view text) {
  // Long enough to recognise a template or a pattern, short enough for a status line.
  constexpr std::size_t shown_bytes = 60;
  constexpr std::string_view hex = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < shown_bytes; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte >= 0x7f) {
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    } else {
      out += text[i];
    }
  }
  out += text.size() > shown_bytes ? "...\"" : "\"";
  return out;
}

}  // namespace kubeload::scenario
