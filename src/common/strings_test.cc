#include "common/strings.h"

#include <gtest/gtest.h>

namespace tablemere {
namespace {

TEST(StringsTest, UrlEncodeIsStrictRfc3986) {
  EXPECT_EQ(UrlEncode("dir/a b+c~!*()'=&\xc3\xbc.txt", true),
            "dir/a%20b%2Bc~%21%2A%28%29%27%3D%26%C3%BC.txt");
  EXPECT_EQ(UrlEncode("a/b"), "a%2Fb");
}

TEST(StringsTest, UrlDecodeRejectsBadEscapes) {
  EXPECT_EQ(UrlDecode("a%20b+c").value(), "a b+c");
  EXPECT_EQ(UrlDecode("a+b", true).value(), "a b");
  EXPECT_FALSE(UrlDecode("%2").has_value());
  EXPECT_FALSE(UrlDecode("%zz").has_value());
}

TEST(StringsTest, ParseQueryKeepsOrderAndEmptyValues) {
  auto q = ParseQuery("uploads&prefix=a%2Fb&x=").value();
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0], (std::pair<std::string, std::string>{"uploads", ""}));
  EXPECT_EQ(q[1].second, "a/b");
  EXPECT_EQ(q[2].second, "");
}

}  // namespace
}  // namespace tablemere
