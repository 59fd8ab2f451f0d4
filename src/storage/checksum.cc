#include "storage/checksum.h"

#include <isa-l/crc.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::storage {

namespace {

// CRC64/NVME, reflected form of the polynomial 0xAD93D23594C93659.
constexpr uint64_t kCrc64NvmePoly = 0x9A6C9329AC4BC9B5ULL;
// CRC32C (Castagnoli), reflected form of 0x1EDC6F41; only needed for combine.
constexpr uint32_t kCrc32cPoly = 0x82F63B78U;

// Slice-by-8 tables: table[0] is the classic byte-at-a-time table; table[k][b] is
// the register contribution of byte b followed by k zero bytes, which lets the
// inner loop fold 8 input bytes with 8 independent lookups.
using Crc64Tables = std::array<std::array<uint64_t, 256>, 8>;

constexpr Crc64Tables BuildCrc64Tables() {
  Crc64Tables t{};
  for (uint64_t b = 0; b < 256; b++) {
    uint64_t r = b;
    for (int i = 0; i < 8; i++) r = (r >> 1) ^ ((r & 1) ? kCrc64NvmePoly : 0);
    t[0][b] = r;
  }
  for (size_t k = 1; k < 8; k++) {
    for (size_t b = 0; b < 256; b++) {
      uint64_t prev = t[k - 1][b];
      t[k][b] = (prev >> 8) ^ t[0][prev & 0xff];
    }
  }
  return t;
}

// constexpr makes this constant (static) initialisation: the tables exist before
// any dynamic initialiser could call into the checksum code, so there is no
// initialisation-order hazard and no per-call lazy-init branch.
constexpr Crc64Tables kCrc64Tables = BuildCrc64Tables();

// Updates the non-inverted CRC64/NVME register over `data`.
uint64_t Crc64NvmeUpdate(uint64_t reg, const unsigned char* p, size_t n) {
  const auto& t = kCrc64Tables;
  while (n >= 8) {
    // Assemble little-endian explicitly: the reflected CRC consumes the first
    // byte in the low bits regardless of the host's byte order.
    uint64_t word = 0;
    for (int i = 7; i >= 0; i--) word = (word << 8) | p[i];
    reg ^= word;
    reg = t[7][reg & 0xff] ^ t[6][(reg >> 8) & 0xff] ^ t[5][(reg >> 16) & 0xff] ^
          t[4][(reg >> 24) & 0xff] ^ t[3][(reg >> 32) & 0xff] ^ t[2][(reg >> 40) & 0xff] ^
          t[1][(reg >> 48) & 0xff] ^ t[0][reg >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) reg = (reg >> 8) ^ t[0][(reg ^ *p++) & 0xff];
  return reg;
}

// ISA-L and zlib take 32-bit lengths; feed them in slices well below that.
constexpr size_t kMaxSlice = size_t{1} << 30;

std::string BigEndian(uint64_t value, int bytes) {
  std::string out(static_cast<size_t>(bytes), '\0');
  for (int i = bytes - 1; i >= 0; i--) {
    out[static_cast<size_t>(i)] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  return out;
}

uint64_t FromBigEndian(std::string_view raw) {
  uint64_t v = 0;
  for (unsigned char c : raw) v = (v << 8) | c;
  return v;
}

// --- CRC combine over GF(2) -------------------------------------------------
//
// Feeding one zero bit into a reflected CRC register is a linear map over GF(2):
// r -> (r >> 1) ^ (r & 1 ? poly : 0). Appending n zero bytes is that map raised
// to the power 8n, which we get by repeated squaring of a width x width bit
// matrix in O(width^2 log n) instead of O(n). Since crc(A||B) with the all-ones
// init/xorout convention equals zeros_{len B}(crc(A)) ^ crc(B) (the init and
// xorout terms cancel because they are equal), combining needs only crc(A),
// crc(B) and len(B) — exactly what FULL_OBJECT multipart checksums have per part.
// zlib ships this for CRC32 only; CRC32C and CRC64NVME use this implementation.
class Gf2Matrix {
 public:
  // Column i is the image of basis vector (1 << i).
  explicit Gf2Matrix(int width) : width_(width) {}

  static Gf2Matrix OneZeroBit(int width, uint64_t poly) {
    Gf2Matrix m(width);
    m.col_[0] = poly;  // bit 0 shifts out and triggers the polynomial
    for (int i = 1; i < width; i++) m.col_[static_cast<size_t>(i)] = uint64_t{1} << (i - 1);
    return m;
  }

  uint64_t Apply(uint64_t v) const {
    uint64_t out = 0;
    for (size_t i = 0; v != 0; i++, v >>= 1) {
      if (v & 1) out ^= col_[i];
    }
    return out;
  }

  Gf2Matrix Squared() const {
    Gf2Matrix sq(width_);
    for (size_t i = 0; i < static_cast<size_t>(width_); i++) sq.col_[i] = Apply(col_[i]);
    return sq;
  }

 private:
  int width_;
  std::array<uint64_t, 64> col_{};
};

uint64_t CombineGeneric(uint64_t crc_a, uint64_t crc_b, uint64_t length_b, int width,
                        uint64_t poly) {
  if (length_b == 0) return crc_a;
  // One zero byte = eight zero bits.
  Gf2Matrix op = Gf2Matrix::OneZeroBit(width, poly).Squared().Squared().Squared();
  uint64_t reg = crc_a;
  for (uint64_t n = length_b; n != 0; n >>= 1) {
    if (n & 1) reg = op.Apply(reg);
    if (n > 1) op = op.Squared();
  }
  return reg ^ crc_b;
}

}  // namespace

std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name) {
  static constexpr ChecksumAlgorithm kAll[] = {
      ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme,
      ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256};
  for (ChecksumAlgorithm a : kAll) {
    if (EqualsIgnoreCase(name, ChecksumAlgorithmName(a))) return a;
  }
  return std::nullopt;
}

const char* ChecksumAlgorithmName(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kCrc32:
      return "CRC32";
    case ChecksumAlgorithm::kCrc32c:
      return "CRC32C";
    case ChecksumAlgorithm::kCrc64Nvme:
      return "CRC64NVME";
    case ChecksumAlgorithm::kSha1:
      return "SHA1";
    case ChecksumAlgorithm::kSha256:
      return "SHA256";
  }
  return "";
}

std::string ChecksumHeaderName(ChecksumAlgorithm algorithm) {
  return "x-amz-checksum-" + ToLower(ChecksumAlgorithmName(algorithm));
}

bool IsCrc(ChecksumAlgorithm algorithm) {
  return algorithm == ChecksumAlgorithm::kCrc32 || algorithm == ChecksumAlgorithm::kCrc32c ||
         algorithm == ChecksumAlgorithm::kCrc64Nvme;
}

struct Checksummer::DigestState {
  explicit DigestState(crypto::DigestAlgorithm a) : digest(a) {}
  crypto::Digest digest;
};

Checksummer::Checksummer(ChecksumAlgorithm algorithm) : algorithm_(algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kCrc32:
      crc_ = 0;  // zlib keeps the finalised value between calls
      break;
    case ChecksumAlgorithm::kCrc32c:
      crc_ = 0xFFFFFFFFU;  // ISA-L's crc32_iscsi works on the non-inverted register
      break;
    case ChecksumAlgorithm::kCrc64Nvme:
      crc_ = ~uint64_t{0};
      break;
    case ChecksumAlgorithm::kSha1:
      digest_ = std::make_unique<DigestState>(crypto::DigestAlgorithm::kSha1);
      break;
    case ChecksumAlgorithm::kSha256:
      digest_ = std::make_unique<DigestState>(crypto::DigestAlgorithm::kSha256);
      break;
  }
}

Checksummer::~Checksummer() = default;
Checksummer::Checksummer(Checksummer&&) noexcept = default;
Checksummer& Checksummer::operator=(Checksummer&&) noexcept = default;

void Checksummer::Update(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  switch (algorithm_) {
    case ChecksumAlgorithm::kCrc32:
      while (size > 0) {
        size_t n = std::min(size, kMaxSlice);
        crc_ = crc32_z(static_cast<uLong>(crc_), p, n);
        p += n;
        size -= n;
      }
      break;
    case ChecksumAlgorithm::kCrc32c:
      while (size > 0) {
        size_t n = std::min(size, kMaxSlice);
        // ISA-L's signature takes a non-const pointer but does not write through it.
        crc_ = crc32_iscsi(const_cast<unsigned char*>(p), static_cast<int>(n),
                           static_cast<unsigned int>(crc_));
        p += n;
        size -= n;
      }
      break;
    case ChecksumAlgorithm::kCrc64Nvme:
      crc_ = Crc64NvmeUpdate(crc_, p, size);
      break;
    case ChecksumAlgorithm::kSha1:
    case ChecksumAlgorithm::kSha256:
      digest_->digest.Update(data, size);
      break;
  }
}

std::string Checksummer::Finish() {
  switch (algorithm_) {
    case ChecksumAlgorithm::kCrc32:
      return BigEndian(crc_ & 0xFFFFFFFFU, 4);
    case ChecksumAlgorithm::kCrc32c:
      return BigEndian(~crc_ & 0xFFFFFFFFU, 4);
    case ChecksumAlgorithm::kCrc64Nvme:
      return BigEndian(~crc_, 8);
    case ChecksumAlgorithm::kSha1:
    case ChecksumAlgorithm::kSha256:
      return digest_->digest.Finish();
  }
  return {};
}

std::string ChecksumBase64(ChecksumAlgorithm algorithm, std::string_view data) {
  Checksummer c(algorithm);
  c.Update(data);
  return crypto::Base64Encode(c.Finish());
}

std::string CombineCrc(ChecksumAlgorithm algorithm, std::string_view crc_a, std::string_view crc_b,
                       uint64_t length_b) {
  uint64_t a = FromBigEndian(crc_a);
  uint64_t b = FromBigEndian(crc_b);
  switch (algorithm) {
    case ChecksumAlgorithm::kCrc32: {
      uLong combined = 0;
      if (length_b == 0) {
        combined = static_cast<uLong>(a);
      } else {
        combined = crc32_combine(static_cast<uLong>(a), static_cast<uLong>(b),
                                 static_cast<z_off_t>(length_b));
      }
      return BigEndian(combined & 0xFFFFFFFFU, 4);
    }
    case ChecksumAlgorithm::kCrc32c:
      return BigEndian(CombineGeneric(a, b, length_b, 32, kCrc32cPoly), 4);
    case ChecksumAlgorithm::kCrc64Nvme:
      return BigEndian(CombineGeneric(a, b, length_b, 64, kCrc64NvmePoly), 8);
    case ChecksumAlgorithm::kSha1:
    case ChecksumAlgorithm::kSha256:
      break;  // not combinable; callers check IsCrc first
  }
  return {};
}

}  // namespace tablemere::storage
