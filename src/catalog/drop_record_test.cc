#include "catalog/drop_record.h"

#include <gtest/gtest.h>

namespace tablemere::catalog {
namespace {

constexpr int64_t kDropMs = 1'000'000;
constexpr int64_t kWindowMs = 5'000;

DropRecord Dropped() {
  return DropRecord{"wh", TableIdent{{"ns", "sub"}, "t"}, "s3://w-wh/ns/sub/t", "t-wh", kDropMs};
}

CatalogPrincipal Dropper() { return CatalogPrincipal{"t-wh", "wh", false, 1, 0}; }

TEST(DropRecordTest, PayloadRoundTrips) {
  std::string payload = DropTaskPayload(Dropped(), "w-wh", "ns/sub/t/");
  Json parsed = Json::parse(payload);
  EXPECT_EQ(parsed["bucket"], "w-wh");
  EXPECT_EQ(parsed["prefix"], "ns/sub/t/");
  auto r = ParseDropRecord(payload, 7);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->ident.ns, (Namespace{"ns", "sub"}));
  EXPECT_EQ(r->ident.name, "t");
  EXPECT_EQ(r->location, "s3://w-wh/ns/sub/t");
  EXPECT_EQ(r->dropped_by, "t-wh");
  EXPECT_EQ(r->dropped_ms, kDropMs);
  EXPECT_FALSE(Json::parse(DropTaskPayload(Dropped(), "", "")).contains("prefix"));
}

TEST(DropRecordTest, CorruptPayloadIsAnInternalErrorNamingTheTask) {
  auto not_json = ParseDropRecord("{oops", 7);
  ASSERT_FALSE(not_json.has_value());
  EXPECT_EQ(not_json.error().code, ErrorCode::kInternal);
  EXPECT_NE(not_json.error().message.find("task 7"), std::string::npos);
  auto wrong_type = ParseDropRecord(R"({"dropped-by":"t-wh","dropped-ms":"soon"})", 8);
  ASSERT_FALSE(wrong_type.has_value());
  EXPECT_EQ(wrong_type.error().code, ErrorCode::kInternal);
  // An older purge task carries no record: nothing to serve, not corruption.
  auto old = ParseDropRecord(R"({"bucket":"w-wh","prefix":"ns/t/"})", 9);
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.error().code, ErrorCode::kNotFound);
}

TEST(DropRecordTest, ServesOnlyTheDropperWithinOneLifetime) {
  const DropRecord r = Dropped();
  const TableIdent ident{{"ns", "sub"}, "t"};
  EXPECT_TRUE(ServesDroppedRefresh(r, Dropper(), ident, kDropMs, kWindowMs));
  EXPECT_TRUE(ServesDroppedRefresh(r, Dropper(), ident, kDropMs + kWindowMs, kWindowMs));
  EXPECT_FALSE(ServesDroppedRefresh(r, Dropper(), ident, kDropMs + kWindowMs + 1, kWindowMs));
  EXPECT_FALSE(ServesDroppedRefresh(r, Dropper(), ident, kDropMs - 1, kWindowMs));

  CatalogPrincipal reader = Dropper();
  reader.identity = "t-wh-ro";
  reader.read_only = true;
  EXPECT_FALSE(ServesDroppedRefresh(r, reader, ident, kDropMs, kWindowMs));
  CatalogPrincipal elsewhere{"t-other", "other", false, 1, 0};
  EXPECT_FALSE(ServesDroppedRefresh(r, elsewhere, ident, kDropMs, kWindowMs));
  EXPECT_FALSE(ServesDroppedRefresh(r, Dropper(), TableIdent{{"ns"}, "t"}, kDropMs, kWindowMs));
  EXPECT_FALSE(
      ServesDroppedRefresh(r, Dropper(), TableIdent{{"ns", "sub"}, "u"}, kDropMs, kWindowMs));
}

}  // namespace
}  // namespace tablemere::catalog
