#include "storage/session_token.h"

#include <gtest/gtest.h>

namespace tablemere::storage {
namespace {

class FixedRandom final : public Random {
 public:
  void Fill(unsigned char* out, size_t n) override {
    for (size_t i = 0; i < n; i++) out[i] = static_cast<unsigned char>(i * 7 + seed_++);
  }
  int seed_ = 1;
};

TEST(SessionTokenTest, RoundTripAndScope) {
  KeyRing keys(std::string(32, 'm'));
  SessionSealer sealer(keys);
  FixedRandom random;
  SessionGrant grant{"wh", "w-wh", "ns/t/", true, 10'000, 3};
  IssuedSession s = sealer.Issue(grant, random);
  EXPECT_TRUE(SessionSealer::IsSessionKeyId(s.access_key_id));
  EXPECT_EQ(sealer.SecretFor(s.session_token), s.secret_access_key);
  auto opened = sealer.Open(s.access_key_id, s.session_token, 5'000).value();
  EXPECT_EQ(opened.prefix, "ns/t/");
  EXPECT_TRUE(opened.read_only);
  EXPECT_EQ(opened.generation, 3);
  // The secret is not derivable from the token without the server key.
  SessionSealer other(KeyRing(std::string(32, 'x')));
  EXPECT_NE(other.SecretFor(s.session_token), s.secret_access_key);
}

TEST(SessionTokenTest, RejectsTamperingExpiryAndForeignKeys) {
  KeyRing keys(std::string(32, 'm'));
  SessionSealer sealer(keys);
  FixedRandom random;
  IssuedSession s = sealer.Issue(SessionGrant{"wh", "w-wh", "ns/t/", false, 10'000, 1}, random);
  EXPECT_EQ(sealer.Open(s.access_key_id, s.session_token, 10'000).error().Detail("s3_code"),
            "ExpiredToken");
  std::string tampered = s.session_token;
  tampered[tampered.size() / 2] = tampered[tampered.size() / 2] == 'A' ? 'B' : 'A';
  EXPECT_EQ(sealer.Open(s.access_key_id, tampered, 1).error().Detail("s3_code"), "InvalidToken");
  IssuedSession other = sealer.Issue(SessionGrant{"wh", "w-wh", "ns/u/", false, 10'000, 1}, random);
  EXPECT_EQ(sealer.Open(other.access_key_id, s.session_token, 1).error().Detail("s3_code"),
            "InvalidToken");
  SessionSealer foreign(KeyRing(std::string(32, 'x')));
  EXPECT_FALSE(foreign.Open(s.access_key_id, s.session_token, 1).has_value());
}

}  // namespace
}  // namespace tablemere::storage
