#include "operator/worker_token.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <span>
#include <stdexcept>

#include "kubeload/text.hpp"

namespace kubeload::controller {

std::string worker_token(std::string_view key, std::string_view loadtest_uid) {
  if (key.empty()) throw std::invalid_argument("worker token: the operator's key is empty");
  if (loadtest_uid.empty()) throw std::invalid_argument("worker token: the LoadTest has no uid");
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(loadtest_uid.data()), loadtest_uid.size(),
           digest.data(), &length) == nullptr) {
    throw std::runtime_error("worker token: HMAC-SHA256 failed");
  }
  return hex_encode(std::span(digest.data(), length));
}

}  // namespace kubeload::controller
