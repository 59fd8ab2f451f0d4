#include "storage/checksum.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/crypto.h"

namespace tablemere::storage {
namespace {

constexpr ChecksumAlgorithm kAllAlgorithms[] = {
    ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme,
    ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256};
constexpr ChecksumAlgorithm kCrcAlgorithms[] = {
    ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme};

std::string Raw(ChecksumAlgorithm a, std::string_view data) {
  Checksummer c(a);
  c.Update(data);
  return c.Finish();
}

std::string Hex(ChecksumAlgorithm a, std::string_view data) {
  return crypto::HexEncode(Raw(a, data));
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

TEST(ChecksumTest, NamesAndParsing) {
  EXPECT_EQ(ParseChecksumAlgorithm("crc32"), ChecksumAlgorithm::kCrc32);
  EXPECT_EQ(ParseChecksumAlgorithm("CRC32C"), ChecksumAlgorithm::kCrc32c);
  EXPECT_EQ(ParseChecksumAlgorithm("Crc64Nvme"), ChecksumAlgorithm::kCrc64Nvme);
  EXPECT_EQ(ParseChecksumAlgorithm("sha1"), ChecksumAlgorithm::kSha1);
  EXPECT_EQ(ParseChecksumAlgorithm("SHA256"), ChecksumAlgorithm::kSha256);
  EXPECT_FALSE(ParseChecksumAlgorithm("xxhash64").has_value());
  EXPECT_FALSE(ParseChecksumAlgorithm("").has_value());
  EXPECT_STREQ(ChecksumAlgorithmName(ChecksumAlgorithm::kCrc64Nvme), "CRC64NVME");
  EXPECT_EQ(ChecksumHeaderName(ChecksumAlgorithm::kCrc64Nvme), "x-amz-checksum-crc64nvme");
  EXPECT_EQ(ChecksumHeaderName(ChecksumAlgorithm::kCrc32c), "x-amz-checksum-crc32c");
  EXPECT_TRUE(IsCrc(ChecksumAlgorithm::kCrc32c));
  EXPECT_FALSE(IsCrc(ChecksumAlgorithm::kSha1));
}

TEST(ChecksumTest, Crc32Vectors) {
  // boto3 sends this for put_object(Body=b'hello world') (s3-interop.md §1.1).
  EXPECT_EQ(ChecksumBase64(ChecksumAlgorithm::kCrc32, "hello world"), "DUoRhQ==");
  EXPECT_EQ(Hex(ChecksumAlgorithm::kCrc32, "123456789"), "cbf43926");
  EXPECT_EQ(Hex(ChecksumAlgorithm::kCrc32, ""), "00000000");
}

TEST(ChecksumTest, Crc32cVectors) {
  // The standard CRC-32C check value; guards the ISA-L pre/post inversion.
  EXPECT_EQ(Hex(ChecksumAlgorithm::kCrc32c, "123456789"), "e3069283");
  EXPECT_EQ(Hex(ChecksumAlgorithm::kCrc32c, ""), "00000000");
  // From the AWS "trailing headers" chunked-upload example: 66560 bytes of 'a'.
  EXPECT_EQ(ChecksumBase64(ChecksumAlgorithm::kCrc32c, std::string(66560, 'a')), "sOO8/Q==");
}

TEST(ChecksumTest, Crc64NvmeVectors) {
  EXPECT_EQ(Hex(ChecksumAlgorithm::kCrc64Nvme, "123456789"), "ae8b14860a799888");
  EXPECT_EQ(Hex(ChecksumAlgorithm::kCrc64Nvme, ""), "0000000000000000");
  // s3-tests test_object_checksum_crc64nvme.
  EXPECT_EQ(ChecksumBase64(ChecksumAlgorithm::kCrc64Nvme, std::string(1024, 'A')), "Qeh8oXvGiSo=");
}

TEST(ChecksumTest, ShaVectors) {
  EXPECT_EQ(ChecksumBase64(ChecksumAlgorithm::kSha256, std::string(1024, 'A')),
            "arcu6553sHVAiX4MjW0j7I7vD4w6R+Gz9Ok0Q9lTa+0=");
  EXPECT_EQ(Hex(ChecksumAlgorithm::kSha1, "abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Raw(ChecksumAlgorithm::kSha1, "").size(), 20u);
}

TEST(ChecksumTest, DigestSizes) {
  EXPECT_EQ(Raw(ChecksumAlgorithm::kCrc32, "x").size(), 4u);
  EXPECT_EQ(Raw(ChecksumAlgorithm::kCrc32c, "x").size(), 4u);
  EXPECT_EQ(Raw(ChecksumAlgorithm::kCrc64Nvme, "x").size(), 8u);
  EXPECT_EQ(Raw(ChecksumAlgorithm::kSha256, "x").size(), 32u);
}

TEST(ChecksumTest, IncrementalMatchesOneShot) {
  std::string data = RandomBytes(100003, 7);
  std::mt19937 rng(11);
  for (ChecksumAlgorithm a : kAllAlgorithms) {
    Checksummer c(a);
    size_t pos = 0;
    while (pos < data.size()) {
      size_t n = std::min<size_t>(rng() % 37, data.size() - pos);  // includes 0-byte updates
      c.Update(data.data() + pos, n);
      pos += n;
    }
    EXPECT_EQ(c.Finish(), Raw(a, data)) << ChecksumAlgorithmName(a);
  }
}

TEST(ChecksumTest, MoveKeepsState) {
  for (ChecksumAlgorithm a : kAllAlgorithms) {
    Checksummer c(a);
    c.Update("hello ");
    Checksummer moved(std::move(c));
    moved.Update("world");
    EXPECT_EQ(moved.Finish(), Raw(a, "hello world")) << ChecksumAlgorithmName(a);
  }
}

TEST(ChecksumTest, FullObjectCrc32Of15MiB) {
  // s3-interop.md §1.7: three 5 MiB parts of 'A', 'B', 'C' → FULL_OBJECT CRC32 WgDhBQ==.
  const size_t part = 5 * 1024 * 1024;
  std::string a = Raw(ChecksumAlgorithm::kCrc32, std::string(part, 'A'));
  std::string b = Raw(ChecksumAlgorithm::kCrc32, std::string(part, 'B'));
  std::string c = Raw(ChecksumAlgorithm::kCrc32, std::string(part, 'C'));
  std::string ab = CombineCrc(ChecksumAlgorithm::kCrc32, a, b, part);
  std::string abc = CombineCrc(ChecksumAlgorithm::kCrc32, ab, c, part);
  EXPECT_EQ(crypto::Base64Encode(abc), "WgDhBQ==");
}

TEST(ChecksumTest, CompositeSha1Of15MiB) {
  // COMPOSITE = digest of the concatenated binary part digests, then "-N".
  const size_t part = 5 * 1024 * 1024;
  std::string parts = Raw(ChecksumAlgorithm::kSha1, std::string(part, 'A')) +
                      Raw(ChecksumAlgorithm::kSha1, std::string(part, 'B')) +
                      Raw(ChecksumAlgorithm::kSha1, std::string(part, 'C'));
  EXPECT_EQ(ChecksumBase64(ChecksumAlgorithm::kSha1, parts) + "-3",
            "sizjvY4eud3MrcHdZM3cQ/ol39o=-3");
}

TEST(ChecksumTest, CombineMatchesOneShotForAllCrcs) {
  std::string data = RandomBytes(300000, 3);
  const size_t splits[] = {0, 1, 7, 8, 9, 255, 4096, 65537, 299999, 300000};
  for (ChecksumAlgorithm alg : kCrcAlgorithms) {
    std::string whole = Raw(alg, data);
    for (size_t split : splits) {
      std::string_view a = std::string_view(data).substr(0, split);
      std::string_view b = std::string_view(data).substr(split);
      EXPECT_EQ(CombineCrc(alg, Raw(alg, a), Raw(alg, b), b.size()), whole)
          << ChecksumAlgorithmName(alg) << " split " << split;
    }
  }
}

TEST(ChecksumTest, CombineManyPartsAndLargeLengths) {
  const size_t part = 5 * 1024 * 1024;
  std::string a(part, 'A');
  std::string b(part + 3, 'B');
  std::string c(1, 'C');
  for (ChecksumAlgorithm alg : kCrcAlgorithms) {
    std::string combined = CombineCrc(alg, Raw(alg, a), Raw(alg, b), b.size());
    combined = CombineCrc(alg, combined, Raw(alg, c), c.size());
    EXPECT_EQ(combined, Raw(alg, a + b + c)) << ChecksumAlgorithmName(alg);
  }
}

}  // namespace
}  // namespace tablemere::storage
