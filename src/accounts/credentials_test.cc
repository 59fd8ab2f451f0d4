#include "accounts/credentials.h"

#include <gtest/gtest.h>

namespace tablemere::accounts {
namespace {

TEST(CredentialsTest, IdentityNames) {
  std::string id = "0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b";
  auto rw = ParseIdentityName("t-" + id).value();
  EXPECT_EQ(rw.warehouse_id, id);
  EXPECT_FALSE(rw.read_only);
  EXPECT_TRUE(ParseIdentityName(IdentityName(id, true))->read_only);
  EXPECT_FALSE(ParseIdentityName("t-short").has_value());
  EXPECT_FALSE(ParseIdentityName("x-" + id).has_value());
}

TEST(CredentialsTest, SecretsDependOnGenerationAndKey) {
  IdentitySecrets a(KeyRing(std::string(32, 'a')));
  IdentitySecrets b(KeyRing(std::string(32, 'b')));
  EXPECT_EQ(a.SecretFor("t-x", 1), a.SecretFor("t-x", 1));
  EXPECT_NE(a.SecretFor("t-x", 1), a.SecretFor("t-x", 2));
  EXPECT_NE(a.SecretFor("t-x", 1), a.SecretFor("t-x-ro", 1));
  EXPECT_NE(a.SecretFor("t-x", 1), b.SecretFor("t-x", 1));
}

TEST(CredentialsTest, ApiKeyParsing) {
  auto k = ParseApiKey("al_live_abc123_s3cr3t").value();
  EXPECT_EQ(k.key_id, "abc123");
  EXPECT_EQ(k.secret, "s3cr3t");
  EXPECT_FALSE(ParseApiKey("al_test_abc_def").has_value());
  EXPECT_FALSE(ParseApiKey("al_live_abc").has_value());
  EXPECT_NE(HashApiSecret("s3cr3t"), "s3cr3t");
}

}  // namespace
}  // namespace tablemere::accounts
