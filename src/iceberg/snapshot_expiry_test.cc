#include "iceberg/snapshot_expiry.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tablemere::iceberg {
namespace {

constexpr int64_t kDay = 24LL * 3600 * 1000;
constexpr int64_t kNow = 1000 * kDay;

// A linear history of `n` snapshots (ids 1..n), one a day up to now, main at the last.
nlohmann::json History(int n) {
  nlohmann::json snaps = nlohmann::json::array();
  for (int i = 1; i <= n; i++) {
    nlohmann::json s = {{"snapshot-id", i}, {"timestamp-ms", kNow - (n - i) * kDay}};
    if (i > 1) s["parent-snapshot-id"] = i - 1;
    snaps.push_back(s);
  }
  return {{"snapshots", snaps},
          {"current-snapshot-id", n},
          {"refs", {{"main", {{"snapshot-id", n}, {"type", "branch"}}}}},
          {"properties", nlohmann::json::object()}};
}

TEST(SnapshotExpiry, KeepsTheLastWeekAtMostTwenty) {
  auto plan = PlanSnapshotExpiry(History(30), {}, kNow);
  // Seven days back from now: snapshots 23..30 are at most 7 days old.
  EXPECT_EQ(plan.retained, (std::set<int64_t>{23, 24, 25, 26, 27, 28, 29, 30}));
  EXPECT_EQ(plan.expired.size(), 22u);
  EXPECT_TRUE(plan.expired.count(1) && plan.expired.count(22));
}

TEST(SnapshotExpiry, CountLimitWhenAllAreRecent) {
  auto m = History(30);
  for (auto& s : m["snapshots"]) s["timestamp-ms"] = kNow - 1000 + s["snapshot-id"].get<int64_t>();
  auto plan = PlanSnapshotExpiry(m, {}, kNow);
  EXPECT_EQ(plan.retained.size(), 20u);
  EXPECT_TRUE(plan.retained.count(30) && plan.retained.count(11) && !plan.retained.count(10));
}

TEST(SnapshotExpiry, HeadsAreAlwaysKept) {
  auto m = History(30);
  m["refs"]["audit"] = {{"snapshot-id", 2}, {"type", "tag"}};
  m["refs"]["old-branch"] = {{"snapshot-id", 5}, {"type", "branch"}, {"min-snapshots-to-keep", 2}};
  auto plan = PlanSnapshotExpiry(m, {.max_snapshots = 1, .max_age_ms = 0}, kNow);
  EXPECT_EQ(plan.retained, (std::set<int64_t>{2, 4, 5, 30}));
  // A tag past its max-ref-age keeps nothing.
  m["refs"]["audit"]["max-ref-age-ms"] = kDay;
  EXPECT_FALSE(
      PlanSnapshotExpiry(m, {.max_snapshots = 1, .max_age_ms = 0}, kNow).retained.count(2));
}

TEST(SnapshotExpiry, TablePropertiesOverride) {
  auto m = History(30);
  m["properties"]["history.expire.max-snapshot-age-ms"] = std::to_string(100 * kDay);
  m["properties"]["tablemere.maintenance.max-snapshots"] = "25";
  EXPECT_EQ(PlanSnapshotExpiry(m, {}, kNow).retained.size(), 25u);
  m["properties"]["history.expire.min-snapshots-to-keep"] = "28";
  EXPECT_EQ(PlanSnapshotExpiry(m, {}, kNow).retained.size(), 28u);
  m["properties"]["history.expire.max-snapshot-age-ms"] = "not a number";
  m["properties"].erase("history.expire.min-snapshots-to-keep");
  EXPECT_EQ(PlanSnapshotExpiry(m, {}, kNow).retained.size(), 8u);
}

TEST(SnapshotExpiry, EmptyTableExpiresNothing) {
  nlohmann::json m = {{"snapshots", nlohmann::json::array()}, {"current-snapshot-id", -1}};
  auto plan = PlanSnapshotExpiry(m, {}, kNow);
  EXPECT_TRUE(plan.retained.empty() && plan.expired.empty());
}

}  // namespace
}  // namespace tablemere::iceberg
