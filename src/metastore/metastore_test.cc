// The metastore contract, run against the SQLite backend (the PostgreSQL backend will
// run the same cases).
#include "metastore/metastore.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace tablemere::metastore {
namespace {

class MetastoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tm-meta-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
    store_ = OpenSqliteMetastore(path_.string(), clock_).value();
    ASSERT_TRUE(store_->catalog().CreateNamespace(Namespace{"w", {"ns"}, "{}"}).has_value());
  }
  void TearDown() override {
    store_.reset();
    for (auto suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix);
  }
  static MetadataSwap Create(const std::string& name, const std::string& kind) {
    TableEntry e{"w", {"ns"}, name, kind, "u", "s3://w/ns/" + name, "m1", "{}", 1, 1};
    return MetadataSwap{"w", {"ns"}, name, "", e};
  }
  SystemClock clock_;
  std::filesystem::path path_;
  std::unique_ptr<Metastore> store_;
};

TEST_F(MetastoreTest, MigrationsAreIdempotent) {
  store_.reset();
  store_ = OpenSqliteMetastore(path_.string(), clock_).value();
  EXPECT_TRUE(store_->catalog().GetNamespace("w", {"ns"}).has_value());
}

TEST_F(MetastoreTest, SwapIsCompareAndSwap) {
  auto& c = store_->catalog();
  ASSERT_TRUE(c.SwapMetadata({Create("t", "table")}).has_value());
  EXPECT_EQ(c.SwapMetadata({Create("t", "view")}).error().code, ErrorCode::kAlreadyExists);
  TableEntry next = c.GetEntry("w", {"ns"}, "t").value();
  next.metadata_location = "m2";
  ASSERT_TRUE(c.SwapMetadata({MetadataSwap{"w", {"ns"}, "t", "m1", next}}).has_value());
  next.metadata_location = "m3";
  EXPECT_EQ(c.SwapMetadata({MetadataSwap{"w", {"ns"}, "t", "m1", next}}).error().code,
            ErrorCode::kConflict);
  EXPECT_EQ(c.GetEntry("w", {"ns"}, "t")->metadata_location, "m2");
}

TEST_F(MetastoreTest, MultiTableSwapIsAllOrNothing) {
  auto& c = store_->catalog();
  ASSERT_TRUE(c.SwapMetadata({Create("a", "table"), Create("b", "table")}).has_value());
  TableEntry a = c.GetEntry("w", {"ns"}, "a").value();
  TableEntry b = c.GetEntry("w", {"ns"}, "b").value();
  a.metadata_location = "a2";
  b.metadata_location = "b2";
  auto r = c.SwapMetadata(
      {MetadataSwap{"w", {"ns"}, "a", "m1", a}, MetadataSwap{"w", {"ns"}, "b", "stale", b}});
  EXPECT_EQ(r.error().code, ErrorCode::kConflict);
  EXPECT_EQ(c.GetEntry("w", {"ns"}, "a")->metadata_location, "m1");
}

TEST_F(MetastoreTest, NamespaceDropRequiresEmpty) {
  auto& c = store_->catalog();
  ASSERT_TRUE(c.SwapMetadata({Create("t", "table")}).has_value());
  EXPECT_EQ(c.DropNamespace("w", {"ns"}).error().code, ErrorCode::kConflict);
  ASSERT_TRUE(c.DropEntry("w", {"ns"}, "t", "table").has_value());
  EXPECT_TRUE(c.DropNamespace("w", {"ns"}).has_value());
  EXPECT_EQ(c.GetNamespace("w", {"ns"}).error().code, ErrorCode::kNotFound);
}

TEST_F(MetastoreTest, TasksAreLeased) {
  auto& t = store_->tasks();
  ASSERT_TRUE(t.Enqueue("purge_prefix", "{}").has_value());
  auto first = t.Claim(60000).value();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(t.Claim(60000).value().has_value());  // leased
  ASSERT_TRUE(t.Retry(first->id, 0).has_value());
  auto again = t.Claim(60000).value();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->attempts, 1);
  ASSERT_TRUE(t.Complete(again->id).has_value());
  EXPECT_FALSE(t.Claim(0).value().has_value());
}

}  // namespace
}  // namespace tablemere::metastore
