// Planning maintenance work without running it: which position delete files are merged and
// what that charges to the byte budget, the rebase's worker deadline, and the refusal of
// client snapshots marked as maintenance's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "maintenance/commit_rebase.h"
#include "maintenance/maintenance_worker.h"
#include "maintenance/position_delete_merge.h"

namespace tablemere::maintenance {
namespace {

using compaction::DeleteFile;
using compaction::DeleteMergePolicy;
using compaction::Inputs;
using compaction::LiveFile;
using compaction::PlanDeleteMerges;
using iceberg::Literal;
using iceberg::PartitionKey;
using iceberg::PartitionTuple;

LiveFile Data(const std::string& path, const PartitionTuple& partition) {
  LiveFile f;
  f.path = path;
  f.size = 1000;
  f.records = 10;
  f.spec = 1;
  f.partition = partition;
  f.key = PartitionKey(1, partition);
  f.sequence = 1;
  return f;
}

DeleteFile Deletes(const std::string& target, const PartitionTuple& partition, int64_t size) {
  DeleteFile d;
  d.path = "s3://b/t/data/del-" + target + "-" + std::to_string(size) + ".parquet";
  d.size = size;
  d.records = 1;
  d.spec = 1;
  d.partition = partition;
  d.key = PartitionKey(1, partition);
  d.sequence = 2;
  d.content = 1;
  d.target = target;
  return d;
}

const PartitionTuple kA = {Literal::Bytes({iceberg::TypeId::kString}, "a")};
const DeleteMergePolicy kPolicy{.target = 1'000'000, .min_files = 3, .quiet_ms = 0, .now_ms = 0};

TEST(DeleteMergePlanTest, APartitionWithEnoughDeleteFilesIsMergedAndCharged) {
  Inputs in = Inputs::Of({Data("f1", kA)},
                         {Deletes("f1", kA, 100), Deletes("f1", kA, 200), Deletes("f1", kA, 300)});
  int64_t allowance = 10'000;
  auto merges = PlanDeleteMerges(in, {}, kPolicy, allowance);
  ASSERT_EQ(merges.size(), 1u);
  EXPECT_EQ(merges[0].inputs.size(), 3u);
  EXPECT_EQ(merges[0].bytes, 600);
  EXPECT_EQ(allowance, 10'000 - 600);
}

// Plans nothing, and charges nothing, for deletes of `sizes` bytes each.
void ExpectNoPlan(const std::vector<int64_t>& sizes, const DeleteMergePolicy& policy,
                  int64_t allowance) {
  std::vector<DeleteFile> deletes;
  for (int64_t size : sizes) deletes.push_back(Deletes("f1", kA, size));
  Inputs in = Inputs::Of({Data("f1", kA)}, std::move(deletes));
  const int64_t before = allowance;
  EXPECT_TRUE(PlanDeleteMerges(in, {}, policy, allowance).empty());
  EXPECT_EQ(allowance, before);
}

TEST(DeleteMergePlanTest, TooFewDeleteFilesAreLeftAlone) {
  ExpectNoPlan({100, 200}, kPolicy, 10'000);
}

TEST(DeleteMergePlanTest, AGroupCutToOneFileByTheTargetIsNeitherPlannedNorCharged) {
  DeleteMergePolicy policy = kPolicy;
  policy.target = 1000;  // 700 + 800 is over it: only the first would be taken
  ExpectNoPlan({700, 800, 900}, policy, 10'000);
}

TEST(DeleteMergePlanTest, AGroupCutToOneFileByTheBudgetIsNeitherPlannedNorCharged) {
  ExpectNoPlan({100, 200, 300}, kPolicy, 250);  // room for the first only
}

TEST(DeleteMergePlanTest, OneFileIsRewrittenAloneOnlyWhenPartOfItsDataIsRewritten) {
  // d1 applies to f1 (being rewritten) and, having no single target, to f2 (kept).
  DeleteFile partly = Deletes("", kA, 100);
  DeleteFile other = Deletes("f2", kA, 200);
  Inputs in = Inputs::Of({Data("f1", kA), Data("f2", kA)}, {partly, other});
  DeleteMergePolicy policy = kPolicy;
  policy.target = 150;  // each file alone
  int64_t allowance = 10'000;
  auto merges = PlanDeleteMerges(in, {"f1"}, policy, allowance);
  ASSERT_EQ(merges.size(), 1u);
  ASSERT_EQ(merges[0].inputs.size(), 1u);
  EXPECT_EQ(merges[0].inputs[0]->path, partly.path);  // the partly rewritten one, first
  EXPECT_EQ(allowance, 10'000 - 100);
}

TEST(DeleteMergePlanTest, EachSpecAndPartitionIsItsOwnGroupAndNaNIsOnePartition) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const PartitionTuple n1 = {Literal::Floating(iceberg::TypeId::kDouble, nan)},
                       n2 = {Literal::Floating(iceberg::TypeId::kDouble, -nan)},
                       null = {std::nullopt};
  std::vector<DeleteFile> deletes;
  for (int i = 0; i < 3; i++) deletes.push_back(Deletes("fn", n1, 100 + i));
  for (int i = 0; i < 2; i++) deletes.push_back(Deletes("fz", null, 100 + i));
  deletes.push_back(Deletes("fn", n2, 50));  // another NaN: the same partition, a fourth
  Inputs in = Inputs::Of({Data("fn", n1), Data("fz", null)}, std::move(deletes));
  int64_t allowance = 10'000;
  auto merges = PlanDeleteMerges(in, {}, kPolicy, allowance);
  ASSERT_EQ(merges.size(), 1u);  // the null partition has two only
  EXPECT_EQ(merges[0].inputs.size(), 4u);
  for (const DeleteFile* d : merges[0].inputs) EXPECT_EQ(d->key, PartitionKey(1, n1));
}

TEST(DeleteMatchingTest, DeletesOfAFileOfAnotherSpecAreMisfiledAndApplyToNothing) {
  // DuckDB's deletes of a file written before a spec change: the new spec, a null partition.
  LiveFile old_spec = Data("f0", PartitionTuple{});
  old_spec.spec = 0;
  old_spec.key = PartitionKey(0, PartitionTuple{});
  const PartitionTuple null = {std::nullopt};
  Inputs in =
      Inputs::Of({old_spec, Data("f1", null)},
                 {Deletes("f0", null, 100), Deletes("f1", null, 100), Deletes("gone", null, 100)});
  EXPECT_TRUE(in.Misfiled(in.deletes[0]));
  EXPECT_TRUE(in.FilesOf(in.deletes[0]).empty());
  EXPECT_TRUE(in.DeletesOf(in.live[0]).empty());
  EXPECT_TRUE(in.NamedByMisfiled(in.live[0]));
  EXPECT_FALSE(in.Misfiled(in.deletes[1]));  // of its own partition's file
  EXPECT_EQ(in.FilesOf(in.deletes[1]).size(), 1u);
  EXPECT_FALSE(in.NamedByMisfiled(in.live[1]));
  EXPECT_FALSE(in.Misfiled(in.deletes[2]));  // its file is gone: dangling, not misfiled
}

TEST(DeleteMatchingTest, DeletesWhoseBoundsReachAFileOfAnotherPartitionAreMisfiled) {
  LiveFile old_spec = Data("f0", PartitionTuple{});
  old_spec.spec = 0;
  old_spec.key = PartitionKey(0, PartitionTuple{});
  const PartitionTuple null = {std::nullopt};
  DeleteFile wide = Deletes("", null, 100), narrow = Deletes("", null, 101);
  wide.paths = PathRange{"f0", "f1"};  // may name f0, of the old spec
  narrow.paths = PathRange{"f1", "f2"};
  Inputs in = Inputs::Of({old_spec, Data("f1", null), Data("f9", kA)}, {wide, narrow});
  EXPECT_TRUE(in.Misfiled(in.deletes[0]));
  EXPECT_FALSE(in.Misfiled(in.deletes[1]));
  EXPECT_TRUE(in.NamedByMisfiled(in.live[0]));
  EXPECT_FALSE(in.NamedByMisfiled(in.live[1]));  // its own partition's: it applies there
  EXPECT_FALSE(in.NamedByMisfiled(in.live[2]));
}

TEST(DeleteMatchingTest, OnlyEqualityDeletesOfAnUnpartitionedSpecApplyEverywhere) {
  DeleteFile eq = Deletes("", PartitionTuple{}, 10);
  eq.content = 2;
  eq.spec = 0;
  eq.key = PartitionKey(0, PartitionTuple{});
  DeleteFile pos = eq;
  pos.content = 1;
  Inputs in = Inputs::Of({Data("f1", kA)}, {eq, pos});
  EXPECT_EQ(in.DeletesOf(in.live[0]).size(), 1u);
  EXPECT_EQ(in.DeletesOf(in.live[0])[0]->content, 2);
}

TEST(DeleteMergePlanTest, MisfiledDeletesAreNotMerged) {
  LiveFile old_spec = Data("f0", PartitionTuple{});
  old_spec.spec = 0;
  old_spec.key = PartitionKey(0, PartitionTuple{});
  const PartitionTuple null = {std::nullopt};
  Inputs in = Inputs::Of({old_spec, Data("f1", null), Data("f2", null)},
                         {Deletes("f0", null, 100), Deletes("f0", null, 101),
                          Deletes("f1", null, 102), Deletes("f2", null, 103)});
  DeleteMergePolicy policy = kPolicy;
  policy.min_files = 2;
  int64_t allowance = 10'000;
  auto merges = PlanDeleteMerges(in, {}, policy, allowance);
  ASSERT_EQ(merges.size(), 1u);
  ASSERT_EQ(merges[0].inputs.size(), 2u);
  for (const DeleteFile* d : merges[0].inputs) EXPECT_NE(d->target, "f0");
  EXPECT_EQ(allowance, 10'000 - 205);
}

TEST(WorkerDeadlineTest, RunsShareTheDeadline) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0{};
  WorkerOptions worker{"w", "/tmp", 60'000};
  EXPECT_EQ(worker.TimeoutAt(t0), 60'000);  // no deadline: a run's own
  worker.deadline = t0 + std::chrono::milliseconds(90'000);
  EXPECT_EQ(worker.TimeoutAt(t0), 60'000);
  EXPECT_EQ(worker.TimeoutAt(t0 + std::chrono::milliseconds(50'000)), 40'000);
  EXPECT_EQ(worker.TimeoutAt(t0 + std::chrono::milliseconds(90'000)), 0);
  EXPECT_EQ(worker.TimeoutAt(t0 + std::chrono::milliseconds(95'000)), 0);
}

TEST(WorkerDeadlineTest, ARunPastTheDeadlineIsNotStarted) {
  SystemRandom random;
  auto run = WorkerRun::Start(::testing::TempDir(), random, "deadline");
  ASSERT_TRUE(run.has_value());
  WorkerOptions worker{"/bin/true", ::testing::TempDir(), 60'000};
  worker.deadline = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
  auto answer = run->Run(worker, "translate-deletes", Json::object());
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, ErrorCode::kUnavailable);
}

TEST(MaintenanceMarkTest, ClientSnapshotsMayNotCarryTheMark) {
  const Json marked = Json::parse(
      R"([{"action":"add-snapshot","snapshot":{"snapshot-id":1,
          "summary":{"operation":"replace","tablemere.maintenance":"compact"}}}])");
  auto refused = RefuseMaintenanceMarks(marked);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidInput);
  EXPECT_NE(refused.error().message.find("tablemere.maintenance"), std::string::npos);
  const Json plain = Json::parse(
      R"([{"action":"add-snapshot","snapshot":{"snapshot-id":1,"summary":{"operation":"append"}}},
          {"action":"set-properties","updates":{"tablemere.maintenance.compact":"false"}},
          {"action":"add-snapshot","snapshot":"not an object"}])");
  EXPECT_TRUE(RefuseMaintenanceMarks(plain).has_value());
}

}  // namespace
}  // namespace tablemere::maintenance
