#include "common/crypto.h"

#include <gtest/gtest.h>

namespace tablemere::crypto {
namespace {

TEST(CryptoTest, Sha256KnownVector) {
  EXPECT_EQ(HexEncode(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Base64Encode(Sha256(std::string(1024, 'A'))),
            "arcu6553sHVAiX4MjW0j7I7vD4w6R+Gz9Ok0Q9lTa+0=");
}

TEST(CryptoTest, HmacSha256Rfc4231Case2) {
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(CryptoTest, Base64RoundTrip) {
  for (std::string s : {"", "a", "ab", "abc", "abcd", "\xff\x00\x01"}) {
    EXPECT_EQ(Base64Decode(Base64Encode(s)).value(), s);
    EXPECT_EQ(Base64UrlDecode(Base64UrlEncode(s)).value(), s);
  }
  EXPECT_FALSE(Base64Decode("abc").has_value());
}

TEST(CryptoTest, SealOpenDetectsTampering) {
  std::string key(32, 'k');
  std::string sealed = Seal(key, std::string(12, 'n'), "secret payload", "aad");
  EXPECT_EQ(Open(key, sealed, "aad").value(), "secret payload");
  EXPECT_FALSE(Open(key, sealed, "other").has_value());
  sealed[14] ^= 1;
  EXPECT_FALSE(Open(key, sealed, "aad").has_value());
  EXPECT_FALSE(Open(std::string(32, 'x'), sealed, "aad").has_value());
}

TEST(CryptoTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
}

}  // namespace
}  // namespace tablemere::crypto
