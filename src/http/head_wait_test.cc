#include "http/head_wait.h"

#include <gtest/gtest.h>

#include <string>

namespace tablemere::http {
namespace {

TEST(FindHeadEnd, FindsTheEndOfAWholeHead) {
  std::string head = "GET / HTTP/1.1\r\nHost: a\r\n\r\nBODY";
  EXPECT_EQ(FindHeadEnd(head), head.size() - 4);
}

TEST(FindHeadEnd, NoEndInAPartialHead) {
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\r\nHost: a\r\n"), std::string_view::npos);
  EXPECT_EQ(FindHeadEnd(""), std::string_view::npos);
  // A single line break between fields is not the end.
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\r\nA: b\r\nC: d\r\n"), std::string_view::npos);
}

TEST(FindHeadEnd, FindsATerminatorSplitAcrossReads) {
  std::string head = "GET / HTTP/1.1\r\nHost: a\r\n\r";
  ASSERT_EQ(FindHeadEnd(head), std::string_view::npos);
  size_t scanned = head.size();
  head += "\n";
  EXPECT_EQ(FindHeadEnd(head, scanned), head.size());
  // Split after the first two bytes of the terminator too.
  std::string other = "GET / HTTP/1.1\r\n";
  size_t other_scanned = other.size();
  other += "\r\nX";
  EXPECT_EQ(FindHeadEnd(other, other_scanned), other.size() - 1);
}

TEST(FindHeadEnd, FirstOfPipelinedHeads) {
  std::string two = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
  EXPECT_EQ(FindHeadEnd(two), std::string("GET /a HTTP/1.1\r\n\r\n").size());
}

TEST(AddressCounter, CapsEachAddressSeparately) {
  AddressCounter counter;
  EXPECT_TRUE(counter.TryAdd("127.0.0.1", 2));
  EXPECT_TRUE(counter.TryAdd("127.0.0.1", 2));
  EXPECT_FALSE(counter.TryAdd("127.0.0.1", 2));
  EXPECT_TRUE(counter.TryAdd("127.0.0.2", 2));
  EXPECT_EQ(counter.Count("127.0.0.1"), 2);
  EXPECT_EQ(counter.Count("127.0.0.2"), 1);
  counter.Remove("127.0.0.1");
  EXPECT_TRUE(counter.TryAdd("127.0.0.1", 2));
}

TEST(AddressCounter, ForgetsAddressesWithNothingOpen) {
  AddressCounter counter;
  EXPECT_TRUE(counter.TryAdd("10.0.0.1", 1));
  EXPECT_FALSE(counter.TryAdd("10.0.0.2", 0));
  EXPECT_EQ(counter.addresses(), 1u);
  counter.Remove("10.0.0.1");
  counter.Remove("10.0.0.1");  // more removes than adds are ignored
  EXPECT_EQ(counter.addresses(), 0u);
  EXPECT_EQ(counter.Count("10.0.0.1"), 0);
}

}  // namespace
}  // namespace tablemere::http
