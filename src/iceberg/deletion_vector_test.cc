#include "iceberg/deletion_vector.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "common/crypto.h"

namespace tablemere::iceberg {
namespace {

// Positions 1, 3 and 5, laid out by hand from the specs (Iceberg's deletion-vector-v1
// framing, Roaring's portable format), the CRC-32 from Python's zlib.crc32:
//   00000026           length of magic + vector, big-endian
//   d1d33964           magic
//   0100000000000000   one 32-bit bitmap (little-endian)
//   00000000           its key: the high 32 bits
//   3a300000 01000000  cookie 12346 (no run containers), one container
//   0000 0200          container key 0, cardinality - 1 = 2
//   10000000           offset of its data: 16
//   0100 0300 0500     an array container
//   5a9e5d39           CRC-32 of magic + vector, big-endian
constexpr const char* kOneThreeFive =
    "00000026d1d339640100000000000000000000003a3000000100000000000200100000000100030005005a9e5d39";

std::string Bytes(const char* hex) { return *crypto::HexDecode(hex); }

TEST(DeletionVector, EncodesAsTheSpecLaysItOut) {
  auto blob = EncodeDeletionVector({5, 1, 3, 3});
  ASSERT_TRUE(blob) << blob.error().message;
  EXPECT_EQ(crypto::HexEncode(*blob), kOneThreeFive);
}

TEST(DeletionVector, DecodesTheSpecsLayout) {
  auto positions = DecodeDeletionVector(Bytes(kOneThreeFive), 6);
  ASSERT_TRUE(positions) << positions.error().message;
  EXPECT_EQ(*positions, (std::vector<int64_t>{1, 3, 5}));
}

TEST(DeletionVector, RoundTripsAcrossKeysAndContainerKinds) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> in;
  for (int64_t p = 0; p < 70000; p++) in.push_back(p);  // a run
  for (int i = 0; i < 5000; i++) in.push_back(100000 + static_cast<int64_t>(rng() % 65536));
  for (int i = 0; i < 40; i++) in.push_back((int64_t{3} << 32) + static_cast<int64_t>(rng() % 9));
  auto blob = EncodeDeletionVector(in);
  ASSERT_TRUE(blob);
  auto out = DecodeDeletionVector(*blob, int64_t{4} << 32);
  ASSERT_TRUE(out) << out.error().message;
  std::sort(in.begin(), in.end());
  in.erase(std::unique(in.begin(), in.end()), in.end());
  EXPECT_EQ(*out, in);
}

TEST(DeletionVector, RefusesWhatDoesNotCheckOut) {
  const std::string good = Bytes(kOneThreeFive);
  auto refused = [](const std::string& blob, int64_t limit, const std::string& says) {
    auto r = DecodeDeletionVector(blob, limit);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput);
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
  };
  std::string bad = good;
  bad[5] ^= 1;
  refused(bad, 6, "magic");
  bad = good;
  bad[bad.size() - 6] ^= 1;  // a position changed: the checksum no longer matches
  refused(bad, 6, "checksum");
  refused(good.substr(0, good.size() - 1), 6, "length");
  refused(good, 5, "past the file's 5 rows");
  // One run container over all 65536 values of each of 65536 keys would name 2^32
  // positions from a few bytes: refused by its count, never expanded.
  std::vector<int64_t> many;
  for (int64_t p = 0; p < 200000; p++) many.push_back(p);
  refused(*EncodeDeletionVector(many), 1000, "past the file's 1000 rows");
  EXPECT_FALSE(EncodeDeletionVector({-1}));
}

// Spark 3.5 with Iceberg 1.11 wrote these (fuzz/seeds): a DELETE of ids 3, 7 and 11, of
// 1000 to 4999 and of every third id from 70000 to 139999, from a table of ids 0 to
// 199999 in two data files. Iceberg Java counts 27336 rows deleted.
TEST(DeletionVector, DecodesWhatSparkWrote) {
  int64_t total = 0;
  for (const char* name : {"spark-deletion-vector-0.dv", "spark-deletion-vector-1.dv"}) {
    std::ifstream in(std::string(TM_FUZZ_SEEDS) + "/" + name, std::ios::binary);
    ASSERT_TRUE(in) << name;
    const std::string blob{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto positions = DecodeDeletionVector(blob, 200000);
    ASSERT_TRUE(positions) << name << ": " << positions.error().message;
    ASSERT_FALSE(positions->empty());
    EXPECT_TRUE(std::is_sorted(positions->begin(), positions->end()));
    total += static_cast<int64_t>(positions->size());
    // Ours encodes the same positions to a blob that decodes to them again.
    auto again = DecodeDeletionVector(*EncodeDeletionVector(*positions), 200000);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *positions);
  }
  EXPECT_EQ(total, 3 + 4000 + 23333);
}

TEST(Puffin, WritesBlobsAndAFooterThatNamesThem) {
  auto file = WriteDeletionVectorPuffin(
      {{"s3://b/t/data/a.parquet", {0, 9}}, {"s3://b/t/data/b.parquet", {4}}}, "tablemere test");
  ASSERT_TRUE(file) << file.error().message;
  const std::string& bytes = file->bytes;
  ASSERT_TRUE(bytes.starts_with("PFA1"));
  ASSERT_TRUE(bytes.ends_with("PFA1"));
  // Footer: magic, payload, payload size (4 bytes LE), flags (4 bytes), magic.
  const size_t size_at = bytes.size() - 12;
  const uint32_t payload_size = static_cast<unsigned char>(bytes[size_at]) |
                                static_cast<unsigned char>(bytes[size_at + 1]) << 8 |
                                static_cast<unsigned char>(bytes[size_at + 2]) << 16 |
                                static_cast<unsigned char>(bytes[size_at + 3]) << 24;
  const size_t payload_at = size_at - payload_size;
  EXPECT_EQ(bytes.substr(payload_at - 4, 4), "PFA1");
  const auto footer = nlohmann::json::parse(bytes.substr(payload_at, payload_size));
  ASSERT_EQ(footer["blobs"].size(), 2u);
  ASSERT_EQ(file->blobs.size(), 2u);
  const std::vector<std::vector<int64_t>> expected = {{0, 9}, {4}};
  for (size_t i = 0; i < 2; i++) {
    const auto& meta = footer["blobs"][i];
    EXPECT_EQ(meta["type"], "deletion-vector-v1");
    EXPECT_EQ(meta["fields"], nlohmann::json::array({2147483645}));
    EXPECT_EQ(meta["offset"], file->blobs[i].offset);
    EXPECT_EQ(meta["length"], file->blobs[i].length);
    EXPECT_EQ(meta["properties"]["cardinality"], std::to_string(expected[i].size()));
    auto blob = PuffinBlob(bytes, file->blobs[i].offset, file->blobs[i].length);
    ASSERT_TRUE(blob);
    auto positions = DecodeDeletionVector(*blob, 10);
    ASSERT_TRUE(positions) << positions.error().message;
    EXPECT_EQ(*positions, expected[i]);
  }
  EXPECT_EQ(footer["blobs"][1]["properties"]["referenced-data-file"], "s3://b/t/data/b.parquet");
  EXPECT_FALSE(PuffinBlob(bytes, 0, 4));
  EXPECT_FALSE(PuffinBlob(bytes, 4, static_cast<int64_t>(bytes.size())));
  EXPECT_FALSE(PuffinBlob("not puffin", 4, 1));
}

}  // namespace
}  // namespace tablemere::iceberg
