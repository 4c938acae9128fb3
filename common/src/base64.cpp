#include "kubeload/base64.hpp"

#include <stdexcept>

namespace kubeload {
namespace {

[[noreturn]] void fail(const std::string& reason) {
  throw std::invalid_argument(reason);
}

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

std::string base64_encode(std::span<const uint8_t> bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t group =
        (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) text += kBase64Alphabet[(group >> shift) & 0x3f];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t group = uint32_t{bytes[i]} << 16;
    if (rest == 2) group |= uint32_t{bytes[i + 1]} << 8;
    text += kBase64Alphabet[(group >> 18) & 0x3f];
    text += kBase64Alphabet[(group >> 12) & 0x3f];
    text += rest == 2 ? kBase64Alphabet[(group >> 6) & 0x3f] : '=';
    text += '=';
  }
  return text;
}

namespace {

int base64_digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::vector<uint8_t> base64_decode(std::string_view text) {
  if (text.empty()) fail("empty input");
  if (text.size() % 4 != 0) {
    fail("base64 length " + std::to_string(text.size()) + " is not a multiple of 4");
  }
  size_t padding = 0;
  if (text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::vector<uint8_t> bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t group = 0;
    const bool last = i + 4 == text.size();
    for (size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      const bool is_padding = last && j >= 4 - padding;
      const int digit = is_padding ? 0 : base64_digit(c);
      if (digit < 0) {
        fail(c == '=' ? "base64 padding '=' before the end at offset " + std::to_string(i + j)
                      : "invalid base64 character at offset " + std::to_string(i + j));
      }
      group = (group << 6) | static_cast<uint32_t>(digit);
    }
    const size_t produced = last ? 3 - padding : 3;
    for (size_t k = 0; k < produced; ++k)
      bytes.push_back(static_cast<uint8_t>(group >> (16 - 8 * k)));
  }
  return bytes;
}

}  // namespace kubeload
