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

TEST(Base64, NamesTheBadCharacterInAnyGroup) {
  // Every group but the last is checked four digits at once: the message
  // still names the offending offset, in the first group as in a middle one.
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"*m9vYmFyYmF6", "invalid base64 character at offset 0"},
      {"Zm9vY*FyYmF6", "invalid base64 character at offset 5"},
      {"Zm9vYmF\nYmF6", "invalid base64 character at offset 7"},
      {"Zm=vYmFyYmF6", "padding '=' before the end at offset 2"},
      {"Zm9vYmFy=mF6", "padding '=' before the end at offset 8"},
      {"Zm9vYmFyY=F6", "padding '=' before the end at offset 9"},
  };
  for (const auto& [bad, expected] : cases) {
    try {
      base64_decode(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << bad << ": " << e.what();
    }
  }
  EXPECT_EQ(base64_decode("Zm9vYmFyYmF6"), bytes_of("foobarbaz"));
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
