// The fuzz target for deletion vectors, which clients write (Spark's merge-on-read on
// format v3 tables) and compaction and the commit rebase decode: any blob is either
// refused with a typed error or decoded into ascending positions below the row limit,
// which encode and decode again to the same positions. A thrown exception, an abort or a
// sanitizer report is a finding. Seeds: real Spark deletion vectors. A mutation mostly
// breaks the blob's CRC, which would stop it before the bitmaps: each input is also tried
// with its length and CRC made right again, so the bitmap parser sees the mutations.
#include <zlib.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "iceberg/deletion_vector.h"

extern "C" long tm_fuzz_inputs_read;  // NOLINT: shared with the driver
long tm_fuzz_inputs_read = 0;

namespace {

[[noreturn]] void Finding(const char* what) {
  std::fprintf(stderr, "deletion_vector_fuzz: %s\n", what);
  std::abort();
}

// Larger than any seed's file, small enough that a decoded vector stays cheap.
constexpr int64_t kRowLimit = int64_t{1} << 22;

// The input with its framing made right: the length and the CRC-32 of what lies between.
std::string Reframed(std::string_view blob) {
  if (blob.size() < 12) return std::string(blob);
  std::string out(blob);
  const auto body = static_cast<uint32_t>(out.size() - 8);
  for (int i = 0; i < 4; i++) out[static_cast<size_t>(i)] = static_cast<char>(body >> (24 - 8 * i));
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(out.data() + 4), static_cast<uInt>(body)));
  for (int i = 0; i < 4; i++)
    out[out.size() - 4 + static_cast<size_t>(i)] = static_cast<char>(crc >> (24 - 8 * i));
  return out;
}

void Check(std::string_view blob) {
  auto positions = tablemere::iceberg::DecodeDeletionVector(blob, kRowLimit);
  if (!positions) return;
  tm_fuzz_inputs_read++;
  for (size_t i = 0; i < positions->size(); i++) {
    const int64_t p = (*positions)[i];
    if (p < 0 || p >= kRowLimit) Finding("a position outside the row limit");
    if (i > 0 && (*positions)[i - 1] >= p) Finding("positions not strictly ascending");
  }
  auto encoded = tablemere::iceberg::EncodeDeletionVector(*positions);
  if (!encoded) Finding("decoded positions could not be encoded");
  auto again = tablemere::iceberg::DecodeDeletionVector(*encoded, kRowLimit);
  if (!again || *again != *positions) Finding("an encoded vector decodes differently");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view blob(reinterpret_cast<const char*>(data), size);
  Check(blob);
  Check(Reframed(blob));
  return 0;
}
