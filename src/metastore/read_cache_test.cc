// The memo's rules, one class in isolation: what it serves, when it stores, and never a
// value read while a commit could become visible.
#include "metastore/read_cache.h"

#include <gtest/gtest.h>

#include "common/result.h"

namespace tablemere::metastore {
namespace {

Result<int> Value(int v) { return v; }

TEST(ReadCacheTest, ServesAValueUntilTheNextCommit) {
  WriteGeneration generation;
  ReadCache<int> memo(generation);
  EXPECT_EQ(*memo.Get("k", [] { return Value(1); }), 1);
  EXPECT_EQ(*memo.Get("k", [] { return Value(2); }), 1);  // memoised
  generation.BeginCommit();
  generation.EndCommit();
  EXPECT_EQ(*memo.Get("k", [] { return Value(3); }), 3);  // the commit retired it
  EXPECT_EQ(*memo.Get("k", [] { return Value(4); }), 3);
}

TEST(ReadCacheTest, ReadsDuringACommitGoToTheDatabaseAndAreNotKept) {
  WriteGeneration generation;
  ReadCache<int> memo(generation);
  EXPECT_EQ(*memo.Get("k", [] { return Value(1); }), 1);
  generation.BeginCommit();
  EXPECT_EQ(*memo.Get("k", [] { return Value(2); }), 2);  // not the memo's 1
  generation.EndCommit();
  EXPECT_EQ(*memo.Get("k", [] { return Value(3); }), 3);  // 2 was not kept either
}

TEST(ReadCacheTest, AValueReadAcrossACommitIsNotKept) {
  WriteGeneration generation;
  ReadCache<int> memo(generation);
  EXPECT_EQ(*memo.Get("k",
                      [&] {
                        generation.BeginCommit();  // a commit lands while the value is being read
                        generation.EndCommit();
                        return Value(1);
                      }),
            1);
  EXPECT_EQ(*memo.Get("k", [] { return Value(2); }), 2);
}

TEST(ReadCacheTest, FailuresAreNotKept) {
  WriteGeneration generation;
  ReadCache<int> memo(generation);
  auto missing = memo.Get("k", []() -> Result<int> { return Fail(ErrorCode::kNotFound, "no"); });
  EXPECT_FALSE(missing.has_value());
  EXPECT_EQ(*memo.Get("k", [] { return Value(5); }), 5);
}

// Over a database other servers write too, the generation sees none of their commits:
// such a memo keeps nothing and every read goes to the database.
TEST(ReadCacheTest, AMemoThatIsNotExactReadsEveryTime) {
  WriteGeneration generation;
  ReadCache<int> memo(generation, /*exact=*/false);
  EXPECT_EQ(*memo.Get("k", [] { return Value(1); }), 1);
  EXPECT_EQ(*memo.Get("k", [] { return Value(2); }), 2);
}

TEST(ReadCacheTest, KeysOfDifferentPartsNeverCollide) {
  EXPECT_NE(MemoKey({"w",
                     "a\x1e"
                     "b",
                     "c"}),
            MemoKey({"w", "a",
                     "b\x1e"
                     "c"}));
  EXPECT_NE(MemoKey({"w", "ab", "c"}), MemoKey({"w", "a", "bc"}));
  EXPECT_EQ(MemoKey({"w", "a", "b"}), MemoKey({"w", "a", "b"}));
}

}  // namespace
}  // namespace tablemere::metastore
