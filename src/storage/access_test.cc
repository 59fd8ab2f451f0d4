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

TEST(BucketNamesTest, WarehouseOfBucket) {
  EXPECT_EQ(WarehouseOfBucket("w-123"), "123");
  EXPECT_EQ(WarehouseOfBucket("b-123"), "123");
  EXPECT_EQ(WarehouseOfBucket("other"), "");
}

}  // namespace
}  // namespace tablemere::storage
