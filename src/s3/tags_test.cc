#include "s3/tags.h"

#include <gtest/gtest.h>

namespace tablemere::s3 {
namespace {

std::string Code(const Result<std::map<std::string, std::string>>& r) {
  return r ? "ok" : r.error().Detail("s3_code");
}

TEST(TagsTest, LimitsPerTarget) {
  TagList ten, eleven;
  for (int i = 0; i < 10; i++) ten.emplace_back("k" + std::to_string(i), "v");
  eleven = ten;
  eleven.emplace_back("k10", "v");
  EXPECT_EQ(Code(ValidateTags(ten, TagTarget::kObject)), "ok");
  EXPECT_EQ(Code(ValidateTags(eleven, TagTarget::kObject)), "InvalidTag");
  EXPECT_EQ(Code(ValidateTags(eleven, TagTarget::kBucket)), "ok");
}

TEST(TagsTest, LengthsCountCharacters) {
  std::string key128;
  for (int i = 0; i < 128; i++) key128 += "\xc3\xa9";  // é: two bytes, one character
  EXPECT_EQ(Code(ValidateTags({{key128, std::string(256, 'v')}}, TagTarget::kObject)), "ok");
  EXPECT_EQ(Code(ValidateTags({{key128 + "x", ""}}, TagTarget::kObject)), "InvalidTag");
  EXPECT_EQ(Code(ValidateTags({{"k", std::string(257, 'v')}}, TagTarget::kObject)), "InvalidTag");
  EXPECT_EQ(Code(ValidateTags({{"", "v"}}, TagTarget::kObject)), "InvalidTag");
}

TEST(TagsTest, DuplicatesAndReservedKeys) {
  EXPECT_EQ(Code(ValidateTags({{"a", "1"}, {"a", "2"}}, TagTarget::kObject)), "InvalidTag");
  EXPECT_EQ(Code(ValidateTags({{"AWS:x", "1"}}, TagTarget::kObject)), "InvalidTag");
}

TEST(TagsTest, HeaderForm) {
  auto list = ParseTaggingHeader("a=1&b=two%20words&c=");
  ASSERT_TRUE(list);
  auto tags = ValidateTags(*list, TagTarget::kObject);
  ASSERT_TRUE(tags);
  EXPECT_EQ(tags->at("b"), "two words");
  EXPECT_EQ(tags->at("c"), "");
}

}  // namespace
}  // namespace tablemere::s3
