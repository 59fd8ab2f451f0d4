#include "metastore/coalesced_reads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <string>
#include <thread>

namespace tablemere::metastore {
namespace {

TEST(CoalescedReads, ReadsOneAfterAnotherEachRunTheirOwnQuery) {
  CoalescedReads<int> reads;
  int calls = 0;
  for (int i = 0; i < 3; i++) {
    auto v = reads.Get("k", [&]() -> Result<int> { return ++calls; });
    ASSERT_TRUE(v);
    EXPECT_EQ(*v, i + 1);
  }
  EXPECT_EQ(calls, 3);
}

// The property that makes sharing safe: a read that arrives while a query is in flight
// never gets that query's answer (it may predate a write acknowledged before the read
// arrived); it gets the next round's, which it shares with every read queued beside it.
TEST(CoalescedReads, AReadArrivingDuringAQueryWaitsForTheNextRoundAndSharesIt) {
  CoalescedReads<std::string> reads;
  std::atomic<int> calls = 0;
  std::atomic<int> committed = 1;  // the database's state as a query would see it
  std::promise<void> entered;
  std::promise<void> release;
  auto released = release.get_future().share();
  auto load = [&]() -> Result<std::string> {
    const std::string seen = "v" + std::to_string(committed.load());
    if (++calls == 1) {
      entered.set_value();
      released.wait();
    }
    return seen;
  };
  auto first = std::async(std::launch::async, [&] { return reads.Get("t", load); });
  entered.get_future().wait();
  committed = 2;  // a write acknowledged while the first query runs
  auto second = std::async(std::launch::async, [&] { return reads.Get("t", load); });
  auto third = std::async(std::launch::async, [&] { return reads.Get("t", load); });
  while (reads.Queued("t") < 2) std::this_thread::yield();
  release.set_value();
  EXPECT_EQ(*first.get(), "v1");
  EXPECT_EQ(*second.get(), "v2");
  EXPECT_EQ(*third.get(), "v2");
  EXPECT_EQ(calls.load(), 2);  // the two late reads shared one query
  EXPECT_EQ(reads.Queued("t"), 0);
}

TEST(CoalescedReads, FailuresReachEveryReaderOfTheRoundAndAreNotKept) {
  CoalescedReads<int> reads;
  auto failed = reads.Get(
      "k", []() -> Result<int> { return Fail(ErrorCode::kUnavailable, "database gone"); });
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  auto next = reads.Get("k", []() -> Result<int> { return 7; });
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, 7);
}

TEST(CoalescedReads, DifferentKeysDoNotWaitForEachOther) {
  CoalescedReads<int> reads;
  std::promise<void> entered;
  std::promise<void> release;
  auto released = release.get_future().share();
  auto slow = std::async(std::launch::async, [&] {
    return reads.Get("a", [&]() -> Result<int> {
      entered.set_value();
      released.wait();
      return 1;
    });
  });
  entered.get_future().wait();
  auto other = reads.Get("b", []() -> Result<int> { return 2; });  // not blocked by "a"
  ASSERT_TRUE(other);
  EXPECT_EQ(*other, 2);
  release.set_value();
  EXPECT_EQ(*slow.get(), 1);
}

}  // namespace
}  // namespace tablemere::metastore
