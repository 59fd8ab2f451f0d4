// The shared optimistic commit against the real SQLite metastore and local-disk store.
#include "catalog/commit_loop.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/key_ring.h"
#include "objectstore/local_disk.h"

namespace tablemere::catalog {
namespace {

class CommitLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("tm-commit-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    meta_ = metastore::OpenSqliteMetastore((root_ / "state.db").string(), clock_).value();
    objects_ =
        objectstore::OpenLocalDiskStore((root_ / "objects").string(), clock_, random_).value();
    ASSERT_TRUE(objects_->OpenBucket("w-wh").has_value());
    ASSERT_TRUE(
        meta_->catalog().CreateNamespace(metastore::Namespace{"wh", {"ns"}, "{}"}).has_value());
    files_ = std::make_unique<WarehouseFiles>(*objects_, clock_, random_, sealer_, "http://s3", 60);
    w_.id = WarehouseId("wh");
  }
  void TearDown() override {
    files_.reset();
    objects_.reset();
    meta_.reset();
    std::filesystem::remove_all(root_);
  }

  // A change of entry "t" from what the metastore holds now to {"n": n}.
  Result<std::vector<EntryChange>> ChangeTo(int n) {
    auto entry = meta_->catalog().GetEntry("wh", {"ns"}, "t");
    EntryChange c;
    if (entry) {
      c.expected_metadata_location = entry->metadata_location;
      c.replacement = *entry;
    } else {
      c.replacement =
          metastore::TableEntry{"wh", {"ns"}, "t", "table", "u", "s3://w-wh/ns/t", "", "", 1, 1};
    }
    c.next = Json{{"n", n}};
    return std::vector<EntryChange>{std::move(c)};
  }

  std::vector<std::string> MetadataKeys() {
    objectstore::ListOptions opts;
    opts.prefix = "ns/t/metadata/";
    std::vector<std::string> keys;
    objectstore::ListResult page = objects_->List("w-wh", opts).value();
    for (const auto& o : page.objects) keys.push_back(o.key);
    return keys;
  }

  SystemClock clock_;
  SystemRandom random_;
  KeyRing keys_{std::string(32, 'k')};
  storage::SessionSealer sealer_{keys_};
  std::filesystem::path root_;
  std::unique_ptr<metastore::Metastore> meta_;
  std::unique_ptr<objectstore::ObjectStore> objects_;
  std::unique_ptr<WarehouseFiles> files_;
  metastore::Warehouse w_;
};

TEST_F(CommitLoopTest, PublishesAFileAndSwapsThePointer) {
  auto created =
      CommitOptimistically(meta_->catalog(), *files_, w_, 4, "table", [&] { return ChangeTo(1); });
  ASSERT_TRUE(created.has_value()) << created.error().message;
  auto updated =
      CommitOptimistically(meta_->catalog(), *files_, w_, 4, "table", [&] { return ChangeTo(2); });
  ASSERT_TRUE(updated.has_value()) << updated.error().message;
  ASSERT_EQ(updated->size(), 1u);
  EXPECT_NE(updated->front().metadata_location.find("/metadata/00001-"), std::string::npos);
  EXPECT_EQ(updated->front().metadata, (Json{{"n", 2}}));
  auto entry = meta_->catalog().GetEntry("wh", {"ns"}, "t").value();
  EXPECT_EQ(entry.metadata_location, updated->front().metadata_location);
  EXPECT_EQ(MetadataKeys().size(), 2u);
}

TEST_F(CommitLoopTest, ANoOpWritesNothing) {
  ASSERT_TRUE(CommitOptimistically(meta_->catalog(), *files_, w_, 4, "view", [&] {
                return ChangeTo(1);
              }).has_value());
  auto same = CommitOptimistically(meta_->catalog(), *files_, w_, 4, "view", [&] {
    auto c = ChangeTo(1);
    c->front().changed = false;
    return c;
  });
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->front().metadata_location,
            meta_->catalog().GetEntry("wh", {"ns"}, "t").value().metadata_location);
  EXPECT_EQ(MetadataKeys().size(), 1u);
}

TEST_F(CommitLoopTest, LostRacesRetryThenConflictAndLeaveNoFileBehind) {
  ASSERT_TRUE(CommitOptimistically(meta_->catalog(), *files_, w_, 4, "view", [&] {
                return ChangeTo(0);
              }).has_value());
  int attempts = 0;
  // Every attempt prepares against the pointer of the moment, then a rival moves it.
  auto lost = CommitOptimistically(meta_->catalog(), *files_, w_, 2, "view", [&] {
    attempts++;
    auto mine = ChangeTo(100 + attempts);
    auto rival = ChangeTo(attempts);
    auto& r = rival->front();
    r.replacement.metadata_location =
        "s3://w-wh/ns/t/metadata/rival-" + std::to_string(attempts) + ".metadata.json";
    EXPECT_TRUE(meta_->catalog()
                    .SwapMetadata({metastore::MetadataSwap{
                        "wh", {"ns"}, "t", r.expected_metadata_location, r.replacement}})
                    .has_value());
    return mine;
  });
  ASSERT_FALSE(lost.has_value());
  EXPECT_EQ(lost.error().code, ErrorCode::kConflict);
  EXPECT_FALSE(metastore::IsStalePointer(lost.error()));
  EXPECT_NE(lost.error().message.find("the view was changed concurrently"), std::string::npos);
  EXPECT_EQ(attempts, 3);                // the first try and two retries
  EXPECT_EQ(MetadataKeys().size(), 1u);  // only the first commit's file
}

TEST_F(CommitLoopTest, APrepareFailureIsReturnedAsItIs) {
  auto failed = CommitOptimistically(meta_->catalog(), *files_, w_, 4, "table",
                                     [&]() -> Result<std::vector<EntryChange>> {
                                       return Fail(Error{ErrorCode::kConflict, "requirement", {}});
                                     });
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().message, "requirement");
  EXPECT_TRUE(MetadataKeys().empty());
}

}  // namespace
}  // namespace tablemere::catalog
