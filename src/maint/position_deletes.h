// Rewriting position delete files, run in the worker process. Merging: several of a partition's
// position delete files become one, keeping only the rows that still name a live data
// file they apply to (rows for files that were rewritten or removed are dead weight every
// reader opens), deduplicated and sorted by file_path then pos as the Iceberg spec asks.
#pragma once

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tablemere::maint {

// `plan`: {"inputs": [{"path": "<local position delete file>", "sequence": <its data
//                      sequence number>}, …],
//          "live": [{"path": "<data file as the manifests name it>", "sequence": <its data
//                    sequence number>}, …],
//          "output": "<local file>"}
// A row (file_path, pos) of an input is kept when file_path (s3a:// and s3n:// read as
// s3://) is a live file whose sequence number is at most the input's: the spec's rule for
// which data a position delete applies to, so merging deletes of different ages never
// makes one apply to data it did not. Inputs with columns other than file_path and pos
// (the optional deleted `row`) are kInvalidInput. Answers the output's metrics as
// CompactFiles does, with exact file_path bounds (readers match delete files to data files
// by them, so they are never truncated), plus {"rows_read", "rows_dropped",
// "referenced_data_files"}; with no row kept, no file is written and "record_count" is 0.
Result<nlohmann::json> RewritePositionDeletes(const nlohmann::json& plan);

// Re-aims position deletes written before a compaction at the files it wrote, for the
// commit rebase. `plan`: {"input": "<local position delete file>" or
//   "removed_files": ["<data file a copy-on-write commit removed whole>", …],
//   "moves": {"<data file the compaction replaced>": {"to": "<the file it wrote>",
//             "offset": <where the file's first kept row is>, "rows": <the file's rows>,
//             "dropped": [<positions the compaction deleted>, …]}, …},
//   "output": "<local file>"}
// A row naming a moved file is re-aimed at position offset + pos - (dropped positions
// below pos) of its new file, or left out when the compaction deleted that row already;
// other rows stay as they are. A removed file's every row is named (at its new place),
// which turns a copy-on-write removal into position deletes. A position beyond a file's
// rows, or a removed file that was not moved, is kInvalidInput. Answers the output's
// metrics as RewritePositionDeletes does, plus {"rows_read", "rows_moved", "rows_dropped"}
// (input rows left out).
Result<nlohmann::json> TranslatePositionDeletes(const nlohmann::json& plan);

}  // namespace tablemere::maint
