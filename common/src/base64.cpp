#include "kubeload/base64.hpp"

#include <array>
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

constexpr uint8_t kNotBase64 = 0xff;

// Digit of each byte value, kNotBase64 for the rest: one lookup per character
// (a result from a worker carries dozens of histograms in base64).
constexpr std::array<uint8_t, 256> kBase64Digits = [] {
  std::array<uint8_t, 256> digits{};
  digits.fill(kNotBase64);
  for (uint8_t i = 0; i < 64; ++i) digits[static_cast<uint8_t>(kBase64Alphabet[i])] = i;
  return digits;
}();

}  // namespace

void base64_decode_into(std::string_view text, std::vector<uint8_t>& bytes) {
  if (text.empty()) fail("empty input");
  if (text.size() % 4 != 0) {
    fail("base64 length " + std::to_string(text.size()) + " is not a multiple of 4");
  }
  size_t padding = 0;
  if (text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  bytes.resize(text.size() / 4 * 3 - padding);
  uint8_t* out = bytes.data();
  const auto digit_at = [&](size_t at) {
    const uint8_t digit = kBase64Digits[static_cast<uint8_t>(text[at])];
    if (digit == kNotBase64) {
      fail(text[at] == '=' ? "base64 padding '=' before the end at offset " + std::to_string(at)
                           : "invalid base64 character at offset " + std::to_string(at));
    }
    return uint32_t{digit};
  };
  // Every group but the last has four digits: one check for the four, the
  // offending offset looked for only on failure (the operator's last pass
  // decodes some fifty histograms per worker).
  const size_t full_groups_end = text.size() - 4;
  for (size_t i = 0; i < full_groups_end; i += 4) {
    const uint8_t a = kBase64Digits[static_cast<uint8_t>(text[i])];
    const uint8_t b = kBase64Digits[static_cast<uint8_t>(text[i + 1])];
    const uint8_t c = kBase64Digits[static_cast<uint8_t>(text[i + 2])];
    const uint8_t d = kBase64Digits[static_cast<uint8_t>(text[i + 3])];
    if (((a | b | c | d) & 0xc0) != 0) {
      for (size_t j = i; j < i + 4; ++j) digit_at(j);
    }
    const uint32_t group = (uint32_t{a} << 18) | (uint32_t{b} << 12) | (uint32_t{c} << 6) | d;
    out[0] = static_cast<uint8_t>(group >> 16);
    out[1] = static_cast<uint8_t>(group >> 8);
    out[2] = static_cast<uint8_t>(group);
    out += 3;
  }
  const size_t last = full_groups_end;
  const size_t digits = 4 - padding;
  uint32_t group = 0;
  for (size_t j = 0; j < 4; ++j) group = (group << 6) | (j < digits ? digit_at(last + j) : 0);
  for (size_t k = 0; k < 3 - padding; ++k) *out++ = static_cast<uint8_t>(group >> (16 - 8 * k));
}

std::vector<uint8_t> base64_decode(std::string_view text) {
  std::vector<uint8_t> bytes;
  base64_decode_into(text, bytes);
  return bytes;
}

}  // namespace kubeload
