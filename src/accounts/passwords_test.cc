#include "accounts/passwords.h"

#include <gtest/gtest.h>

namespace tablemere::accounts {
namespace {

std::string CodeOf(const Result<void>& r) { return r ? std::string() : r.error().Detail("code"); }

TEST(PasswordRules, LengthCountsCharactersNotBytes) {
  EXPECT_EQ(CodeOf(CheckPasswordRules("short pass!", "a@x.io", {})), "password_too_short");
  EXPECT_EQ(CodeOf(CheckPasswordRules("twelve chars", "a@x.io", {})), "");
  // Eleven two-byte characters are 22 bytes but still too short.
  std::string umlauts;
  for (int i = 0; i < 11; ++i) umlauts += "\xc3\xa4";
  EXPECT_EQ(CodeOf(CheckPasswordRules(umlauts, "a@x.io", {})), "password_too_short");
  EXPECT_EQ(CodeOf(CheckPasswordRules(std::string(256, 'q'), "a@x.io", {})), "");
  EXPECT_EQ(CodeOf(CheckPasswordRules(std::string(257, 'q'), "a@x.io", {})), "password_too_long");
}

TEST(PasswordRules, RefusesTheAddressAndOrganisationName) {
  EXPECT_EQ(CodeOf(CheckPasswordRules("my ADA@LAKE.IO secret", "ada@lake.io", {})),
            "password_contains_identity");
  EXPECT_EQ(CodeOf(CheckPasswordRules("xx-lovelace-2026", "lovelace@lake.io", {})),
            "password_contains_identity");
  EXPECT_EQ(CodeOf(CheckPasswordRules("we love Acme Corp!!", "x@y.io", {"Acme Corp"})),
            "password_contains_identity");
  // A two-letter local part is too common a substring to count.
  EXPECT_EQ(CodeOf(CheckPasswordRules("jo jo jo jo jo jo", "jo@y.io", {})), "");
}

TEST(PasswordHash, VerifiesOnlyTheRightPassword) {
  SystemRandom random;
  auto hash = HashPassword("correct horse battery", random);
  ASSERT_TRUE(hash) << hash.error().message;
  EXPECT_TRUE(hash->starts_with("$argon2id$v=19$m=19456,t=2,p=1$")) << *hash;
  EXPECT_TRUE(VerifyPassword(*hash, "correct horse battery"));
  EXPECT_FALSE(VerifyPassword(*hash, "correct horse battery "));
  EXPECT_FALSE(VerifyPassword("", "anything"));
  EXPECT_FALSE(VerifyPassword("$2b$10$notargon", "anything"));
  // Salted: the same password hashes differently each time.
  auto again = HashPassword("correct horse battery", random);
  ASSERT_TRUE(again);
  EXPECT_NE(*hash, *again);
  EXPECT_FALSE(DummyPasswordHash().empty());
}

}  // namespace
}  // namespace tablemere::accounts
