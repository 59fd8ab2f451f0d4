#include "storage/access.h"

#include <gtest/gtest.h>

namespace tablemere::storage {
namespace {

TEST(TableBucketKeyTest, AcceptsIcebergLayoutOnly) {
  struct Case {
    std::string key;
    bool ok;
  };
  const Case cases[] = {
      {"ns/t/data/00000-0-abc.parquet", true},
      {"ns/t/data/part=1/x.parquet", true},
      {"ns/t/data/deletes-1.puffin", true},
      {"ns/t/data/x.orc", true},
      {"ns/t/metadata/00001-abc.metadata.json", true},
      {"ns/t/metadata/snap-1-1-abc.avro", true},
      {"ns/t/metadata/abc-m0.avro", true},
      {"ns/t/metadata/1-abc.stats", true},
      {"ns/t/metadata/partition-stats-1-abc.parquet", true},
      {"a/b/t/data/x.parquet", true},  // nested namespace
      {"ns/t/data/", true},            // pyarrow directory marker
      {"ns/t/", true},
      {"ns/t/data/photo.jpg", false},
      {"ns/t/metadata/notes.txt", false},
      {"t/data/x.parquet", false},  // no namespace
      {"x.parquet", false},
      {"ns/t/other/x.parquet", false},
      {"ns/../t/data/x.parquet", false},
  };
  for (const auto& c : cases) {
    auto r = CheckTableBucketKey(c.key, "b-1");
    EXPECT_EQ(r.has_value(), c.ok) << c.key;
    if (!r) {
      EXPECT_NE(r.error().message.find("b-1"), std::string::npos);
      EXPECT_EQ(r.error().Detail("s3_code"), "InvalidArgument");
    }
  }
}

TEST(GenericTableKeyTest, EachFormatAcceptsItsOwnFiles) {
  struct Case {
    std::string format;
    std::string key;
    bool ok;
  };
  const Case cases[] = {
      {"lance", "data/abc.lance", true},
      {"lance", "_versions/1.manifest", true},
      {"lance", "_transactions/0-x.txn", true},
      {"lance", "_indices/u/index.idx", true},
      {"lance", "_deletions/0-1.arrow", true},
      {"lance", "notes.txt", false},
      {"delta", "_delta_log/00000000000000000000.json", true},
      {"delta", "_delta_log/_last_checkpoint", true},
      {"delta", "part-00000-x.snappy.parquet", true},
      {"delta", "year=2024/part-0.parquet", true},
      {"delta", "image.png", false},
      {"csv", "drop/2024.csv", true},
      {"csv", "x.parquet", false},
      {"parquet", "a/b.parquet", true},
      {"parquet", "a/b.csv", false},
      {"parquet", "a/", true},
      {"delta", "../escape.parquet", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(CheckGenericTableKey(c.key, c.format, "b-1").has_value(), c.ok)
        << c.format << " " << c.key;
  }
}

TEST(GenericTableKeyTest, WarehouseKeyRoutesByLocation) {
  std::vector<GenericLocation> generic = {{"ns/lance_ds/", "lance"}};
  EXPECT_TRUE(CheckWarehouseKey("ns/lance_ds/data/x.lance", "b-1", generic).has_value());
  EXPECT_FALSE(CheckWarehouseKey("ns/lance_ds/data/x.parquet", "b-1", generic).has_value());
  // Outside generic tables the Iceberg layout applies.
  EXPECT_TRUE(CheckWarehouseKey("ns/t/data/x.parquet", "b-1", generic).has_value());
  EXPECT_FALSE(CheckWarehouseKey("ns/t/data/x.lance2", "b-1", generic).has_value());
  EXPECT_TRUE(IsSupportedGenericFormat("delta"));
  EXPECT_FALSE(IsSupportedGenericFormat("hudi"));
}

TEST(BucketNamesTest, WarehouseOfBucket) {
  EXPECT_EQ(WarehouseOfBucket("w-123"), "123");
  EXPECT_EQ(WarehouseOfBucket("b-123"), "123");
  EXPECT_EQ(WarehouseOfBucket("other"), "");
}

}  // namespace
}  // namespace tablemere::storage
