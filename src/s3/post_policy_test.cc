#include "s3/post_policy.h"

#include <gtest/gtest.h>

#include "common/crypto.h"

namespace tablemere::s3 {
namespace {

PostPolicy Parse(const std::string& json) {
  auto p = ParsePostPolicy(crypto::Base64Encode(json));
  EXPECT_TRUE(p) << (p ? "" : p.error().message);
  return p ? *p : PostPolicy{};
}

constexpr int64_t kNow = 1796299200000;  // 2026-12-03T12:00:00Z

const char* kPolicy = R"({"expiration": "2026-12-03T13:00:00.000Z", "conditions": [
  {"bucket": "web"}, ["starts-with", "$key", "uploads/"], ["content-length-range", 1, 1024],
  ["eq", "$Content-Type", "text/csv"], {"x-amz-algorithm": "AWS4-HMAC-SHA256"}]})";

std::map<std::string, std::string> Fields() {
  return {{"bucket", "web"},
          {"key", "uploads/a.csv"},
          {"content-type", "text/csv"},
          {"x-amz-algorithm", "AWS4-HMAC-SHA256"},
          {"x-amz-signature", "abc"},
          {"policy", "…"}};
}

TEST(PostPolicyTest, ParsesIso8601WithAndWithoutMillis) {
  EXPECT_EQ(ParseIso8601("2026-12-03T12:00:00Z"), kNow);
  EXPECT_EQ(ParseIso8601("2026-12-03T12:00:00.250Z"), kNow + 250);
  EXPECT_EQ(ParseIso8601("2026-12-03 12:00:00"), -1);
  EXPECT_EQ(ParseIso8601("2026-12-03T12:00:00+01:00"), -1);
}

TEST(PostPolicyTest, AllConditionsHold) {
  PostPolicy p = Parse(kPolicy);
  EXPECT_EQ(p.conditions.size(), 5u);
  EXPECT_TRUE(CheckPolicyFields(p, Fields(), kNow));
  auto range = LengthRange(p);
  ASSERT_TRUE(range);
  EXPECT_EQ(*range, std::make_pair(int64_t{1}, int64_t{1024}));
}

TEST(PostPolicyTest, ExpiredPolicyIsRefused) {
  auto r = CheckPolicyFields(Parse(kPolicy), Fields(), kNow + 3600 * 1000 + 1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().Detail("s3_code"), "AccessDenied");
  EXPECT_NE(r.error().message.find("Policy expired"), std::string::npos);
}

TEST(PostPolicyTest, StartsWithAndEqFail) {
  auto fields = Fields();
  fields["key"] = "elsewhere/a.csv";
  auto r = CheckPolicyFields(Parse(kPolicy), fields, kNow);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("starts-with"), std::string::npos);
  fields = Fields();
  fields["content-type"] = "text/html";
  EXPECT_FALSE(CheckPolicyFields(Parse(kPolicy), fields, kNow));
  fields = Fields();
  fields.erase("content-type");  // an eq condition needs its field
  EXPECT_FALSE(CheckPolicyFields(Parse(kPolicy), fields, kNow));
}

TEST(PostPolicyTest, FieldsTheConditionsDoNotNameAreRefused) {
  auto fields = Fields();
  fields["x-amz-meta-owner"] = "mallory";
  auto r = CheckPolicyFields(Parse(kPolicy), fields, kNow);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("x-amz-meta-owner"), std::string::npos);
  fields.erase("x-amz-meta-owner");
  fields["x-ignore-anything"] = "fine";
  EXPECT_TRUE(CheckPolicyFields(Parse(kPolicy), fields, kNow));
}

TEST(PostPolicyTest, MalformedPoliciesAreInvalidPolicyDocument) {
  for (const char* doc :
       {"not json", R"({"conditions": []})", R"({"expiration": "soon", "conditions": []})",
        R"({"expiration": "2026-12-03T13:00:00Z"})",
        R"({"expiration": "2026-12-03T13:00:00Z", "conditions": [["content-length-range", 5, 1]]})",
        R"({"expiration": "2026-12-03T13:00:00Z", "conditions": [["matches", "$key", "x"]]})"}) {
    auto r = ParsePostPolicy(crypto::Base64Encode(doc));
    ASSERT_FALSE(r) << doc;
    EXPECT_EQ(r.error().Detail("s3_code"), "InvalidPolicyDocument") << doc;
  }
  EXPECT_FALSE(ParsePostPolicy("%%%"));
}

}  // namespace
}  // namespace tablemere::s3
