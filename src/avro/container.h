// Avro object container files: the header (magic, file metadata, sync marker) and blocks
// of records, compressed with the null, deflate, snappy or zstandard codec. Iceberg's
// manifest lists and manifests are such files, with Iceberg's own keys in the metadata.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "avro/schema.h"

namespace tablemere::avro {

enum class Codec { kNull, kDeflate, kSnappy, kZstd };

const char* Name(Codec c);
Result<Codec> ParseCodec(const std::string& name);

struct Container {
  Schema schema;
  Codec codec = Codec::kNull;
  // Every metadata entry but avro.schema and avro.codec (Iceberg's schema,
  // partition-spec, format-version, content, …), each key and value valid UTF-8.
  std::map<std::string, std::string> metadata;
  std::vector<Value> records;
};

// Errors: kInvalidInput for anything malformed (bad magic, a corrupt block, a sync marker
// that does not match, an unknown codec, a block that decompresses beyond the limit).
Result<Container> ReadContainer(std::string_view bytes);

// Writes the records in blocks of at most `block_records`. `sync` is the 16-byte marker
// (random for real files; fixed in tests).
Result<std::string> WriteContainer(const Container& c, const std::string& sync,
                                   size_t block_records = 4096);

}  // namespace tablemere::avro
