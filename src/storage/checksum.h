// S3 flexible checksums: CRC32, CRC32C, CRC64NVME, SHA1, SHA256 — incremental,
// plus the CRC combine needed for FULL_OBJECT multipart checksums.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tablemere::storage {

enum class ChecksumAlgorithm { kCrc32, kCrc32c, kCrc64Nvme, kSha1, kSha256 };

// "CRC32" / "crc32" / "CRC64NVME" … → algorithm; nullopt for anything else.
std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name);
// Upper-case wire name: "CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256".
const char* ChecksumAlgorithmName(ChecksumAlgorithm algorithm);
// Header name: "x-amz-checksum-crc32", …, "x-amz-checksum-crc64nvme".
std::string ChecksumHeaderName(ChecksumAlgorithm algorithm);
// Whether the algorithm is a CRC (combinable, FULL_OBJECT capable).
bool IsCrc(ChecksumAlgorithm algorithm);

// Incremental checksum. Value() returns the raw big-endian digest bytes
// (4 bytes for CRC32/CRC32C, 8 for CRC64NVME, 20/32 for SHA1/SHA256);
// the wire form is Base64 of those bytes.
class Checksummer {
 public:
  explicit Checksummer(ChecksumAlgorithm algorithm);
  ~Checksummer();
  Checksummer(Checksummer&&) noexcept;
  Checksummer& operator=(Checksummer&&) noexcept;

  ChecksumAlgorithm algorithm() const { return algorithm_; }
  void Update(const void* data, size_t size);
  void Update(std::string_view data) { Update(data.data(), data.size()); }
  // Raw digest of everything fed so far. Callable once.
  std::string Finish();

 private:
  ChecksumAlgorithm algorithm_;
  uint64_t crc_ = 0;
  struct DigestState;
  std::unique_ptr<DigestState> digest_;
};

// One-shot helper: base64 of the raw digest.
std::string ChecksumBase64(ChecksumAlgorithm algorithm, std::string_view data);

// CRC of A||B from crc(A), crc(B) and len(B), for CRC algorithms only.
// `crc_a`/`crc_b` are raw big-endian digest bytes as returned by Finish().
std::string CombineCrc(ChecksumAlgorithm algorithm, std::string_view crc_a, std::string_view crc_b,
                       uint64_t length_b);

}  // namespace tablemere::storage
