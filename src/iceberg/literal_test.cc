// Iceberg's types and single-value serialization, checked against the spec's Appendix D
// ("Single-value serialization") and its rules on ordering.
#include "iceberg/literal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tablemere::iceberg {
namespace {

std::string Hex(std::initializer_list<unsigned> bytes) {
  std::string out;
  for (unsigned b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

TEST(PrimitiveType, NamesParseAndPrintBack) {
  for (const char* name : {"boolean", "int", "long", "float", "double", "date", "time", "timestamp",
                           "timestamptz", "timestamp_ns", "timestamptz_ns", "string", "uuid",
                           "binary", "fixed[16]", "decimal(9, 2)"}) {
    auto t = PrimitiveType::Parse(name);
    ASSERT_TRUE(t) << name;
    EXPECT_EQ(t->Name(), name);
  }
  auto d = PrimitiveType::Parse("decimal(38,10)");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->precision, 38);
  EXPECT_EQ(d->scale, 10);
  for (const char* bad : {"decimal(39, 2)", "decimal(5, 6)", "fixed[0]", "list", "struct<>", ""}) {
    EXPECT_FALSE(PrimitiveType::Parse(bad)) << bad;
  }
}

TEST(SingleValue, NumbersAreLittleEndian) {
  EXPECT_EQ(ToBound(Literal::Of(TypeId::kInt, 1)), Hex({1, 0, 0, 0}));
  EXPECT_EQ(ToBound(Literal::Of(TypeId::kLong, -2)),
            Hex({0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  EXPECT_EQ(ToBound(Literal::Of(TypeId::kDate, 19000)), Hex({0x38, 0x4a, 0, 0}));
  EXPECT_EQ(ToBound(Literal::Floating(TypeId::kFloat, 1.0)), Hex({0, 0, 0x80, 0x3f}));
  EXPECT_EQ(ToBound(Literal::Floating(TypeId::kDouble, -2.0)), Hex({0, 0, 0, 0, 0, 0, 0, 0xc0}));
  EXPECT_EQ(ToBound(Literal::Bool(true)), Hex({1}));
  EXPECT_EQ(ToBound(Literal::Bool(false)), Hex({0}));
  auto back = FromBound({TypeId::kTimestampTz}, Hex({0x40, 0x42, 0x0f, 0, 0, 0, 0, 0}));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->AsInt(), 1000000);
}

TEST(SingleValue, DecimalsAreMinimalTwosComplementBigEndian) {
  EXPECT_EQ(ToBound(Literal::Decimal(9, 2, 1234)), Hex({0x04, 0xd2}));
  EXPECT_EQ(ToBound(Literal::Decimal(9, 2, -1)), Hex({0xff}));
  EXPECT_EQ(ToBound(Literal::Decimal(9, 2, 127)), Hex({0x7f}));
  EXPECT_EQ(ToBound(Literal::Decimal(9, 2, 128)), Hex({0x00, 0x80}));
  EXPECT_EQ(ToBound(Literal::Decimal(9, 2, -129)), Hex({0xff, 0x7f}));
  PrimitiveType t{TypeId::kDecimal, 9, 2};
  for (Int128 v : {Int128{0}, Int128{1}, Int128{-128}, Int128{99999}, Int128{-99999},
                   static_cast<Int128>(std::numeric_limits<int64_t>::min()) * 1000}) {
    auto back = FromBound(t, ToBound(Literal::Decimal(9, 2, v)));
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->AsUnscaled() == v);
  }
  EXPECT_EQ(Literal::Decimal(9, 2, -5).ToString(), "-0.05");
  EXPECT_EQ(Literal::Decimal(9, 2, 1234).ToString(), "12.34");
  EXPECT_FALSE(FromBound(t, std::string(17, '\1')));
  EXPECT_FALSE(FromBound(t, ""));
}

TEST(SingleValue, PromotedColumnsKeepTheirOlderBounds) {
  // A column promoted int -> long or float -> double has files with 4-byte bounds.
  auto l = FromBound({TypeId::kLong}, Hex({0xff, 0xff, 0xff, 0xff}));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->AsInt(), -1);
  auto d = FromBound({TypeId::kDouble}, Hex({0, 0, 0x80, 0x3f}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->AsDouble(), 1.0);
  EXPECT_FALSE(FromBound({TypeId::kInt}, Hex({1, 0, 0, 0, 0, 0, 0, 0})));
  EXPECT_FALSE(FromBound({TypeId::kUuid}, std::string(15, 'x')));
  EXPECT_FALSE(FromBound({TypeId::kString}, Hex({0xc3, 0x28})));  // not UTF-8
}

TEST(Order, FloatsOrderAsJavaCompares) {
  auto f = [](double v) { return Literal::Floating(TypeId::kDouble, v); };
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Compare(f(-0.0), f(0.0)), std::partial_ordering::less);
  EXPECT_EQ(Compare(f(inf), f(nan)), std::partial_ordering::less);
  EXPECT_EQ(Compare(f(nan), f(nan)), std::partial_ordering::equivalent);
  EXPECT_EQ(Compare(f(-inf), f(-1e300)), std::partial_ordering::less);
  EXPECT_TRUE(f(nan).IsNaN());
  EXPECT_FALSE(f(-0.0) == f(0.0));
}

TEST(Order, StringsAndBytesCompareUnsigned) {
  PrimitiveType s{TypeId::kString};
  EXPECT_EQ(Compare(Literal::Bytes(s, "z"), Literal::Bytes(s, "\xc3\xa9")),
            std::partial_ordering::less);
  EXPECT_EQ(Compare(Literal::Bytes(s, "ab"), Literal::Bytes(s, "abc")),
            std::partial_ordering::less);
  PrimitiveType b{TypeId::kBinary};
  EXPECT_EQ(Compare(Literal::Bytes(b, "\x7f"), Literal::Bytes(b, "\x80")),
            std::partial_ordering::less);
  // Values of different types are not ordered.
  EXPECT_EQ(Compare(Literal::Of(TypeId::kInt, 1), Literal::Bytes(s, "1")),
            std::partial_ordering::unordered);
  EXPECT_EQ(Compare(Literal::Of(TypeId::kInt, 1), Literal::Of(TypeId::kLong, 2)),
            std::partial_ordering::less);
  EXPECT_EQ(Compare(Literal::Decimal(9, 2, 1), Literal::Decimal(9, 3, 1)),
            std::partial_ordering::unordered);
}

TEST(Literal, PrintsForMessages) {
  EXPECT_EQ(Literal::Of(TypeId::kDate, 0).ToString(), "1970-01-01");
  EXPECT_EQ(Literal::Of(TypeId::kDate, -1).ToString(), "1969-12-31");
  EXPECT_EQ(Literal::Bytes({TypeId::kUuid}, std::string(16, '\x11')).ToString(),
            "11111111-1111-1111-1111-111111111111");
  EXPECT_EQ(Literal::Bytes({TypeId::kBinary}, "\x01\xff").ToString(), "0x01ff");
}

}  // namespace
}  // namespace tablemere::iceberg
