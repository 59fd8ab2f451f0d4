#include "iceberg/deletion_vector.h"

#include <roaring/roaring.h>
#include <zlib.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

namespace tablemere::iceberg {
namespace {

constexpr unsigned char kMagic[4] = {0xD1, 0xD3, 0x39, 0x64};
constexpr std::string_view kPuffinMagic = "PFA1";
// Roaring's portable format begins with one of these cookies.
constexpr uint64_t kNoRunCookie = 12346, kRunCookie = 12347;
// Puffin names the column a deletion vector deletes from: the row position.
constexpr int64_t kRowPositionFieldId = 2147483645;

uint32_t Big32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}
uint64_t Little(const char* p, int bytes) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | u[i];
  return v;
}
void PutBig32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xFF);
}
void PutLittle(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
uint32_t Crc32(std::string_view bytes) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

struct BitmapFree {
  void operator()(roaring_bitmap_t* r) const { roaring_bitmap_free(r); }
};
using Bitmap = std::unique_ptr<roaring_bitmap_t, BitmapFree>;

// Receives a bitmap's values, as positions under one key, until the row limit.
struct Collector {
  std::vector<int64_t>* out;
  int64_t high, limit;
  bool over = false;
  static bool Add(uint32_t low, void* self) {
    auto* c = static_cast<Collector*>(self);
    const int64_t position = c->high | low;
    if (position >= c->limit || static_cast<int64_t>(c->out->size()) >= c->limit) {
      c->over = true;
      return false;
    }
    c->out->push_back(position);
    return true;
  }
};

Error Bad(const std::string& what) {
  return Error{ErrorCode::kInvalidInput, "not a deletion vector: " + what};
}

}  // namespace

Result<std::vector<int64_t>> DecodeDeletionVector(std::string_view blob, int64_t row_limit) {
  if (blob.size() < 12 + 8) return Fail(Bad("too short"));
  const uint32_t length = Big32(blob.data());
  if (length != blob.size() - 8) return Fail(Bad("its length says " + std::to_string(length)));
  if (!std::equal(std::begin(kMagic), std::end(kMagic),
                  reinterpret_cast<const unsigned char*>(blob.data() + 4))) {
    return Fail(Bad("wrong magic"));
  }
  if (Crc32(blob.substr(4, length)) != Big32(blob.data() + 4 + length)) {
    return Fail(Bad("wrong checksum"));
  }
  std::string_view vector = blob.substr(8, length - 4);
  const uint64_t count = Little(vector.data(), 8);
  vector.remove_prefix(8);
  std::vector<int64_t> out;
  int64_t previous_key = -1;
  for (uint64_t b = 0; b < count; b++) {
    if (vector.size() < 4) return Fail(Bad("truncated"));
    const auto key = static_cast<int64_t>(Little(vector.data(), 4));
    vector.remove_prefix(4);
    if (key <= previous_key) return Fail(Bad("keys out of order"));
    previous_key = key;
    if (key > (row_limit >> 32)) {  // also keeps key << 32 inside int64
      return Fail(
          Bad("it names a position past the file's " + std::to_string(row_limit) + " rows"));
    }
    // At most 2^16 containers, each with at least its 4-byte header in the bytes left:
    // checked before CRoaring 0.2 sizes its container array by the count it reads.
    if (vector.size() < 8) return Fail(Bad("truncated"));
    const uint64_t cookie = Little(vector.data(), 4);
    const uint64_t containers =
        (cookie & 0xFFFF) == kRunCookie ? (cookie >> 16) + 1 : Little(vector.data() + 4, 4);
    if ((cookie & 0xFFFF) != kRunCookie && cookie != kNoRunCookie) {
      return Fail(Bad("a bitmap of unknown format"));
    }
    if (containers > 65536 || containers * 4 > vector.size()) {
      return Fail(Bad("a bitmap of " + std::to_string(containers) + " containers"));
    }
    const size_t size = roaring_bitmap_portable_deserialize_size(vector.data(), vector.size());
    if (size == 0 || size > vector.size()) return Fail(Bad("a malformed bitmap"));
    Bitmap bitmap(roaring_bitmap_portable_deserialize_safe(vector.data(), size));
    if (!bitmap) return Fail(Bad("a malformed bitmap"));
    vector.remove_prefix(size);
    // Expanded by iterating, never by the bitmap's own count: CRoaring 0.2's safe
    // deserializer checks sizes but not contents, so a bitset container's stated
    // cardinality may disagree with its bits (to_uint32_array would then write past its
    // buffer). Stopped at the row limit: a few bytes of run containers can name billions
    // of positions, and a file's deletes name at most its rows.
    Collector collect{&out, key << 32, row_limit};
    roaring_iterate(bitmap.get(), &Collector::Add, &collect);
    if (collect.over) {
      return Fail(
          Bad("it names a position past the file's " + std::to_string(row_limit) + " rows"));
    }
  }
  if (!vector.empty()) return Fail(Bad("bytes after its last bitmap"));
  if (!std::is_sorted(out.begin(), out.end()) ||
      std::adjacent_find(out.begin(), out.end()) != out.end()) {
    return Fail(Bad("positions out of order"));
  }
  return out;
}

Result<std::string> EncodeDeletionVector(std::vector<int64_t> positions) {
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  if (!positions.empty() && positions.front() < 0) {
    return Fail(ErrorCode::kInvalidInput, "a deleted position is negative");
  }
  std::string bitmaps;
  uint64_t count = 0;
  for (size_t i = 0; i < positions.size();) {
    const int64_t key = positions[i] >> 32;
    Bitmap bitmap(roaring_bitmap_create());
    if (!bitmap) return Fail(ErrorCode::kInternal, "out of memory for a deletion vector");
    for (; i < positions.size() && (positions[i] >> 32) == key; i++) {
      roaring_bitmap_add(bitmap.get(), static_cast<uint32_t>(positions[i] & 0xFFFFFFFF));
    }
    roaring_bitmap_run_optimize(bitmap.get());
    PutLittle(bitmaps, static_cast<uint64_t>(key), 4);
    std::string serialized(roaring_bitmap_portable_size_in_bytes(bitmap.get()), '\0');
    serialized.resize(roaring_bitmap_portable_serialize(bitmap.get(), serialized.data()));
    bitmaps += serialized;
    count++;
  }
  std::string body(reinterpret_cast<const char*>(kMagic), 4);
  PutLittle(body, count, 8);
  body += bitmaps;
  std::string out;
  PutBig32(out, static_cast<uint32_t>(body.size()));
  out += body;
  PutBig32(out, Crc32(body));
  return out;
}

Result<PuffinFile> WriteDeletionVectorPuffin(const std::vector<DeletionVectorBlob>& blobs,
                                             const std::string& created_by) {
  PuffinFile file;
  file.bytes = kPuffinMagic;
  nlohmann::json metadata = nlohmann::json::array();
  for (const auto& blob : blobs) {
    std::vector<int64_t> positions = blob.positions;
    std::sort(positions.begin(), positions.end());
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    TM_ASSIGN(std::string bytes, EncodeDeletionVector(positions));
    WrittenBlob written{static_cast<int64_t>(file.bytes.size()), static_cast<int64_t>(bytes.size()),
                        static_cast<int64_t>(positions.size())};
    file.bytes += bytes;
    // Snapshot id and sequence number -1: inherited from the manifest entry, as Iceberg
    // Java writes them.
    metadata.push_back({{"type", "deletion-vector-v1"},
                        {"fields", {kRowPositionFieldId}},
                        {"snapshot-id", -1},
                        {"sequence-number", -1},
                        {"offset", written.offset},
                        {"length", written.length},
                        {"properties",
                         {{"referenced-data-file", blob.referenced_data_file},
                          {"cardinality", std::to_string(written.cardinality)}}}});
    file.blobs.push_back(written);
  }
  const std::string payload =
      nlohmann::json{{"blobs", metadata}, {"properties", {{"created-by", created_by}}}}.dump();
  file.bytes += kPuffinMagic;
  file.bytes += payload;
  PutLittle(file.bytes, payload.size(), 4);
  PutLittle(file.bytes, 0, 4);  // flags: the payload is not compressed
  file.bytes += kPuffinMagic;
  return file;
}

Result<std::string_view> PuffinBlob(std::string_view file, int64_t offset, int64_t length) {
  if (!file.starts_with(kPuffinMagic) || !file.ends_with(kPuffinMagic)) {
    return Fail(ErrorCode::kInvalidInput, "not a Puffin file");
  }
  if (offset < static_cast<int64_t>(kPuffinMagic.size()) || length < 0 ||
      offset > static_cast<int64_t>(file.size()) ||
      length > static_cast<int64_t>(file.size()) - offset) {
    return Fail(ErrorCode::kInvalidInput,
                "a blob at " + std::to_string(offset) + "+" + std::to_string(length) +
                    " lies outside its Puffin file of " + std::to_string(file.size()) + " bytes");
  }
  return file.substr(static_cast<size_t>(offset), static_cast<size_t>(length));
}

}  // namespace tablemere::iceberg
