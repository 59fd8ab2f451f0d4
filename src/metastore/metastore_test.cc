// The metastore contract, run unchanged against both backends: SQLite, and PostgreSQL on
// a throwaway cluster this binary starts (one per process; each test its own database).
#include "metastore/metastore.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "postgres/postgres.h"
#include "postgres/test_cluster.h"

namespace tablemere::metastore {
namespace {

enum class Backend { kSqlite, kPostgres };

postgres::TestCluster& Cluster() {
  static std::unique_ptr<postgres::TestCluster> cluster = [] {
    auto started = postgres::TestCluster::Start();
    if (!started) {
      ADD_FAILURE() << started.error().message;
      std::abort();
    }
    return std::move(*started);
  }();
  return *cluster;
}

class MetastoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres) {
      auto db = Cluster().CreateDatabase();
      ASSERT_TRUE(db.has_value()) << db.error().message;
      conninfo_ = Cluster().Conninfo(*db);
    } else {
      std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
      for (char& c : test) c = c == '/' ? '-' : c;
      path_ = std::filesystem::temp_directory_path() /
              ("tm-meta-" + std::to_string(::getpid()) + "-" + test + ".db");
      std::filesystem::remove(path_);
    }
    store_ = Open().value();
    ASSERT_TRUE(store_->catalog().CreateNamespace(Namespace{"w", {"ns"}, "{}"}).has_value());
  }
  void TearDown() override {
    store_.reset();
    if (GetParam() == Backend::kSqlite) {
      for (auto suffix : {"", "-wal", "-shm", ".lock"}) {
        std::filesystem::remove(path_.string() + suffix);
      }
    }
  }
  // Another handle on the test's database (a second server).
  Result<std::unique_ptr<Metastore>> Open() {
    if (GetParam() == Backend::kPostgres) return OpenPostgresMetastore(conninfo_, {}, clock_);
    return OpenSqliteMetastore(path_.string(), clock_);
  }
  static MetadataSwap Create(const std::string& name, const std::string& kind) {
    TableEntry e{"w", {"ns"}, name, kind, "u", "s3://w/ns/" + name, "m1", "{}", 1, 1};
    return MetadataSwap{"w", {"ns"}, name, "", e};
  }
  SystemClock clock_;
  std::filesystem::path path_;
  std::string conninfo_;
  std::unique_ptr<Metastore> store_;
};

INSTANTIATE_TEST_SUITE_P(Backends, MetastoreTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const auto& info) {
                           return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
                         });

TEST_P(MetastoreTest, MigrationsAreIdempotent) {
  store_.reset();
  store_ = Open().value();
  EXPECT_TRUE(store_->catalog().GetNamespace("w", {"ns"}).has_value());
}

TEST_P(MetastoreTest, SwapIsCompareAndSwap) {
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

TEST_P(MetastoreTest, MultiTableSwapIsAllOrNothing) {
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

// A drop and the task that follows it commit together; a drop that fails enqueues nothing.
TEST_P(MetastoreTest, DropEnqueuesItsFollowUpInTheSameTransaction) {
  auto& c = store_->catalog();
  ASSERT_TRUE(c.SwapMetadata({Create("t", "table")}).has_value());
  auto follow_up = [](const TableEntry& e) -> std::optional<NewTask> {
    return NewTask{"purge_prefix", "{\"of\":\"" + e.name + "\"}"};
  };
  EXPECT_EQ(c.DropEntry("w", {"ns"}, "t", "view", follow_up).error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(store_->tasks().Claim(60000).value().has_value());
  ASSERT_TRUE(c.DropEntry("w", {"ns"}, "t", "table", follow_up).has_value());
  auto task = store_->tasks().Claim(60000).value();
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->kind, "purge_prefix");
  EXPECT_EQ(task->payload_json, "{\"of\":\"t\"}");
}

// A table's maintenance state (last runs, noncurrent objects) moves with a rename and goes
// with a drop: a table created under the old name later starts with none.
TEST_P(MetastoreTest, MaintenanceStateFollowsItsTable) {
  auto& c = store_->catalog();
  auto& m = store_->maintenance();
  ASSERT_TRUE(c.SwapMetadata({Create("t", "table")}).has_value());
  ASSERT_TRUE(m.RecordRun({"w", {"ns"}, "t", "compact", 5, "{}"}).has_value());
  ASSERT_TRUE(m.ReplaceNoncurrent("w", {"ns"}, "t", {{"k/x", 10, 7}}).has_value());
  ASSERT_TRUE(c.RenameEntry("w", {"ns"}, "t", {"ns"}, "u", "table").has_value());
  EXPECT_TRUE(m.LastRuns("w", {"ns"}, "t")->empty());
  EXPECT_TRUE(m.Noncurrent("w", {"ns"}, "t")->empty());
  ASSERT_EQ(m.LastRuns("w", {"ns"}, "u")->size(), 1u);
  ASSERT_EQ(m.Noncurrent("w", {"ns"}, "u")->size(), 1u);
  EXPECT_EQ(m.Noncurrent("w", {"ns"}, "u")->front().found_ms, 7);
  ASSERT_TRUE(c.DropEntry("w", {"ns"}, "u", "table").has_value());
  EXPECT_TRUE(m.LastRuns("w", {"ns"}, "u")->empty());
  EXPECT_TRUE(m.NoncurrentOfWarehouse("w")->empty());
  // A job that finishes after the drop records nothing.
  ASSERT_TRUE(m.RecordRun({"w", {"ns"}, "u", "orphans", 9, "{}"}).has_value());
  ASSERT_TRUE(m.ReplaceNoncurrent("w", {"ns"}, "u", {{"k/y", 1, 9}}).has_value());
  EXPECT_TRUE(m.LastRuns("w", {"ns"}, "u")->empty());
  EXPECT_TRUE(m.NoncurrentOfWarehouse("w")->empty());
}

// Row moves are kept per warehouse and compaction snapshot, and forgotten by age.
TEST_P(MetastoreTest, RowMovesAreKeptPerTableUntilForgotten) {
  auto& m = store_->maintenance();
  ASSERT_TRUE(m.SaveRowMoves("w", "t1", 7, "{\"a\":1}", 100, 0).has_value());
  ASSERT_TRUE(m.SaveRowMoves("v", "t1", 7, "{\"b\":2}", 200, 0).has_value());
  // Another table of the same warehouse with a snapshot of the same id: its own record.
  ASSERT_TRUE(m.SaveRowMoves("w", "t2", 7, "{\"c\":3}", 200, 0).has_value());
  EXPECT_EQ(m.RowMoves("w", "t1", 7).value(), std::optional<std::string>("{\"a\":1}"));
  EXPECT_EQ(m.RowMoves("w", "t2", 7).value(), std::optional<std::string>("{\"c\":3}"));
  EXPECT_FALSE(m.RowMoves("w", "t3", 7).value().has_value());
  EXPECT_FALSE(m.RowMoves("w", "t1", 8).value().has_value());
  ASSERT_TRUE(m.SaveRowMoves("w", "t1", 9, "{}", 300, 150).has_value());  // forgets w/t1/7
  EXPECT_FALSE(m.RowMoves("w", "t1", 7).value().has_value());
  EXPECT_TRUE(m.RowMoves("v", "t1", 7).value().has_value());
  EXPECT_TRUE(m.RowMoves("w", "t2", 7).value().has_value());
  EXPECT_TRUE(m.RowMoves("w", "t1", 9).value().has_value());
}

// Scan plans are found until they expire, finish only from the state they were in, and a
// new plan forgets the expired ones.
TEST_P(MetastoreTest, ScanPlansExpireAndFinishOnce) {
  auto& plans = store_->scan_plans();
  ScanPlan p{"plan-1", "w", "t-uuid", ScanPlanState::kSubmitted, "{}", 100, 1000};
  ASSERT_TRUE(plans.Create(p, 100).has_value());
  auto found = plans.Find("plan-1", 500).value();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->table_uuid, "t-uuid");
  EXPECT_EQ(found->state, ScanPlanState::kSubmitted);
  EXPECT_FALSE(plans.Find("plan-1", 1001).value().has_value());  // expired
  EXPECT_FALSE(plans.Find("plan-2", 500).value().has_value());
  EXPECT_TRUE(
      plans
          .Finish("plan-1", ScanPlanState::kSubmitted, ScanPlanState::kCompleted, "{\"done\":true}")
          .value());
  EXPECT_FALSE(
      plans.Finish("plan-1", ScanPlanState::kSubmitted, ScanPlanState::kFailed, "{}").value());
  found = plans.Find("plan-1", 500).value();
  EXPECT_EQ(found->state, ScanPlanState::kCompleted);
  EXPECT_EQ(found->body, "{\"done\":true}");
  // A plan created after plan-1 expired forgets it.
  ASSERT_TRUE(plans.Create({"plan-2", "w", "t", ScanPlanState::kCompleted, "{}", 2000, 3000}, 2000)
                  .has_value());
  EXPECT_FALSE(plans.Remove("plan-1").value());
  EXPECT_TRUE(plans.Remove("plan-2").value());
  EXPECT_FALSE(plans.Find("plan-2", 2000).value().has_value());
}

TEST_P(MetastoreTest, NamespaceDropRequiresEmpty) {
  auto& c = store_->catalog();
  ASSERT_TRUE(c.SwapMetadata({Create("t", "table")}).has_value());
  EXPECT_EQ(c.DropNamespace("w", {"ns"}).error().code, ErrorCode::kConflict);
  ASSERT_TRUE(c.DropEntry("w", {"ns"}, "t", "table").has_value());
  EXPECT_TRUE(c.DropNamespace("w", {"ns"}).has_value());
  EXPECT_EQ(c.GetNamespace("w", {"ns"}).error().code, ErrorCode::kNotFound);
}

// SQLite's database belongs to one server (its memos are exact only so); PostgreSQL's is
// shared by every server opened on it, each seeing the others' writes at once.
TEST_P(MetastoreTest, ASecondServerIsRefusedOnSqliteAndSharesPostgres) {
  auto second = Open();
  if (GetParam() == Backend::kSqlite) {
    ASSERT_FALSE(second.has_value());
    EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
    EXPECT_NE(second.error().message.find("in use by another tablemere-server"), std::string::npos);
    store_.reset();  // the lock goes with the store
    EXPECT_TRUE(Open().has_value());
    return;
  }
  ASSERT_TRUE(second.has_value()) << second.error().message;
  auto& mine = store_->catalog();
  auto& theirs = (*second)->catalog();
  ASSERT_TRUE(mine.SwapMetadata({Create("t", "table")}).has_value());
  EXPECT_EQ(theirs.GetEntryHead("w", {"ns"}, "t")->metadata_location, "m1");
  TableEntry next = theirs.GetEntry("w", {"ns"}, "t").value();
  next.metadata_location = "m2";
  ASSERT_TRUE(theirs.SwapMetadata({MetadataSwap{"w", {"ns"}, "t", "m1", next}}).has_value());
  EXPECT_EQ(mine.GetEntryHead("w", {"ns"}, "t")->metadata_location, "m2");
}

// Head reads are memoised; none may return anything older than a write already
// acknowledged, whichever thread wrote it.
TEST_P(MetastoreTest, HeadReadsNeverTrailAnAcknowledgedWrite) {
  auto& c = store_->catalog();
  ASSERT_TRUE(c.SwapMetadata({Create("t", "table")}).has_value());
  constexpr int kVersions = 300;
  std::atomic<int> acknowledged{1};
  std::atomic<int> stale{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; r++) {
    readers.emplace_back([&] {
      while (!done.load()) {
        int floor = acknowledged.load();
        auto head = c.GetEntryHead("w", {"ns"}, "t");
        if (!head || std::stoi(head->metadata_location.substr(1)) < floor) stale++;
      }
    });
  }
  for (int v = 2; v <= kVersions; v++) {
    TableEntry next = c.GetEntry("w", {"ns"}, "t").value();
    std::string expected = next.metadata_location;
    next.metadata_location = "m" + std::to_string(v);
    ASSERT_TRUE(c.SwapMetadata({MetadataSwap{"w", {"ns"}, "t", expected, next}}).has_value());
    acknowledged.store(v);
    EXPECT_EQ(c.GetEntryHead("w", {"ns"}, "t")->metadata_location, next.metadata_location);
  }
  done.store(true);
  for (auto& t : readers) t.join();
  EXPECT_EQ(stale.load(), 0);
  ASSERT_TRUE(c.DropEntry("w", {"ns"}, "t", "table").has_value());
  EXPECT_EQ(c.GetEntryHead("w", {"ns"}, "t").error().code, ErrorCode::kNotFound);
}

// Bucket owners are memoised (every S3 request to an operator bucket reads one): a read
// right after a change answers the change, never the memoised owner.
TEST_P(MetastoreTest, BucketOwnerReadsFollowEveryChange) {
  auto& owners = store_->bucket_owners();
  EXPECT_EQ(owners.BucketOwner("b").error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(owners.SetBucketOwner("b", "alice").has_value());
  for (int i = 0; i < 2; i++) EXPECT_EQ(owners.BucketOwner("b").value(), "alice");
  ASSERT_TRUE(owners.SetBucketOwner("b", "bob").has_value());
  for (int i = 0; i < 2; i++) EXPECT_EQ(owners.BucketOwner("b").value(), "bob");
  ASSERT_TRUE(owners.SetBucketOwner("c", "carol").has_value());
  EXPECT_EQ(owners.BucketOwner("c").value(), "carol");
  EXPECT_EQ(owners.BucketOwner("b").value(), "bob");
  ASSERT_TRUE(owners.ClearBucketOwner("b").has_value());
  EXPECT_EQ(owners.BucketOwner("b").error().code, ErrorCode::kNotFound);
}

// Names may hold any byte the catalog accepts; two tables whose names would join to the
// same text must still be told apart by the memo.
TEST_P(MetastoreTest, HeadReadsTellApartNamesThatJoinAlike) {
  auto& c = store_->catalog();
  ASSERT_TRUE(c.CreateNamespace(Namespace{"w",
                                          {"a\x1e"
                                           "b"},
                                          "{}"})
                  .has_value());
  ASSERT_TRUE(c.CreateNamespace(Namespace{"w", {"a"}, "{}"}).has_value());
  TableEntry first{"w",
                   {"a\x1e"
                    "b"},
                   "c",
                   "table",
                   "u1",
                   "s3://w/1",
                   "m-first",
                   "{}",
                   1,
                   1};
  TableEntry second{"w",
                    {"a"},
                    "b\x1e"
                    "c",
                    "table",
                    "u2",
                    "s3://w/2",
                    "m-second",
                    "{}",
                    1,
                    1};
  ASSERT_TRUE(c.SwapMetadata({MetadataSwap{"w", first.namespace_levels, first.name, "", first}})
                  .has_value());
  ASSERT_TRUE(c.SwapMetadata({MetadataSwap{"w", second.namespace_levels, second.name, "", second}})
                  .has_value());
  for (int i = 0; i < 2; i++) {  // the second round is served from the memo
    EXPECT_EQ(c.GetEntryHead("w", first.namespace_levels, first.name)->metadata_location,
              "m-first");
    EXPECT_EQ(c.GetEntryHead("w", second.namespace_levels, second.name)->metadata_location,
              "m-second");
  }
}

TEST_P(MetastoreTest, TasksAreLeased) {
  auto& t = store_->tasks();
  ASSERT_TRUE(t.Enqueue("purge_prefix", "{}").has_value());
  auto first = t.Claim(60000).value();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(t.Claim(60000).value().has_value());  // leased
  ASSERT_TRUE(t.Retry(*first, 0).has_value());
  auto again = t.Claim(60000).value();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->attempts, 1);
  ASSERT_TRUE(t.Complete(*again).has_value());
  EXPECT_FALSE(t.Claim(0).value().has_value());
}

// A worker whose lease ran out (another claim took the task over) records nothing: the
// task stays with its new claim, which alone may complete or retry it.
TEST_P(MetastoreTest, AWorkerWhoseLeaseWasTakenOverCannotRecordItsResult) {
  auto& t = store_->tasks();
  ASSERT_TRUE(t.Enqueue("purge_prefix", "{}").has_value());
  auto slow = t.Claim(0).value().value();  // a lease that has already run out
  auto second = GetParam() == Backend::kPostgres ? Open() : Result<std::unique_ptr<Metastore>>();
  TaskStore& other = second && *second ? (*second)->tasks() : t;  // another replica
  auto taken = other.Claim(60000).value().value();
  EXPECT_EQ(taken.id, slow.id);
  auto late = t.Complete(slow);
  ASSERT_FALSE(late.has_value());
  EXPECT_EQ(late.error().code, ErrorCode::kConflict);
  EXPECT_EQ(t.Retry(slow, 0).error().code, ErrorCode::kConflict);
  EXPECT_EQ(t.ListOfKind("purge_prefix")->size(), 1u);  // still there, still leased
  EXPECT_FALSE(t.Claim(60000).value().has_value());
  ASSERT_TRUE(other.Complete(taken).has_value());
  EXPECT_TRUE(t.ListOfKind("purge_prefix")->empty());
}

TEST_P(MetastoreTest, DelayedTasksWaitAndAreListedByKind) {
  auto& t = store_->tasks();
  auto follow_up = [](const TableEntry&) -> std::optional<NewTask> {
    return NewTask{"purge_prefix", "{\"later\":true}", 3'600'000};
  };
  ASSERT_TRUE(store_->catalog().SwapMetadata({Create("t", "table")}).has_value());
  ASSERT_TRUE(store_->catalog().DropEntry("w", {"ns"}, "t", "table", follow_up).has_value());
  ASSERT_TRUE(t.Enqueue("other", "{}").has_value());
  auto claimed = t.Claim(60000).value();
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->kind, "other");  // the delayed purge is not due yet
  EXPECT_FALSE(t.Claim(60000).value().has_value());
  auto listed = t.ListOfKind("purge_prefix").value();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].payload_json, "{\"later\":true}");
}

// ---------------------------------------------------------------- write transactions

Principal Human(const std::string& id, const std::string& email) {
  return Principal{.id = PrincipalId(id),
                   .kind = PrincipalKind::kHuman,
                   .email = email,
                   .display_name = id,
                   .created_ms = 1};
}

TEST_P(MetastoreTest, TransactionCommitsEveryWriteTogether) {
  auto txn = store_->BeginWrite().value();
  ASSERT_TRUE(txn->principals().CreatePrincipal(Human("p_1", "a@x.io")).has_value());
  ASSERT_TRUE(txn->orgs().CreateOrg({OrgId("o_1"), "Acme", "acme", 1}).has_value());
  ASSERT_TRUE(txn->orgs().PutMember({OrgId("o_1"), PrincipalId("p_1"), Role::kAdmin}).has_value());
  // The transaction reads its own writes; the metastore does not see them yet.
  EXPECT_EQ(txn->orgs().MembersOf(OrgId("o_1")).value().size(), 1u);
  EXPECT_EQ(store_->principals().FindPrincipal(PrincipalId("p_1")).error().code,
            ErrorCode::kNotFound);
  ASSERT_TRUE(txn->Commit().has_value());
  txn.reset();
  auto orgs = store_->orgs().OrgsOf(PrincipalId("p_1")).value();
  ASSERT_EQ(orgs.size(), 1u);
  EXPECT_EQ(orgs[0].second, Role::kAdmin);
}

TEST_P(MetastoreTest, TransactionWithoutCommitChangesNothing) {
  {
    auto txn = store_->BeginWrite().value();
    ASSERT_TRUE(txn->principals().CreatePrincipal(Human("p_1", "a@x.io")).has_value());
    ASSERT_TRUE(txn->tasks().Enqueue("purge_prefix", "{}").has_value());
    ASSERT_TRUE(
        txn->audit().Record(AuditEvent{0, 1, "p_1", "", "x", "y", "z", "", "{}"}).has_value());
  }  // destroyed: rolled back
  EXPECT_EQ(store_->principals().FindPrincipal(PrincipalId("p_1")).error().code,
            ErrorCode::kNotFound);
  EXPECT_FALSE(store_->tasks().Claim(1000).value().has_value());
  EXPECT_TRUE(store_->audit().List("", "p_1", "", 0, 10).value().empty());
  // The writer is free again.
  EXPECT_TRUE(store_->principals().CreatePrincipal(Human("p_2", "b@x.io")).has_value());
}

// A store call that fails inside a transaction leaves nothing of itself behind, so the
// caller may go on and commit the rest.
TEST_P(MetastoreTest, FailedCallInsideTransactionIsUndoneAlone) {
  ASSERT_TRUE(store_->principals().CreatePrincipal(Human("p_1", "a@x.io")).has_value());
  auto txn = store_->BeginWrite().value();
  ASSERT_TRUE(txn->principals().CreatePrincipal(Human("p_2", "b@x.io")).has_value());
  auto dup = txn->principals().CreatePrincipal(Human("p_3", "A@x.io"));
  EXPECT_EQ(dup.error().code, ErrorCode::kAlreadyExists);  // emails are case-blind
  EXPECT_EQ(dup.error().Detail("conflict"), "email");
  ASSERT_TRUE(txn->Commit().has_value());
  txn.reset();
  EXPECT_TRUE(store_->principals().FindPrincipal(PrincipalId("p_2")).has_value());
  EXPECT_FALSE(store_->principals().FindPrincipal(PrincipalId("p_3")).has_value());
}

// While a thread holds a transaction, a write through the metastore itself (which would
// wait for that same thread forever) fails at once.
TEST_P(MetastoreTest, WriteOutsideTheHeldTransactionFailsInsteadOfDeadlocking) {
  auto txn = store_->BeginWrite().value();
  auto r = store_->principals().CreatePrincipal(Human("p_1", "a@x.io"));
  EXPECT_EQ(r.error().code, ErrorCode::kInternal);
  EXPECT_EQ(store_->BeginWrite().error().code, ErrorCode::kInternal);
}

// Another thread's write waits for the transaction and then sees its effect.
TEST_P(MetastoreTest, ConcurrentWritersWaitForTheTransaction) {
  auto txn = store_->BeginWrite().value();
  ASSERT_TRUE(txn->orgs().CreateOrg({OrgId("o_1"), "Acme", "acme", 1}).has_value());
  std::atomic<bool> done{false};
  Result<void> other;
  std::thread t([&] {
    other = store_->orgs().CreateOrg({OrgId("o_2"), "Acme 2", "acme", 1});
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(done.load());  // blocked behind the open transaction
  ASSERT_TRUE(txn->Commit().has_value());
  txn.reset();
  t.join();
  EXPECT_EQ(other.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(other.error().Detail("conflict"), "handle");
}

TEST_P(MetastoreTest, GrantsMembersAndIdempotencyRecords) {
  auto& w = store_->warehouses();
  ASSERT_TRUE(store_->orgs().CreateOrg({OrgId("o_1"), "Acme", "acme", 1}).has_value());
  ASSERT_TRUE(w.CreateProject({ProjectId("pr_1"), OrgId("o_1"), "main", 1}).has_value());
  EXPECT_EQ(
      w.CreateProject({ProjectId("pr_2"), OrgId("o_1"), "main", 1}).error().Detail("conflict"),
      "name");
  ASSERT_TRUE(w.CreateWarehouse({WarehouseId("w1"), ProjectId("pr_1"), OrgId("o_1"), "lake", 1, 1})
                  .has_value());
  ASSERT_TRUE(store_->principals().CreatePrincipal(Human("p_1", "a@x.io")).has_value());
  ASSERT_TRUE(
      w.PutGrant({WarehouseId("w1"), PrincipalId("p_1"), Level::kRead, PrincipalId("p_1"), 5})
          .has_value());
  ASSERT_TRUE(
      w.PutGrant({WarehouseId("w1"), PrincipalId("p_1"), Level::kNone, PrincipalId("p_1"), 6})
          .has_value());
  auto grants = w.GrantsOn(WarehouseId("w1")).value();
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].level, Level::kNone);
  EXPECT_EQ(grants[0].granted_ms, 6);
  ASSERT_TRUE(w.DeleteGrant(WarehouseId("w1"), PrincipalId("p_1")).has_value());
  EXPECT_EQ(w.DeleteGrant(WarehouseId("w1"), PrincipalId("p_1")).error().code,
            ErrorCode::kNotFound);
  auto& idem = store_->idempotency();
  ASSERT_TRUE(
      idem.PutIdempotency({PrincipalId("p_1"), "k", "POST /v1/projects", "pr_1", 1}).has_value());
  EXPECT_EQ(idem.PutIdempotency({PrincipalId("p_1"), "k", "POST /v1/warehouses", "w1", 1})
                .error()
                .Detail("conflict"),
            "idempotency_key");
  EXPECT_EQ(idem.FindIdempotency(PrincipalId("p_1"), "k").value()->endpoint, "POST /v1/projects");
  ASSERT_TRUE(w.DeleteWarehouse(WarehouseId("w1")).has_value());
  EXPECT_EQ(w.FindWarehouse(WarehouseId("w1")).error().code, ErrorCode::kNotFound);
}

TEST_P(MetastoreTest, SessionsRotateOnceAndLinksAreSpentOnce) {
  auto& x = store_->sessions();
  ASSERT_TRUE(store_->principals().CreatePrincipal(Human("p_1", "a@x.io")).has_value());
  for (const char* id : {"s_1", "s_2"}) {
    Session s{id, PrincipalId("p_1"), std::string("h-") + id, "", 1, 1, 1000, 0, "ua", "ip"};
    ASSERT_TRUE(x.CreateSession(s).has_value());
  }
  ASSERT_TRUE(x.RotateRefresh("s_1", "h-s_1", "h2", 10, 2000).has_value());
  // A second rotation from the same (now previous) hash loses.
  EXPECT_EQ(x.RotateRefresh("s_1", "h-s_1", "h3", 11, 2000).error().code, ErrorCode::kConflict);
  auto by_old = x.SessionByRefresh("h-s_1").value();
  EXPECT_EQ(by_old.id, "s_1");
  EXPECT_EQ(by_old.refresh_hash, "h2");
  EXPECT_EQ(by_old.previous_refresh_hash, "h-s_1");
  EXPECT_EQ(by_old.expires_ms, 2000);
  EXPECT_EQ(x.LiveSessionsOf(PrincipalId("p_1"), 50).value().size(), 2u);
  // Keeping s_2, the others are revoked; a revoked session no longer rotates.
  EXPECT_EQ(x.RevokeSessionsOf(PrincipalId("p_1"), "s_2", 60).value(), 1);
  EXPECT_EQ(x.RotateRefresh("s_1", "h2", "h4", 61, 3000).error().code, ErrorCode::kConflict);
  EXPECT_FALSE(x.RevokeSession("s_1", 62).value());
  EXPECT_TRUE(x.RevokeSession("s_2", 62).value());
  EXPECT_TRUE(x.LiveSessionsOf(PrincipalId("p_1"), 63).value().empty());

  ASSERT_TRUE(x.PutLink({"t1", "reset_password", "a@x.io", "", "{}", 1, 100, 0}).has_value());
  ASSERT_TRUE(x.PutLink({"t2", "reset_password", "a@x.io", "", "{}", 2, 100, 0}).has_value());
  auto open = x.OpenLinksFor("a@x.io", 50).value();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].token_hash, "t2");
  ASSERT_TRUE(x.SpendLink("t2", 51).has_value());
  EXPECT_EQ(x.SpendLink("t2", 52).error().code, ErrorCode::kConflict);
  EXPECT_EQ(x.OpenLinksFor("a@x.io", 53).value()[0].token_hash, "t1");
  EXPECT_TRUE(x.OpenLinksFor("a@x.io", 100).value().empty());

  ASSERT_TRUE(x.SetPassword({PrincipalId("p_1"), "$argon2id$h1", 5}).has_value());
  ASSERT_TRUE(x.SetPassword({PrincipalId("p_1"), "$argon2id$h2", 6}).has_value());
  EXPECT_EQ(x.FindPassword(PrincipalId("p_1")).value().hash, "$argon2id$h2");
  EXPECT_EQ(x.FindPassword(PrincipalId("p_2")).error().code, ErrorCode::kNotFound);
}

TEST_P(MetastoreTest, OldRateEventsArePurged) {
  auto& v = store_->verification();
  ASSERT_TRUE(v.RecordRate("a", 10).has_value());
  ASSERT_TRUE(v.RecordRate("b", 20).has_value());
  ASSERT_TRUE(v.RecordRate("b", 30).has_value());
  EXPECT_EQ(v.PurgeRateEvents(25).value(), 2);
  EXPECT_EQ(v.PeekRate("b", 5, 1000, 40).value().count, 1);
  EXPECT_EQ(v.PeekRate("a", 5, 1000, 40).value().count, 0);
}

TEST_P(MetastoreTest, BucketsAreRegisteredOnceAndChangedByAttribute) {
  auto& b = store_->buckets();
  ASSERT_TRUE(b.AddBucket(S3Bucket{"logs", 5, "", "", {{"team", "data"}}}).has_value());
  EXPECT_EQ(b.AddBucket(S3Bucket{"logs", 6, "", "", {}}).error().code, ErrorCode::kAlreadyExists);
  ASSERT_TRUE(b.AddBucket(S3Bucket{"alpha", 7, "public-read", "", {}}).has_value());

  // Each change writes only what it names: tags, then CORS, then the ACL, all kept.
  S3BucketChange tags;
  tags.tags = std::map<std::string, std::string>{{"env", "prod"}, {"k", "v"}};
  ASSERT_TRUE(b.UpdateBucket("logs", tags).has_value());
  S3BucketChange cors;
  cors.cors = "<CORSConfiguration/>";
  ASSERT_TRUE(b.UpdateBucket("logs", cors).has_value());
  S3BucketChange acl;
  acl.acl = "public-read";
  auto changed = b.UpdateBucket("logs", acl);
  ASSERT_TRUE(changed.has_value());
  EXPECT_EQ(changed->created_ms, 5);
  EXPECT_EQ(changed->cors, "<CORSConfiguration/>");
  EXPECT_EQ(changed->acl, "public-read");
  EXPECT_EQ(changed->tags, (std::map<std::string, std::string>{{"env", "prod"}, {"k", "v"}}));
  EXPECT_EQ(b.UpdateBucket("nope", acl).error().code, ErrorCode::kNotFound);

  // The location is kept from creation; the PublicAccessBlock is set, kept by other
  // changes, and removed by "".
  S3Bucket placed{"placed", 8, "", "", {}};
  placed.location = "eu-west-1";
  ASSERT_TRUE(b.AddBucket(placed).has_value());
  S3BucketChange block;
  block.public_access_block = "1010";
  ASSERT_TRUE(b.UpdateBucket("placed", block).has_value());
  ASSERT_TRUE(b.UpdateBucket("placed", acl).has_value());
  EXPECT_EQ(b.FindBucket("placed")->location, "eu-west-1");
  EXPECT_EQ(b.FindBucket("placed")->public_access_block, "1010");
  block.public_access_block = "";
  EXPECT_EQ(b.UpdateBucket("placed", block)->public_access_block, "");
  EXPECT_TRUE(b.RemoveBucket("placed").value_or(false));

  auto all = b.AllBuckets();
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "alpha");
  EXPECT_TRUE((*all)[0].tags.empty());
  EXPECT_EQ((*all)[1].name, "logs");
  EXPECT_EQ((*all)[1].tags.size(), 2u);

  EXPECT_TRUE(b.RemoveBucket("logs").value_or(false));
  EXPECT_FALSE(b.RemoveBucket("logs").value_or(true));
  EXPECT_EQ(b.FindBucket("logs").error().code, ErrorCode::kNotFound);
  // A bucket registered again under the name starts without the old one's tags.
  ASSERT_TRUE(b.AddBucket(S3Bucket{"logs", 9, "", "", {}}).has_value());
  EXPECT_TRUE(b.FindBucket("logs")->tags.empty());
}

TEST_P(MetastoreTest, ObjectVersionsAreNumberedListedAndGoWithTheirBucket) {
  auto& b = store_->buckets();
  ASSERT_TRUE(b.AddBucket(S3Bucket{"vers", 5, "", "", {}}).has_value());
  S3BucketChange on;
  on.versioning = "Enabled";
  EXPECT_EQ(b.UpdateBucket("vers", on)->versioning, "Enabled");
  auto add = [&](const std::string& key, const std::string& id, bool marker = false) {
    ObjectVersion v;
    v.bucket = "vers";
    v.key = key;
    v.version_id = id;
    v.delete_marker = marker;
    v.size = marker ? 0 : 3;
    v.etag = marker ? "" : "e-" + id;
    v.modified_ms = 10;
    return b.AddVersion(v).value().seq;
  };
  EXPECT_EQ(add("a/1", "v1"), 1);
  EXPECT_EQ(add("a/1", "v2"), 2);
  EXPECT_EQ(add("a/1", "m3", true), 3);
  EXPECT_EQ(add("a/2", "null"), 1);
  EXPECT_EQ(add("b", "v9"), 1);
  // Adding a version the key has replaces it where it stands.
  EXPECT_EQ(add("a/1", "v1"), 1);

  EXPECT_EQ(b.NewestVersion("vers", "a/1").value()->version_id, "m3");
  EXPECT_TRUE(b.NewestVersion("vers", "a/1").value()->delete_marker);
  EXPECT_FALSE(b.NewestVersion("vers", "zzz").value().has_value());
  EXPECT_EQ(b.FindVersion("vers", "a/1", "v2").value()->etag, "e-v2");
  EXPECT_FALSE(b.FindVersion("vers", "a/2", "v2").value().has_value());

  auto ids = [&](const std::string& prefix, const std::string& after_key, int64_t after_seq,
                 int limit) {
    std::vector<std::string> out;
    auto listed = b.ListVersions("vers", prefix, after_key, after_seq, limit);
    for (const auto& v : listed.value()) out.push_back(v.key + "@" + v.version_id);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(ids("", "", 0, 10), (V{"a/1@m3", "a/1@v2", "a/1@v1", "a/2@null", "b@v9"}));
  EXPECT_EQ(ids("a/", "", 0, 2), (V{"a/1@m3", "a/1@v2"}));
  EXPECT_EQ(ids("a/", "a/1", 2, 10), (V{"a/1@v1", "a/2@null"}));
  EXPECT_EQ(ids("", "a/1", 0, 10), (V{"a/2@null", "b@v9"}));
  EXPECT_EQ(ids("b", "", 0, 10), (V{"b@v9"}));

  EXPECT_TRUE(b.RemoveVersion("vers", "a/1", "v2").value_or(false));
  EXPECT_FALSE(b.RemoveVersion("vers", "a/1", "v2").value_or(true));
  EXPECT_EQ(b.CountVersions("vers").value(), 4);
  // The next version of a key still numbers after its newest.
  EXPECT_EQ(add("a/1", "v4"), 4);

  S3BucketChange lock;
  lock.object_lock = "Enabled|GOVERNANCE|1|0";
  EXPECT_EQ(b.UpdateBucket("vers", lock)->object_lock, "Enabled|GOVERNANCE|1|0");
  EXPECT_EQ(b.FindBucket("vers")->versioning, "Enabled");

  ASSERT_TRUE(b.RemoveBucket("vers").value_or(false));
  EXPECT_EQ(b.CountVersions("vers").value(), 0);
  ASSERT_TRUE(b.AddBucket(S3Bucket{"vers", 6, "", "", {}}).has_value());
  EXPECT_EQ(b.FindBucket("vers")->versioning, "");
  EXPECT_FALSE(b.NewestVersion("vers", "a/1").value().has_value());
}

TEST_P(MetastoreTest, KeyLocksAreHeldUntilReleasedOrTheLeaseRunsOut) {
  auto& locks = store_->key_locks();
  EXPECT_TRUE(locks.TryLock("b/k", "one", 1000, 500).value_or(false));
  EXPECT_FALSE(locks.TryLock("b/k", "two", 1200, 500).value_or(true));  // leased to one
  EXPECT_TRUE(locks.TryLock("b/other", "two", 1200, 500).value_or(false));
  ASSERT_TRUE(locks.Unlock("b/k", "two").has_value());  // not two's to release
  EXPECT_FALSE(locks.TryLock("b/k", "two", 1400, 500).value_or(true));
  EXPECT_TRUE(locks.TryLock("b/k", "two", 1500, 500).value_or(false));  // one's lease ran out
  ASSERT_TRUE(locks.Unlock("b/k", "two").has_value());
  EXPECT_TRUE(locks.TryLock("b/k", "three", 1600, 500).value_or(false));

  // A restarted server frees what its killed predecessor held, and only that.
  EXPECT_TRUE(locks.TryLock("b/x", "host/s1#a", 1600, 500).value_or(false));
  EXPECT_TRUE(locks.TryLock("b/y", "host/s1#b", 1600, 500).value_or(false));
  EXPECT_TRUE(locks.TryLock("b/z", "host/s10#c", 1600, 500).value_or(false));
  EXPECT_EQ(locks.ReleaseHeldBy("host/s1#").value_or(-1), 2);
  EXPECT_TRUE(locks.TryLock("b/x", "other", 1700, 500).value_or(false));
  EXPECT_FALSE(locks.TryLock("b/z", "other", 1700, 500).value_or(true));
}

TEST(MetastoreTypesTest, ClosedSetsRoundTripAndRefuseOthers) {
  for (Level l : {Level::kNone, Level::kRead, Level::kWrite}) EXPECT_EQ(ParseLevel(Name(l)), l);
  for (Role r : {Role::kAdmin, Role::kMember}) EXPECT_EQ(ParseRole(Name(r)), r);
  EXPECT_EQ(ParseRole("owner"), Role::kAdmin);  // the alias, never returned
  EXPECT_FALSE(ParseLevel("Write").has_value());
  EXPECT_FALSE(ParseRole("").has_value());
  EXPECT_FALSE(ParsePrincipalKind("operator").has_value());
  EXPECT_TRUE(AtLeast(Level::kWrite, Level::kRead));
  EXPECT_FALSE(AtLeast(Level::kRead, Level::kWrite));
}

}  // namespace
}  // namespace tablemere::metastore

namespace tablemere::metastore {
namespace {

// Servers racing to set a shared value: exactly one wins each version.
TEST_P(MetastoreTest, SharedValuesChangeByCompareAndSetOnly) {
  auto& v = store_->shared_values();
  EXPECT_FALSE(v.Find("k")->has_value());
  EXPECT_FALSE(v.CompareAndSet("k", "a", 1).value());  // nothing at version 1 yet
  auto second = GetParam() == Backend::kPostgres ? Open() : Result<std::unique_ptr<Metastore>>();
  SharedValueStore& other = second && *second ? (*second)->shared_values() : v;
  std::atomic<int> won{0};
  std::vector<std::thread> racers;
  for (int i = 0; i < 4; i++) {
    racers.emplace_back([&, i] {
      SharedValueStore& mine = i % 2 ? other : v;
      if (mine.CompareAndSet("k", "v" + std::to_string(i), 0).value()) won++;
    });
  }
  for (auto& t : racers) t.join();
  EXPECT_EQ(won.load(), 1);
  auto first = v.Find("k").value().value();
  EXPECT_EQ(first.version, 1);
  EXPECT_FALSE(v.CompareAndSet("k", "stale", 0).value());
  EXPECT_TRUE(other.CompareAndSet("k", "next", 1).value());
  EXPECT_FALSE(v.CompareAndSet("k", "lost", 1).value());
  auto now = v.Find("k").value().value();
  EXPECT_EQ(now.value, "next");
  EXPECT_EQ(now.version, 2);
}

}  // namespace
}  // namespace tablemere::metastore

namespace tablemere::metastore {
namespace {

// A write transaction whose connection dies before its COMMIT is answered: the server
// asks PostgreSQL what became of it on another connection and reports exactly that.
TEST(PostgresMetastoreTest, ACommitWhoseConnectionIsLostIsResolvedNotGuessed) {
  SystemClock clock;
  std::string db = Cluster().CreateDatabase().value();
  auto store = OpenPostgresMetastore(Cluster().Conninfo(db), {}, clock).value();
  auto admin = postgres::Connection::Open(Cluster().Conninfo(db), 30000).value();
  auto txn = store->BeginWrite().value();
  ASSERT_TRUE(txn->orgs().CreateOrg({OrgId("o_1"), "Acme", "acme", 1}).has_value());
  ASSERT_TRUE(admin
                  ->Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname "
                         "= current_database() AND state = 'idle in transaction'")
                  .has_value());
  auto committed = txn->Commit();
  ASSERT_FALSE(committed.has_value());
  EXPECT_EQ(committed.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(committed.error().Detail("outcome"), "not_committed");
  txn.reset();
  EXPECT_FALSE(store->orgs().FindOrg(OrgId("o_1")).has_value());
  // The pool dropped the dead connection; the store goes on.
  ASSERT_TRUE(store->orgs().CreateOrg({OrgId("o_2"), "Acme", "acme", 1}).has_value());
  EXPECT_TRUE(store->orgs().FindOrg(OrgId("o_2")).has_value());
}

}  // namespace
}  // namespace tablemere::metastore

namespace tablemere::metastore {
namespace {

// Servers starting together each try to start the chain of a recurring task: one does.
TEST_P(MetastoreTest, OneChainOfARecurringTaskHoweverManyServersStartIt) {
  auto second = GetParam() == Backend::kPostgres ? Open() : Result<std::unique_ptr<Metastore>>();
  TaskStore& mine = store_->tasks();
  TaskStore& theirs = second && *second ? (*second)->tasks() : mine;
  std::atomic<int> started{0};
  std::vector<std::thread> servers;
  for (int i = 0; i < 4; i++) {
    servers.emplace_back([&, i] {
      TaskStore& t = i % 2 ? theirs : mine;
      if (t.EnqueueFirstOfKind({"meter_storage", "{}", 0}).value()) started++;
    });
  }
  for (auto& s : servers) s.join();
  EXPECT_EQ(started.load(), 1);
  EXPECT_EQ(mine.ListOfKind("meter_storage")->size(), 1u);
}

}  // namespace
}  // namespace tablemere::metastore

namespace tablemere::metastore {
namespace {

// A recurring task's next run is queued with its completion, and not at all by a run
// whose lease was taken over: the chain stays one.
TEST_P(MetastoreTest, ARecurringTaskIsRequeuedOnlyByItsCurrentClaim) {
  auto& t = store_->tasks();
  ASSERT_TRUE(t.EnqueueFirstOfKind({"sweep", "{}", 0}).value());
  auto slow = t.Claim(0).value().value();       // its lease has already run out
  auto taken = t.Claim(60000).value().value();  // another run took it over
  EXPECT_EQ(t.CompleteAndEnqueue(slow, {"sweep", "{}", 1000}).error().code, ErrorCode::kConflict);
  EXPECT_EQ(t.ListOfKind("sweep")->size(), 1u);
  ASSERT_TRUE(t.CompleteAndEnqueue(taken, {"sweep", "{}", 1000}).has_value());
  auto queued = t.ListOfKind("sweep").value();
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_NE(queued[0].id, taken.id);
}

}  // namespace
}  // namespace tablemere::metastore

namespace tablemere::metastore {
namespace {

// Multi-table commits from two servers, naming the same two tables in opposite orders:
// none deadlocks, none fails but by the typed stale pointer, and no update is lost (each
// table ends at exactly as many versions as commits succeeded).
TEST_P(MetastoreTest, MultiTableCommitsInOppositeOrdersNeitherDeadlockNorLoseAnUpdate) {
  auto second = GetParam() == Backend::kPostgres ? Open() : Result<std::unique_ptr<Metastore>>();
  CatalogStore& mine = store_->catalog();
  CatalogStore& theirs = second && *second ? (*second)->catalog() : mine;
  ASSERT_TRUE(mine.SwapMetadata({Create("a", "table"), Create("b", "table")}).has_value());
  constexpr int kCommitsEach = 40;
  std::atomic<int> other_failures{0};
  std::atomic<int> conflicts{0};
  auto committer = [&](CatalogStore& c, bool a_first) {
    for (int done = 0; done < kCommitsEach;) {
      std::vector<MetadataSwap> swaps;
      for (const char* name : a_first ? std::vector{"a", "b"} : std::vector{"b", "a"}) {
        TableEntry next = c.GetEntry("w", {"ns"}, name).value();
        std::string expected = next.metadata_location;
        next.metadata_location = "m" + std::to_string(std::stoi(expected.substr(1)) + 1);
        swaps.push_back(MetadataSwap{"w", {"ns"}, name, expected, next});
      }
      auto r = c.SwapMetadata(swaps);
      if (r) {
        done++;
      } else if (IsStalePointer(r.error())) {
        conflicts++;
      } else {
        ADD_FAILURE() << r.error().message;
        other_failures++;
        return;
      }
    }
  };
  std::thread one(committer, std::ref(mine), true);
  std::thread two(committer, std::ref(theirs), false);
  one.join();
  two.join();
  EXPECT_EQ(other_failures.load(), 0);
  const std::string last = "m" + std::to_string(1 + 2 * kCommitsEach);
  EXPECT_EQ(mine.GetEntry("w", {"ns"}, "a")->metadata_location, last);
  EXPECT_EQ(mine.GetEntry("w", {"ns"}, "b")->metadata_location, last);
}

// Two creates of one name racing from two servers: one wins, the other is told the name
// is taken and by what kind of entry.
TEST_P(MetastoreTest, RacingCreatesOfOneNameLeaveOneWinner) {
  auto second = GetParam() == Backend::kPostgres ? Open() : Result<std::unique_ptr<Metastore>>();
  CatalogStore& mine = store_->catalog();
  CatalogStore& theirs = second && *second ? (*second)->catalog() : mine;
  for (int round = 0; round < 20; round++) {
    const std::string name = "t" + std::to_string(round);
    Result<void> results[2];
    std::thread one([&] { results[0] = mine.SwapMetadata({Create(name, "table")}); });
    std::thread two([&] { results[1] = theirs.SwapMetadata({Create(name, "view")}); });
    one.join();
    two.join();
    ASSERT_NE(results[0].has_value(), results[1].has_value()) << name;
    const Result<void>& lost = results[0] ? results[1] : results[0];
    EXPECT_EQ(lost.error().code, ErrorCode::kAlreadyExists);
    EXPECT_EQ(lost.error().Detail("existing_kind"), results[0] ? "table" : "view");
  }
}

// Workers on two servers claiming from one queue take every task exactly once.
TEST_P(MetastoreTest, ConcurrentClaimsTakeEachTaskOnce) {
  auto second = GetParam() == Backend::kPostgres ? Open() : Result<std::unique_ptr<Metastore>>();
  TaskStore& mine = store_->tasks();
  TaskStore& theirs = second && *second ? (*second)->tasks() : mine;
  constexpr int kTasks = 60;
  for (int i = 0; i < kTasks; i++) {
    ASSERT_TRUE(mine.Enqueue("purge_prefix", "{\"n\":" + std::to_string(i) + "}").has_value());
  }
  std::mutex mu;
  std::vector<int64_t> taken;
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; w++) {
    workers.emplace_back([&, w] {
      TaskStore& t = w % 2 ? theirs : mine;
      while (true) {
        auto claimed = t.Claim(60000);
        if (!claimed) {
          failures++;
          return;
        }
        if (!claimed->has_value()) return;
        if (!t.Complete(**claimed)) failures++;
        std::lock_guard lock(mu);
        taken.push_back((*claimed)->id);
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(failures.load(), 0);
  std::sort(taken.begin(), taken.end());
  EXPECT_EQ(std::adjacent_find(taken.begin(), taken.end()), taken.end());
  // A claim may come back empty while another holds the last rows; any left are claimed now.
  while (auto left = mine.Claim(60000).value()) {
    ASSERT_TRUE(mine.Complete(*left).has_value());
    taken.push_back(left->id);
  }
  EXPECT_EQ(taken.size(), static_cast<size_t>(kTasks));
  EXPECT_EQ(mine.QueueDepth().value(), 0);
}

}  // namespace
}  // namespace tablemere::metastore

namespace tablemere::metastore {
namespace {

// Commits noted on two servers at once start one visit, queue one task, and leave the
// latest commit as the visit's last; a visit ends only if no commit came after what its
// runner read.
TEST_P(MetastoreTest, CommitsNotedOnManyServersStartOneVisit) {
  auto second = GetParam() == Backend::kPostgres ? Open() : Result<std::unique_ptr<Metastore>>();
  MaintenanceStore& mine = store_->maintenance();
  MaintenanceStore& theirs = second && *second ? (*second)->maintenance() : mine;
  std::atomic<int> started{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> servers;
  for (int i = 0; i < 6; i++) {
    servers.emplace_back([&, i] {
      auto noted = (i % 2 ? theirs : mine).NoteCommit("t", 100 + i, {"maintain_table", "t", 0});
      if (!noted) {
        failures++;
      } else if (noted->started) {
        started++;
      }
    });
  }
  for (auto& s : servers) s.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(started.load(), 1);
  EXPECT_EQ(store_->tasks().ListOfKind("maintain_table")->size(), 1u);
  auto pending = mine.FindPendingVisit("t").value().value();
  EXPECT_EQ(pending.last_ms, 105);
  EXPECT_FALSE(mine.EndPendingVisit("t", 104).value());  // a commit came after 104
  EXPECT_TRUE(theirs.EndPendingVisit("t", 105).value());
  EXPECT_FALSE(mine.FindPendingVisit("t").value().has_value());
  auto next = mine.NoteCommit("t", 200, {"maintain_table", "t", 0}).value();
  EXPECT_TRUE(next.started);
  EXPECT_EQ(next.visit.first_ms, 200);
}

}  // namespace
}  // namespace tablemere::metastore

namespace tablemere::metastore {
namespace {

// A table route's one read: the warehouse with the entry's head, each as current as its
// own read would be, whichever server changed them.
TEST_P(MetastoreTest, TheWarehouseAndAnEntryHeadAreReadTogetherAndCurrent) {
  auto second = GetParam() == Backend::kPostgres ? Open() : Result<std::unique_ptr<Metastore>>();
  Metastore& theirs = second && *second ? **second : *store_;
  ASSERT_TRUE(store_->orgs().CreateOrg({OrgId("o_1"), "Acme", "acme", 1}).has_value());
  ASSERT_TRUE(
      store_->warehouses().CreateProject({ProjectId("pr_1"), OrgId("o_1"), "main", 1}).has_value());
  ASSERT_TRUE(
      store_->warehouses()
          .CreateWarehouse({WarehouseId("w"), ProjectId("pr_1"), OrgId("o_1"), "lake", 1, 1})
          .has_value());
  auto& c = store_->catalog();
  auto none = c.GetWarehouseAndHead(WarehouseId("w"), {"ns"}, "t").value();
  EXPECT_EQ(none.warehouse.name, "lake");
  EXPECT_FALSE(none.head.has_value());
  ASSERT_TRUE(theirs.catalog().SwapMetadata({Create("t", "table")}).has_value());
  ASSERT_TRUE(theirs.warehouses().RotateWarehouse(WarehouseId("w")).has_value());
  auto both = c.GetWarehouseAndHead(WarehouseId("w"), {"ns"}, "t").value();
  EXPECT_EQ(both.warehouse.credential_generation, 2);
  ASSERT_TRUE(both.head.has_value());
  EXPECT_EQ(both.head->metadata_location, "m1");
  EXPECT_EQ(both.head->namespace_levels, std::vector<std::string>{"ns"});
  EXPECT_TRUE(both.head->metadata_json.empty());  // a head: no document
  EXPECT_EQ(c.GetWarehouseAndHead(WarehouseId("nope"), {"ns"}, "t").error().code,
            ErrorCode::kNotFound);
}

}  // namespace
}  // namespace tablemere::metastore

namespace tablemere::metastore {
namespace {

// A drop whose follow-up refuses (the entry changed since the caller decided) changes
// nothing and queues nothing.
TEST_P(MetastoreTest, ADropItsFollowUpRefusesChangesNothing) {
  auto& c = store_->catalog();
  ASSERT_TRUE(c.SwapMetadata({Create("t", "generic")}).has_value());
  auto refuse = [](const TableEntry& e) -> Result<std::optional<NewTask>> {
    if (e.metadata_location != "m0") return Fail(ErrorCode::kConflict, "changed");
    return std::optional<NewTask>(NewTask{"purge_prefix", "{}", 0});
  };
  EXPECT_EQ(c.DropEntry("w", {"ns"}, "t", "generic", refuse).error().code, ErrorCode::kConflict);
  EXPECT_EQ(c.GetEntry("w", {"ns"}, "t")->metadata_location, "m1");
  EXPECT_EQ(store_->tasks().QueueDepth().value(), 0);
}

}  // namespace
}  // namespace tablemere::metastore

namespace tablemere::metastore {
namespace {

// A hold counts against the limit like any event until it is taken back by its id.
TEST_P(MetastoreTest, RateHoldsCountUntilReleased) {
  auto& v = store_->verification();
  ASSERT_TRUE(v.HoldRate("b", 2, 1000, 10, "h1").value().allowed);
  ASSERT_TRUE(v.HoldRate("b", 2, 1000, 11, "h2").value().allowed);
  EXPECT_FALSE(v.HoldRate("b", 2, 1000, 12, "h3").value().allowed);
  ASSERT_TRUE(v.ReleaseRate("b", "h1").has_value());
  EXPECT_EQ(v.PeekRate("b", 2, 1000, 13).value().count, 1);
  EXPECT_EQ(v.ReleaseRate("b", "").error().code, ErrorCode::kInvalidInput);
  ASSERT_TRUE(v.RecordRate("b", 14).has_value());
  EXPECT_EQ(v.PeekRate("b", 5, 1000, 15).value().count, 2);
}

}  // namespace
}  // namespace tablemere::metastore
