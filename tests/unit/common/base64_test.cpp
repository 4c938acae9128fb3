#include <gtest/gtest.h>

#include "kubeload/base64.hpp"

namespace kubeload {
namespace {

std::vector<uint8_t> bytes_of(std::string_view s) {
  return {s.begin(), s.end()};
}

TEST(Base64, Rfc4648TestVectors) {
  const std::pair<std::string_view, std::string_view> vectors[] = {
      {"f", "Zg=="},        {"fo", "Zm8="},        {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(bytes_of(plain)), encoded);
    EXPECT_EQ(base64_decode(encoded), bytes_of(plain));
  }
}

TEST(Base64, RejectsMalformedInputSayingWhere) {
  for (const std::string_view bad : {"", "Zm9", "Zm9v!A==", "Z=9v"}) {
    EXPECT_THROW(base64_decode(bad), std::invalid_argument) << bad;
  }
  try {
    base64_decode("Zm9v!A==");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("offset 4"), std::string::npos) << e.what();
  }
}

TEST(Base64, DecodeIntoResizesAReusedBuffer) {
  std::vector<uint8_t> bytes = bytes_of("a longer buffer left from before");
  base64_decode_into("Zm9vYmE=", bytes);
  EXPECT_EQ(bytes, bytes_of("fooba"));
  base64_decode_into("Zm9vYmFy", bytes);
  EXPECT_EQ(bytes, bytes_of("foobar"));
  EXPECT_THROW(base64_decode_into("Zm9v!A==", bytes), std::invalid_argument);
  base64_decode_into("Zg==", bytes);
  EXPECT_EQ(bytes, bytes_of("f"));
}

}  // namespace
}  // namespace kubeload
