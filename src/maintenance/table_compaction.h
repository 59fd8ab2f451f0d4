// Compaction: bin-packs a table's small Parquet data files per partition into files of
// the target size and commits the swap as a `replace` snapshot through the catalog's
// commit path, as the warehouse's write identity, asserting that main has not moved (a
// job that loses the race is dropped; the next run retries, never against the user).
// The rows are rewritten by the worker process (`tablemere-maint compact`, Arrow); the
// manifests and the manifest list are written here (src/avro).
//
// Position and equality deletes are applied while rewriting by the spec's rules (within
// their spec and partition, or everywhere from an unpartitioned spec; position deletes to
// data no newer than them, equality deletes to data older than them), so the rows they
// name are dropped. Every Parquet file an equality delete reaches is a candidate however
// large (some readers cannot apply equality deletes at all), and so is one whose position
// deletes name a tenth of its rows; a delete file that no longer applies to any data file
// is removed in the same snapshot, and one that applies to nothing at all is removed even
// when no data is rewritten. A partition's position delete files are merged into one when
// there are `min-delete-files` of them (position_delete_merge.h). Not compacted, and
// said so in the result: non-Parquet files (their deletes stay). Format v3 tables are compacted
// with their deletion vectors applied and their row lineage kept: every row keeps its _row_id and
// _last_updated_sequence_number, written explicitly, and the new manifests get first row ids past
// the table's.
#pragma once

#include <cstdint>
#include <string>

#include "catalog/catalog_service.h"
#include "maintenance/catalog_names.h"

namespace tablemere::maintenance {

struct CompactionOptions {
  int64_t target_file_size = 128LL << 20;
  int min_input_files = 5;  // a partition needs this many small files
  std::string worker_path;  // tablemere-maint
  std::string scratch_dir;  // local space for the worker's inputs and output
  int64_t worker_timeout_ms = 3'600'000;
  int worker_threads = 1;
  // Scheduled runs leave files younger than this for later (their writer is probably
  // still busy there) and take partitions nobody wrote in it first; an operator's run
  // does not wait. The commit-driven visit also waits this long after a table's last commit.
  int64_t quiet_ms = 10 * 60 * 1000;
  int max_bins_per_run = 32;  // small groups per commit; the rest waits for the next run
};

struct CompactResult {
  bool ran = false;
  std::string reason;  // why nothing (or not everything) was rewritten
  int data_files_before = 0, data_files_after = 0;
  int64_t data_bytes_before = 0, data_bytes_after = 0;
  int files_rewritten = 0, files_written = 0, bins = 0, bins_failed = 0;
  int delete_files_removed = 0;          // delete files that no longer apply to any data file
  int delete_files_merged = 0;           // position delete files merged into fewer
  int delete_files_written = 0;          // the merged files
  int64_t position_deletes_dropped = 0;  // merged rows naming files gone or rewritten
  int delete_files_misfiled = 0;  // left alone with their data (compaction_inputs.h Misfiled)
  int64_t rows_deleted = 0;       // rows position and equality deletes dropped while rewriting
  int64_t bytes_read = 0;         // what the worker read, failed or not: charged to the byte budget
  int64_t snapshot_id = -1;
};

// `byte_allowance` bounds the bytes this run may read (the hourly budget's rest);
// `quiet_ms` leaves files that recent alone and orders quiet partitions first.
Result<CompactResult> CompactTable(CatalogService& catalog, const Clock& clock, Random& random,
                                   const CompactionOptions& options, const metastore::Warehouse& w,
                                   const TableIdent& ident, int64_t byte_allowance,
                                   int64_t quiet_ms);

}  // namespace tablemere::maintenance
