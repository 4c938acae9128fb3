#pragma once
// Base64 (RFC 4648, standard alphabet, padded): histograms travel in it, and
// kubeconfigs carry certificates in it.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kubeload {

std::string base64_encode(std::span<const uint8_t> bytes);
// Throws std::invalid_argument saying what is wrong and at which offset.
std::vector<uint8_t> base64_decode(std::string_view text);
// The same into `bytes` (resized to fit), so a caller decoding many reuses
// one buffer.
void base64_decode_into(std::string_view text, std::vector<uint8_t>& bytes);

}  // namespace kubeload
