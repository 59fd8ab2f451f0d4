// Format v3 deletion vectors: the deleted row positions of one data file, as the spec's
// `deletion-vector-v1` Puffin blob holds them (a 64-bit Roaring bitmap in its portable
// serialization, framed by a length, a magic number and a CRC-32), and the Puffin file
// that carries such blobs. Pure; the callers fetch and store the bytes.
//
// The 32-bit Roaring containers are (de)serialized by CRoaring (libroaring-dev); the
// 64-bit framing around them and Puffin's footer are small enough to write here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tablemere::iceberg {

// The positions a `deletion-vector-v1` blob holds, ascending. Errors: kInvalidInput for a
// blob whose length, magic, checksum or bitmap does not check out, or that names a
// position at or past `row_limit` (the data file's record count), checked before the
// positions are expanded.
Result<std::vector<int64_t>> DecodeDeletionVector(std::string_view blob, int64_t row_limit);

// `positions` (any order, duplicates allowed, none negative) as a `deletion-vector-v1`
// blob. Errors: kInvalidInput for a negative position.
Result<std::string> EncodeDeletionVector(std::vector<int64_t> positions);

// One deletion vector of a Puffin file being written.
struct DeletionVectorBlob {
  std::string referenced_data_file;
  std::vector<int64_t> positions;
};

// Where one blob landed in a written Puffin file (a manifest entry's content_offset and
// content_size_in_bytes) and how many positions it holds (its record_count).
struct WrittenBlob {
  int64_t offset = 0, length = 0, cardinality = 0;
};

// A Puffin file of deletion vectors: the magic, the blobs, then the footer (its JSON
// payload naming each blob's type, field, offset, length, referenced data file and
// cardinality, uncompressed). `created_by` goes into the footer's properties.
struct PuffinFile {
  std::string bytes;
  std::vector<WrittenBlob> blobs;  // in the order given
};
Result<PuffinFile> WriteDeletionVectorPuffin(const std::vector<DeletionVectorBlob>& blobs,
                                             const std::string& created_by);

// The bytes of a blob at [offset, offset + length) of a Puffin file, checked to lie
// between its header and footer. Errors: kInvalidInput.
Result<std::string_view> PuffinBlob(std::string_view file, int64_t offset, int64_t length);

}  // namespace tablemere::iceberg
