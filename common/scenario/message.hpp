#pragma once
// How the scenario library shows a piece of user text in a message: quoted,
// cut when long, control bytes escaped, so a message is one printable line.

#include <string>
#include <string_view>

namespace kubeload::scenario {

// "text", or "its first 60 bytes..." for longer text; bytes below 0x20 and
// from 0x7f up as \xNN, so a message is ASCII and valid in any JSON writer
// (a cut never leaves half a UTF-8 sequence behind).
std::string quoted(std::string_view text);

}  // namespace kubeload::scenario
