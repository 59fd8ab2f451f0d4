// Rewriting position delete files, run in the worker process. Merging: several of a partition's
// position delete files become one, keeping only the rows that still name a live data
// file they apply to (rows for files that were rewritten or removed are dead weight every
// reader opens), deduplicated and sorted by file_path then pos as the Iceberg spec asks.
#pragma once

#include "common/result.h"
#include "maintenance/worker_protocol.h"

namespace tablemere::maint {

namespace protocol = maintenance::protocol;

// `plan` (protocol::RewriteDeletesPlan): a row (file_path, pos) of an input is kept when
// file_path (s3a:// and s3n:// read as s3://) is a live file whose sequence number is at
// most the input's: the spec's rule for which data a position delete applies to, so
// merging deletes of different ages never makes one apply to data it did not. Inputs
// with columns other than file_path and pos (the optional deleted `row`) are
// kInvalidInput. The answer's file has exact file_path bounds (readers match delete files
// to data files by them, so they are never truncated); with no row kept, no file is
// written and its record_count is 0.
Result<protocol::RewriteDeletesAnswer> RewritePositionDeletes(
    const protocol::RewriteDeletesPlan& plan);

// Re-aims position deletes written before a compaction at the files it wrote, for the
// commit rebase (protocol::TranslateDeletesPlan: an input delete file, or the data files a
// copy-on-write commit removed whole, and the compaction's row moves). A row naming a
// moved file is re-aimed at its place in the new file (RowMove::Moved), or left out when
// the compaction deleted that row already; other rows stay as they are. A removed file's
// every row is named (at its new place), which turns a copy-on-write removal into
// position deletes. A position beyond a file's rows, or a removed file that was not
// moved, is kInvalidInput. rows_dropped counts input rows left out.
Result<protocol::TranslateDeletesAnswer> TranslatePositionDeletes(
    const protocol::TranslateDeletesPlan& plan);

}  // namespace tablemere::maint
