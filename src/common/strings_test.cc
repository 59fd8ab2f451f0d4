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

// Cases from RFC 3629 and the Unicode standard's table of well-formed byte sequences.
TEST(StringsTest, ValidUtf8AcceptsWellFormedTextOnly) {
  EXPECT_TRUE(ValidUtf8(""));
  EXPECT_TRUE(ValidUtf8("plain ascii"));
  EXPECT_TRUE(ValidUtf8("caf\xC3\xA9"));                // U+00E9
  EXPECT_TRUE(ValidUtf8("\xE2\x82\xAC"));               // U+20AC
  EXPECT_TRUE(ValidUtf8("\xED\x9F\xBF"));               // U+D7FF, just below the surrogates
  EXPECT_TRUE(ValidUtf8("\xEF\xBF\xBF"));               // U+FFFF
  EXPECT_TRUE(ValidUtf8("\xF0\x9F\x98\x80"));           // U+1F600
  EXPECT_TRUE(ValidUtf8("\xF4\x8F\xBF\xBF"));           // U+10FFFF, the last code point
  EXPECT_TRUE(ValidUtf8(std::string_view("a\0b", 3)));  // NUL is a character
  EXPECT_FALSE(ValidUtf8("\x80"));                      // a lone continuation byte
  EXPECT_FALSE(ValidUtf8("\xC3"));                      // truncated
  EXPECT_FALSE(ValidUtf8("\xC0\xAF"));                  // overlong '/'
  EXPECT_FALSE(ValidUtf8("\xC1\xBF"));                  // overlong
  EXPECT_FALSE(ValidUtf8("\xE0\x80\xAF"));              // overlong three-byte
  EXPECT_FALSE(ValidUtf8("\xED\xA0\x80"));              // U+D800, a surrogate
  EXPECT_FALSE(ValidUtf8("\xF0\x80\x80\xAF"));          // overlong four-byte
  EXPECT_FALSE(ValidUtf8("\xF4\x90\x80\x80"));          // above U+10FFFF
  EXPECT_FALSE(ValidUtf8("\xF5\x80\x80\x80"));          // no such lead byte
  EXPECT_FALSE(ValidUtf8("\xE2\x82"));                  // truncated three-byte
  EXPECT_FALSE(ValidUtf8("\xE2\x28\xA1"));              // a bad continuation
  EXPECT_FALSE(ValidUtf8("ok\xFF"));
}

}  // namespace
}  // namespace tablemere
