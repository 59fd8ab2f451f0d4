// Compaction's data path, run in the worker process: rewrites a bin of Parquet data files
// into one, dropping the rows position and equality deletes name, and reports the new file's
// Iceberg metrics (record count, column sizes, value and null counts, lower and upper bounds in
// Iceberg's single-value encoding) read back from the footer it wrote. Arrow and Parquet
// C++ come from the pyarrow wheel (Debian 12 packages neither); they are linked here
// only, never into the server.
#pragma once

#include "common/result.h"
#include "maintenance/worker_protocol.h"

namespace tablemere::maint {

namespace protocol = maintenance::protocol;

// `plan` (protocol::CompactPlan): each input's rows are dropped when a position delete
// file it lists names its data_path with their position, or its deleted_positions (a
// deletion vector, decoded by the server) does, or when their values of an equality
// delete file's fields (matched by Iceberg field id; null matches null) are one of that
// file's rows. Which delete files apply to which input (the spec's sequence-number and
// partition rules) is the server's to decide.
// The output has the table's current top-level fields (plan.schema, in its order and with
// its names): each input's columns are matched by Iceberg field id, widened where the
// table promoted their type (int to long, float to double, decimal precision), and null
// where the file predates them; columns the table dropped are left out. Inputs that do
// not fit (another type, a nested field changed, a column without field id) are
// kInvalidInput, and nothing is written. With row_lineage (format v3) the output also
// gets _row_id and _last_updated_sequence_number, written explicitly: each kept row's
// values as its file holds them, or where it holds none, first_row_id + its position and
// the file's data sequence number, as the spec has rewritten files keep them.
// The answer: the new file's metrics, the counts, and row_map (where each input's rows
// went, in plan order: input row p, not dropped, is output row offset + p - (dropped
// positions below p); the commit rebase re-aims a client's position deletes with it).
Result<protocol::CompactAnswer> CompactFiles(const protocol::CompactPlan& plan);

}  // namespace tablemere::maint
