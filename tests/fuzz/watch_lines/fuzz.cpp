// The watch-stream splitter against arbitrary bytes in pieces the input
// chooses: every complete line becomes one event or one error, an over-long
// line is refused without buffering it, and nothing throws.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "operator/kube/watch_event_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  constexpr std::size_t max_line = 4096;
  const std::size_t piece = data[0] % 33;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  kubeload::kube::WatchEventParser parser(max_line);
  std::vector<kubeload::kube::WatchParseItem> items;
  while (!rest.empty()) {
    const std::size_t n = piece == 0 || piece > rest.size() ? rest.size() : piece;
    parser.feed(rest.substr(0, n), items);
    if (parser.buffered() > max_line) std::abort();
    rest.remove_prefix(n);
  }
  parser.finish(items);
  if (parser.buffered() != 0) std::abort();
  return 0;
}
