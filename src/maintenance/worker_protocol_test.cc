#include "maintenance/worker_protocol.h"

#include <gtest/gtest.h>

namespace tablemere::maintenance::protocol {
namespace {

using Json = nlohmann::json;

template <typename T>
T RoundTrip(const T& message) {
  // Through text, as the files between the processes carry it.
  auto decoded = Decode<T>(Json::parse(Encode(message).dump()));
  EXPECT_TRUE(decoded) << decoded.error().message;
  return decoded ? *decoded : T{};
}

FileMetrics Metrics() {
  FileMetrics m;
  m.record_count = 3;
  m.file_size_in_bytes = 1234;
  m.column_sizes = {{1, 40}, {2147483540, 24}};
  m.value_counts = {{1, 3}};
  m.null_value_counts = {{1, 0}};
  m.lower_bounds = {{1, std::string("\x01\x00\xff", 3)}};  // raw bytes, not UTF-8
  m.upper_bounds = {{1, std::string("\x09\x00\x80", 3)}};
  m.split_offsets = {4};
  return m;
}

TEST(WorkerProtocol, EveryMessageRoundTrips) {
  CompactPlan plan;
  plan.inputs = {{"/s/in-0.parquet", "s3://b/t/data/a.parquet", {0}, {}, {2, 5}, 100, 7},
                 {"/s/in-1.parquet", "s3://b/t/data/b.parquet", {}, {0}, {}, std::nullopt, 8}};
  plan.position_deletes = {"/s/del-0.parquet"};
  plan.equality_deletes = {{"/s/del-1.parquet", {1, 3}}};
  plan.schema = {{1, "id"}, {2, "name"}};
  plan.output = "/s/out.parquet";
  plan.max_threads = 2;
  plan.row_lineage = true;
  EXPECT_EQ(RoundTrip(plan), plan);

  CompactAnswer answer{Metrics(), 10, 2, 1, {{"s3://b/t/data/a.parquet", 0, 10, {2, 5}}}};
  EXPECT_EQ(RoundTrip(answer), answer);

  RewriteDeletesPlan merge{{{"/s/d0.parquet", 4}}, {{"s3://b/t/data/a.parquet", 3}}, "/s/o"};
  EXPECT_EQ(RoundTrip(merge), merge);
  RewriteDeletesAnswer merged{{Metrics(), 1, "s3://b/t/data/a.parquet"}, 9, 1};
  EXPECT_EQ(RoundTrip(merged), merged);

  TranslateDeletesPlan translate;
  translate.removed_files = {"s3://b/t/data/a.parquet"};
  translate.moves["s3://b/t/data/a.parquet"] = {"s3://b/t/data/c.parquet", 5, 10, {1}};
  translate.output = "/s/o";
  EXPECT_EQ(RoundTrip(translate), translate);
  TranslateDeletesAnswer translated{{Metrics(), 2, std::nullopt}, 4, 3, 1};
  EXPECT_EQ(RoundTrip(translated), translated);
}

TEST(WorkerProtocol, AMovedRowLandsPastTheDroppedRowsBeforeIt) {
  // Rows 0..5 of a file, 1 and 4 deleted by the compaction, the rest from row 10 on.
  const RowMove move{"s3://b/t/data/c.parquet", 10, 6, {1, 4}};
  EXPECT_EQ(move.Moved(0), 10);
  EXPECT_EQ(move.Moved(1), std::nullopt);
  EXPECT_EQ(move.Moved(2), 11);
  EXPECT_EQ(move.Moved(3), 12);
  EXPECT_EQ(move.Moved(4), std::nullopt);
  EXPECT_EQ(move.Moved(5), 13);
}

TEST(WorkerProtocol, BoundsTravelAsHexAndCountsByFieldId) {
  const Json j = Encode(Metrics());
  EXPECT_EQ(j["lower_bounds"]["1"], "0100ff");
  EXPECT_EQ(j["column_sizes"]["2147483540"], 24);
}

TEST(WorkerProtocol, MalformedMessagesAreTypedErrorsNamingTheField) {
  auto refused = [](const Json& j, const std::string& says) {
    auto r = Decode<CompactAnswer>(j);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput);
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
  };
  Json good = Encode(CompactAnswer{Metrics(), 3, 0, 0, {}});
  ASSERT_TRUE(Decode<CompactAnswer>(good));
  Json j = good;
  j.erase("rows_read");
  refused(j, "no rows_read");
  j = good;
  j["record_count"] = "three";
  refused(j, "record_count");
  j = good;
  j["lower_bounds"]["1"] = "not hex";
  refused(j, "lower_bounds[1] is not hex");
  j = good;
  j["value_counts"] = {{"id", 3}};
  refused(j, "no field id");
  refused(Json::array(), "object");
  // A translation plan names an input or removed files, never both or neither.
  TranslateDeletesPlan both;
  both.input = "/s/d.parquet";
  both.removed_files = {"s3://b/t/data/a.parquet"};
  both.output = "/s/o";
  EXPECT_FALSE(Decode<TranslateDeletesPlan>(Encode(both)));
  auto moves = Decode<RowMoves>(Json{{"s3://b/a", {{"to", "s3://b/c"}, {"offset", 0}}}});
  ASSERT_FALSE(moves);
  EXPECT_NE(moves.error().message.find("no rows"), std::string::npos) << moves.error().message;
}

}  // namespace
}  // namespace tablemere::maintenance::protocol
