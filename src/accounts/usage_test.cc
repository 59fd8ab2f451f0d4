#include <gtest/gtest.h>

#include "accounts/usage_service.h"

namespace tablemere::accounts {
namespace {

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 24 * kHour;
// 2026-12-03T00:00:00Z
constexpr int64_t kDay0 = 1'796'256'000'000;

metastore::UsageSample At(int64_t ms, int64_t bytes, int64_t requests, int64_t in,
                          const std::string& epoch = "e1") {
  metastore::UsageSample s;
  s.warehouse_id = WarehouseId("w");
  s.at_ms = ms;
  s.table_bytes = bytes;
  s.requests = requests;
  s.requests_failed = 0;
  s.bytes_in = in;
  s.bytes_out = 0;
  s.counter_epoch = epoch;
  return s;
}

TEST(UsageHistory, CountsGrowthBetweenSamplesPerDayAndAcrossRestarts) {
  std::vector<metastore::UsageSample> samples = {
      At(kDay0 + kHour, 100, 10, 1000),
      At(kDay0 + 2 * kHour, 150, 25, 1500),
      // Next day: the process restarted (new epoch), its counters began again at zero.
      At(kDay0 + kDay + kHour, 170, 4, 40, "e2"),
      At(kDay0 + kDay + 2 * kHour, 160, 9, 90, "e2"),
  };
  WarehouseHistory h = SummarizeHistory(samples, 7);
  ASSERT_EQ(h.rows.size(), 2u);
  EXPECT_EQ(h.rows[0].day, "2026-12-03");
  EXPECT_EQ(h.rows[0].samples, 2);
  EXPECT_EQ(h.rows[0].last.table_bytes, 150);
  EXPECT_EQ(h.rows[0].traffic.requests, 15);
  EXPECT_EQ(h.rows[0].traffic.bytes_in, 500);
  EXPECT_EQ(h.rows[1].traffic.requests, 4 + 5);  // the restart's 4, then 5 more
  EXPECT_EQ(h.traffic.requests, 24);
  EXPECT_EQ(h.intervals, 3);
  EXPECT_EQ(h.resets, 1);
  EXPECT_EQ(h.first->table_bytes, 100);
  EXPECT_EQ(h.last->table_bytes, 160);
}

TEST(UsageHistory, NoTrafficUntilTwoSamplesCarryCounters) {
  auto a = At(kDay0, 1, 5, 5);
  auto b = At(kDay0 + kHour, 1, 9, 9);
  b.requests = -1;  // a reported sample without counters
  EXPECT_EQ(SummarizeHistory({a}, 7).intervals, 0);
  EXPECT_EQ(SummarizeHistory({a, b}, 7).intervals, 0);
  EXPECT_EQ(SummarizeHistory({}, 7).rows.size(), 0u);
}

}  // namespace
}  // namespace tablemere::accounts
