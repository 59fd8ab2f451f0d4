// What the server and the maintenance worker (`tablemere-maint`, src/maint) say to each
// other: each job's plan and answer as typed structs, shared by both sides, crossing the
// process boundary as JSON files. Decoding checks every field's type, so a malformed
// plan or answer is a kInvalidInput naming the field, never an exception or a default
// silently taken. No Arrow here: the server links this, the worker adds Arrow.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tablemere::maintenance::protocol {

// A written Parquet file's Iceberg metrics, read back from its footer. Bounds are in
// Iceberg's single-value serialization (raw bytes; hex on the wire).
struct FileMetrics {
  int64_t record_count = 0, file_size_in_bytes = 0;
  std::map<int32_t, int64_t> column_sizes, value_counts, null_value_counts;
  std::map<int32_t, std::string> lower_bounds, upper_bounds;
  std::vector<int64_t> split_offsets;
  bool operator==(const FileMetrics&) const = default;
};

// Where a compaction moved one data file's rows: input row p (not dropped) is row
// offset + p - (dropped positions below p) of `to`.
struct RowMove {
  std::string to;  // the file it wrote, as the manifests name it
  int64_t offset = 0, rows = 0;
  std::vector<int64_t> dropped;  // ascending: rows the compaction deleted

  // Where input row `pos` is in `to`: nullopt when the compaction deleted it already.
  // `pos` must be below `rows`.
  std::optional<int64_t> Moved(int64_t pos) const;
  bool operator==(const RowMove&) const = default;
};
using RowMoves = std::map<std::string, RowMove>;  // canonical data file -> where it went

// `compact`: a bin of Parquet data files rewritten into one (maint/compact.h).
struct CompactInput {
  std::string path;                                                  // the local copy
  std::string data_path;                                             // as the manifests name it
  std::vector<size_t> position_delete_files, equality_delete_files;  // into the plan's lists
  std::vector<int64_t> deleted_positions;  // from deletion vectors, read by the server
  std::optional<int64_t> first_row_id;     // row lineage: where its rows' ids start
  int64_t data_sequence_number = 0;
  bool operator==(const CompactInput&) const = default;
};
struct EqualityDeleteFile {
  std::string path;
  std::vector<int32_t> equality_ids;
  bool operator==(const EqualityDeleteFile&) const = default;
};
struct SchemaField {
  int32_t id = 0;
  std::string name;
  bool operator==(const SchemaField&) const = default;
};
struct CompactPlan {
  std::vector<CompactInput> inputs;
  std::vector<std::string> position_deletes;  // local position delete files
  std::vector<EqualityDeleteFile> equality_deletes;
  std::vector<SchemaField> schema;  // the table's current top-level fields
  std::string output;
  int max_threads = 1;
  bool row_lineage = false;  // format v3: _row_id and _last_updated_sequence_number written
  bool operator==(const CompactPlan&) const = default;
};
// Where one input's rows went in the output.
struct InputRows {
  std::string data_path;
  int64_t offset = 0, rows = 0;
  std::vector<int64_t> dropped;
  bool operator==(const InputRows&) const = default;
};
struct CompactAnswer {
  FileMetrics file;
  int64_t rows_read = 0, rows_deleted = 0, rows_deleted_by_equality = 0;
  std::vector<InputRows> row_map;  // in plan order
  bool operator==(const CompactAnswer&) const = default;
};

// `rewrite-deletes`: a partition's position delete files merged into one
// (maint/position_deletes.h).
struct SequencedFile {
  std::string path;
  int64_t sequence = 0;  // its data sequence number
  bool operator==(const SequencedFile&) const = default;
};
struct RewriteDeletesPlan {
  std::vector<SequencedFile> inputs;  // local position delete files
  std::vector<SequencedFile> live;    // the live data files, as the manifests name them
  std::string output;
  bool operator==(const RewriteDeletesPlan&) const = default;
};
// A position delete file the worker wrote: its metrics (record_count 0: no row was left,
// no file written), how many data files it names, and the one it names when that is one.
struct DeletesWritten {
  FileMetrics file;
  int64_t referenced_data_files = 0;
  std::optional<std::string> referenced_data_file;
  bool operator==(const DeletesWritten&) const = default;
};
struct RewriteDeletesAnswer {
  DeletesWritten written;
  int64_t rows_read = 0, rows_dropped = 0;
  bool operator==(const RewriteDeletesAnswer&) const = default;
};

// `translate-deletes`: position deletes re-aimed at the files a compaction wrote, for the
// commit rebase (maint/position_deletes.h). One of `input` or `removed_files`.
struct TranslateDeletesPlan {
  std::string input;                       // a local position delete file
  std::vector<std::string> removed_files;  // data files a copy-on-write commit removed
  RowMoves moves;
  std::string output;
  bool operator==(const TranslateDeletesPlan&) const = default;
};
struct TranslateDeletesAnswer {
  DeletesWritten written;
  int64_t rows_read = 0, rows_moved = 0, rows_dropped = 0;
  bool operator==(const TranslateDeletesAnswer&) const = default;
};

// Each message as JSON and back. Decode: kInvalidInput naming what does not fit.
#define TM_WORKER_MESSAGE(T)               \
  nlohmann::json Encode(const T& message); \
  template <>                              \
  Result<T> Decode<T>(const nlohmann::json& json);
template <typename T>
Result<T> Decode(const nlohmann::json& json);
TM_WORKER_MESSAGE(FileMetrics)
TM_WORKER_MESSAGE(RowMoves)
TM_WORKER_MESSAGE(CompactPlan)
TM_WORKER_MESSAGE(CompactAnswer)
TM_WORKER_MESSAGE(RewriteDeletesPlan)
TM_WORKER_MESSAGE(RewriteDeletesAnswer)
TM_WORKER_MESSAGE(TranslateDeletesPlan)
TM_WORKER_MESSAGE(TranslateDeletesAnswer)
#undef TM_WORKER_MESSAGE

}  // namespace tablemere::maintenance::protocol
