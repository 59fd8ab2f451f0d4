#include "sqlite/reader_pool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <thread>

namespace tablemere::sqlite {
namespace {

class ReaderPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("reader_pool_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "db").string();
    auto writer = Db::Open(path_, true);
    ASSERT_TRUE(writer.has_value());
    writer_ = std::move(*writer);
    ASSERT_TRUE(writer_->Exec("CREATE TABLE t (v INTEGER)").has_value());
  }
  void TearDown() override {
    writer_.reset();
    std::filesystem::remove_all(dir_);
  }

  static int64_t Count(Db& db) {
    auto st = db.Prepare("SELECT COUNT(*) FROM t");
    EXPECT_TRUE(st.has_value());
    auto row = (*st)->Bind({}).Step();
    EXPECT_TRUE(row.has_value() && *row);
    int64_t n = (*st)->Int(0);
    (*st)->Bind({});
    return n;
  }

  std::filesystem::path dir_;
  std::string path_;
  std::unique_ptr<Db> writer_;
};

TEST_F(ReaderPoolTest, LeasesHoldDistinctConnectionsThatSeeCommittedWrites) {
  auto pool = ReaderPool::Open(path_, 3);
  ASSERT_TRUE(pool.has_value());
  ASSERT_TRUE(writer_->Exec("INSERT INTO t VALUES (1)").has_value());
  auto a = (*pool)->Borrow();
  auto b = (*pool)->Borrow();
  auto c = (*pool)->Borrow();
  EXPECT_EQ(std::set<Db*>({&a.db(), &b.db(), &c.db()}).size(), 3u);
  EXPECT_EQ(Count(a.db()), 1);
  ASSERT_TRUE(writer_->Exec("INSERT INTO t VALUES (2)").has_value());
  EXPECT_EQ(Count(b.db()), 2);
  EXPECT_EQ(Count(a.db()), 2);
}

TEST_F(ReaderPoolTest, ABorrowerWaitsForAConnectionGivenBack) {
  auto pool = ReaderPool::Open(path_, 1);
  ASSERT_TRUE(pool.has_value());
  auto held = (*pool)->Borrow();
  Db* only = &held.db();
  Db* got = nullptr;
  std::thread borrower([&] {
    auto lease = (*pool)->Borrow();  // blocks until `held` is given back
    got = &lease.db();
    EXPECT_EQ(Count(lease.db()), 0);
  });
  held.GiveBack();
  held.GiveBack();  // a second give-back does nothing
  borrower.join();
  EXPECT_EQ(got, only);
  auto again = (*pool)->Borrow();
  EXPECT_EQ(&again.db(), only);
}

TEST_F(ReaderPoolTest, OpeningAMissingDirectoryFails) {
  auto pool = ReaderPool::Open((dir_ / "missing" / "db").string(), 2);
  EXPECT_FALSE(pool.has_value());
}

}  // namespace
}  // namespace tablemere::sqlite
