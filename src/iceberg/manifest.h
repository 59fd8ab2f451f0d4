// Iceberg's manifest lists and manifests as typed structs: what a snapshot's manifest
// list says of each manifest, and each manifest's entries (data and delete files with
// their metrics and typed partition values), read from and written to Avro containers
// (src/avro) in formats v1 to v3. Pure; the callers fetch the bytes.
//
// Reading makes inherited fields explicit (an entry's snapshot id and sequence numbers
// from its manifest's list entry, a v3 data file's first row id from its manifest's),
// so an entry means the same wherever it is written next.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "avro/container.h"
#include "common/result.h"
#include "iceberg/literal.h"

namespace tablemere::iceberg {

enum class ManifestContent { kData = 0, kDeletes = 1 };
enum class FileContent { kData = 0, kPositionDeletes = 1, kEqualityDeletes = 2 };
enum class EntryStatus { kExisting = 0, kAdded = 1, kDeleted = 2 };

// A manifest list's summary of one partition field over a manifest's files.
struct FieldSummary {
  bool contains_null = false;
  std::optional<bool> contains_nan;
  std::optional<std::string> lower_bound, upper_bound;  // single-value serialization
  bool operator==(const FieldSummary&) const = default;
};

// One record of a manifest list.
struct ManifestFile {
  std::string path;
  int64_t length = 0;
  int32_t spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  int64_t sequence_number = 0, min_sequence_number = 0;  // 0 in v1
  int64_t added_snapshot_id = 0;
  std::optional<int64_t> added_files, existing_files, deleted_files;
  std::optional<int64_t> added_rows, existing_rows, deleted_rows;
  std::vector<FieldSummary> partitions;  // one per field of its partition spec
  std::optional<std::string> key_metadata;
  std::optional<int64_t> first_row_id;  // v3 data manifests
  bool operator==(const ManifestFile&) const = default;
};

// One field of a manifest's partition tuple.
struct PartitionField {
  std::string name;
  int32_t field_id = 0;  // 0 when the file does not say
  PrimitiveType type;
  bool operator==(const PartitionField&) const = default;
};

// A data file, or a delete file (position deletes, a deletion vector, equality deletes).
struct DataFile {
  FileContent content = FileContent::kData;
  std::string path;
  std::string format;                             // as written: PARQUET, AVRO, ORC, PUFFIN
  std::vector<std::optional<Literal>> partition;  // by the manifest's partition fields
  int64_t record_count = 0, file_size_in_bytes = 0;
  std::map<int32_t, int64_t> column_sizes, value_counts, null_value_counts, nan_value_counts;
  std::map<int32_t, std::string> lower_bounds, upper_bounds;  // single-value serialization
  std::optional<std::string> key_metadata;
  std::vector<int64_t> split_offsets;
  std::vector<int32_t> equality_ids;
  std::optional<int32_t> sort_order_id;
  std::optional<int64_t> first_row_id;                  // v3 data files
  std::optional<std::string> referenced_data_file;      // position deletes, v2 and v3
  std::optional<int64_t> content_offset, content_size;  // v3 deletion vectors
  std::optional<int64_t> block_size_in_bytes;           // v1 (required there; ignored)

  // Whether the file format is `name`, in any case.
  bool FormatIs(const char* name) const;
  // A v3 deletion vector: position deletes of one data file in a Puffin blob.
  bool IsDeletionVector() const {
    return content == FileContent::kPositionDeletes && FormatIs("PUFFIN");
  }
  bool operator==(const DataFile&) const = default;
};

// A partition tuple: one value per field of its spec, null as nullopt.
using PartitionTuple = std::vector<std::optional<Literal>>;

// One entry of a manifest, inherited fields explicit.
struct ManifestEntry {
  EntryStatus status = EntryStatus::kAdded;
  int64_t snapshot_id = 0;
  int64_t sequence_number = 0;       // the data sequence number
  int64_t file_sequence_number = 0;  // 0 in v1
  DataFile file;
  bool Live() const { return status != EntryStatus::kDeleted; }
  bool operator==(const ManifestEntry&) const = default;
};

struct Manifest {
  int format_version = 1;
  int32_t spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  std::vector<PartitionField> partition_type;
  std::vector<ManifestEntry> entries;
  bool operator==(const Manifest&) const = default;
};

// The records of a manifest list. Errors: kInvalidInput for a container that is not one
// (a required field missing, a value out of range).
Result<std::vector<ManifestFile>> ReadManifestList(const avro::Container& list);

// The entries of a manifest that `listed` names. Errors: kInvalidInput for a container
// that is not a manifest, or a partition value or metric of the wrong shape.
Result<Manifest> ReadManifest(const avro::Container& manifest, const ManifestFile& listed);

// The partition tuple's fields, from a manifest's Avro schema.
Result<std::vector<PartitionField>> PartitionType(const avro::Container& manifest);

// The manifest list's summary of each partition field (of `type`) over the partition
// tuples of a manifest's entries: whether any value is null or NaN, and the smallest and
// largest other value in the single-value serialization.
std::vector<FieldSummary> SummarizePartitions(
    const std::vector<PartitionField>& type,
    const std::vector<const std::vector<std::optional<Literal>>*>& partitions);

// `entry` as a record of the manifest schema `entry_node` (every field the schema has is
// written; a field the entry has no value for is null, which a required field refuses),
// and `file` as a record of a manifest list's schema. Errors: kInvalidInput naming the
// field that does not fit.
Result<avro::Value> ToAvro(const avro::Node& entry_node, const ManifestEntry& entry);
Result<avro::Value> ToAvro(const avro::Node& list_node, const ManifestFile& file);

}  // namespace tablemere::iceberg
