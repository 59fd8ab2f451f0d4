// Compaction's data path, run in the worker process: rewrites a bin of Parquet data files
// into one, dropping the rows position and equality deletes name, and reports the new file's
// Iceberg metrics (record count, column sizes, value and null counts, lower and upper bounds in
// Iceberg's single-value encoding) read back from the footer it wrote. Arrow and Parquet
// C++ come from the pyarrow wheel (Debian 12 packages neither); they are linked here
// only, never into the server.
#pragma once

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tablemere::maint {

// `plan`: {"inputs": [{"path": "<local file>", "data_path": "<its table location>",
//                      "delete_files": [<index into position_deletes>, …],
//                      "equality_delete_files": [<index into equality_deletes>, …],
//                      "deleted_positions": [<row>, …]}, …],
//          "position_deletes": ["<local position delete file>", …],
//          "equality_deletes": [{"path": "<local file>", "equality_ids": [<field id>, …]}, …],
//          "schema": [{"id": <field id>, "name": "<name>"}, …],
//          "output": "<local file>", "max_threads": 1,
//          "row_lineage": false}
// With row_lineage (format v3), each input also gives "first_row_id" (null when it has
// none) and "data_sequence_number", and the output gets the row lineage columns
// (_row_id, _last_updated_sequence_number) written explicitly: each kept row's values as
// its file holds them, or where it holds none, first_row_id + its position and the file's
// data sequence number, as the spec has rewritten files keep them.
// An input's rows are dropped when a position delete file it lists names its data_path
// with their position, or deleted_positions does, or when their values of an equality
// delete file's fields (matched by Iceberg field id; null matches null) are one of that
// file's rows. Which delete files apply to which input (the spec's sequence-number and
// partition rules) is the server's to decide.
// The output has the table's current top-level fields (`schema`, in its order and with
// its names): each input's columns are matched by Iceberg field id, widened where the
// table promoted their type (int to long, float to double, decimal precision), and null
// where the file predates them; columns the table dropped are left out. Inputs that do
// not fit (another type, a nested field changed, a column without field id) are
// kInvalidInput, and nothing is written. Answers
// {"record_count", "file_size_in_bytes", "column_sizes": {"<field id>": n}, "value_counts",
//  "null_value_counts", "lower_bounds": {"<field id>": "<hex>"}, "upper_bounds",
//  "split_offsets": [...], "rows_read", "rows_deleted", "rows_deleted_by_equality",
//  "row_map": [{"data_path", "offset", "rows", "dropped": [<position>, …]}, …]}: where each
// input's rows went, in plan order. Input row p (not dropped) is output row
// offset + p - (dropped positions below p); the commit rebase re-aims a client's position
// deletes at the output with it.
Result<nlohmann::json> CompactFiles(const nlohmann::json& plan);

}  // namespace tablemere::maint
