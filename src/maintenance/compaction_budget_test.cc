// The shared compaction budget, over a real metastore that two "servers" (two budgets
// with their own holder names) share, on a clock the test moves.
#include "maintenance/compaction_budget.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace tablemere::maintenance {
namespace {

constexpr int64_t kPerHour = 1000;
constexpr int64_t kLease = 60'000;

class CompactionBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tm-budget-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    Remove();
    meta_ = metastore::OpenSqliteMetastore(path_.string(), clock_).value();
  }
  void TearDown() override {
    meta_.reset();
    Remove();
  }
  void Remove() {
    for (auto suffix : {"", "-wal", "-shm", ".lock"})
      std::filesystem::remove(path_.string() + suffix);
  }
  // A run of server `name`; `run` tells runs of one server apart.
  CompactionBudget Server(const std::string& name, bool sole = false,
                          const std::string& run = "1") {
    return CompactionBudget(meta_->shared_values(), clock_, {name, name + "#" + run}, kPerHour,
                            kLease, sole);
  }

  AdjustableClock clock_;
  std::filesystem::path path_;
  std::unique_ptr<metastore::Metastore> meta_;
};

TEST_F(CompactionBudgetTest, OneCompactionAtATimeAcrossServersWithinTheHoursBytes) {
  CompactionBudget a = Server("a");
  CompactionBudget b = Server("b");
  EXPECT_EQ(a.Reserve().value(), std::optional<int64_t>(kPerHour));
  EXPECT_EQ(b.Reserve().value(), std::nullopt);  // a holds it
  ASSERT_TRUE(a.Release(300).has_value());
  EXPECT_EQ(b.Reserve().value(), std::optional<int64_t>(700));
  ASSERT_TRUE(b.Release(700).has_value());
  EXPECT_EQ(a.Reserve().value(), std::optional<int64_t>(0));  // spent for this hour
  ASSERT_TRUE(a.Release(0).has_value());
  clock_.Advance(3'600'000);
  EXPECT_EQ(b.Reserve().value(), std::optional<int64_t>(kPerHour));  // a new hour
}

TEST_F(CompactionBudgetTest, AReservationItsServerNeverReleasedRunsOutAndCountsWhole) {
  CompactionBudget dead = Server("dead");
  CompactionBudget live = Server("live");
  ASSERT_EQ(dead.Reserve().value(), std::optional<int64_t>(kPerHour));
  clock_.Advance(kLease / 2);
  EXPECT_EQ(live.Reserve().value(), std::nullopt);
  clock_.Advance(kLease / 2);
  // Void now: what it held may all have been read.
  EXPECT_EQ(live.Reserve().value(), std::optional<int64_t>(0));
  ASSERT_TRUE(live.Release(0).has_value());
  ASSERT_TRUE(dead.Release(500).has_value());  // too late: changes nothing
  EXPECT_EQ(live.Reserve().value(), std::optional<int64_t>(0));
}

TEST_F(CompactionBudgetTest, ARenewedReservationOutlivesItsFirstLease) {
  CompactionBudget a = Server("a");
  CompactionBudget b = Server("b");
  ASSERT_TRUE(a.Reserve().value().has_value());
  clock_.Advance(kLease / 2);
  ASSERT_TRUE(a.Renew().has_value());
  clock_.Advance(kLease / 2 + 1000);
  EXPECT_EQ(b.Reserve().value(), std::nullopt);  // still a's
  ASSERT_TRUE(a.Release(100).has_value());
  EXPECT_EQ(b.Reserve().value(), std::optional<int64_t>(kPerHour - 100));
}

// The embedded server is the metastore's only one: what a killed run of it held is void
// when it starts again, without waiting for the lease, and what it read is not charged.
TEST_F(CompactionBudgetTest, ASoleServerVoidsWhatAKilledRunHeld) {
  CompactionBudget before = Server("before-restart", true);
  ASSERT_TRUE(before.Reserve().value().has_value());
  ASSERT_TRUE(before.Release(400).has_value());
  ASSERT_EQ(before.Reserve().value(), std::optional<int64_t>(kPerHour - 400));
  CompactionBudget restarted = Server("after-restart", true);
  EXPECT_EQ(restarted.Reserve().value(), std::optional<int64_t>(kPerHour - 400));
}

// A replica killed and started again over its own data directory (same server name, a
// new run) need not wait out the lease its dead run held; other replicas still do.
TEST_F(CompactionBudgetTest, ARestartedReplicaVoidsWhatItsKilledRunHeldOthersWait) {
  CompactionBudget killed = Server("replica-a", false, "1");
  CompactionBudget other = Server("replica-b");
  ASSERT_TRUE(killed.Reserve().value().has_value());
  ASSERT_TRUE(killed.Release(300).has_value());
  ASSERT_EQ(killed.Reserve().value(), std::optional<int64_t>(kPerHour - 300));
  EXPECT_EQ(other.Reserve().value(), std::nullopt);  // the killed run's, for all b knows
  CompactionBudget restarted = Server("replica-a", false, "2");
  EXPECT_EQ(restarted.Reserve().value(), std::optional<int64_t>(kPerHour - 300));
  EXPECT_EQ(other.Reserve().value(), std::nullopt);  // now the restarted run's
  ASSERT_TRUE(killed.Release(500).has_value());      // the dead run's release: too late
  ASSERT_TRUE(restarted.Release(100).has_value());
  EXPECT_EQ(other.Reserve().value(), std::optional<int64_t>(kPerHour - 400));
}

}  // namespace
}  // namespace tablemere::maintenance
