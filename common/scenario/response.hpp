#pragma once
// The view of a response that extraction and checks read: its status, its
// header fields as received (names in any case, values without surrounding
// whitespace) and its body. Views only: the caller's parser owns the bytes.

#include <span>
#include <string_view>

namespace kubeload::scenario {

struct Header {
  std::string_view name;
  std::string_view value;
};

struct ResponseView {
  unsigned status = 0;
  std::span<const Header> headers;
  std::string_view body;
};

}  // namespace kubeload::scenario
