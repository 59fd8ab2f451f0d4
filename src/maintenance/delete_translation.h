// Re-aiming a client's position delete file at the files a compaction wrote (for the
// commit rebase, commit_rebase.h): the worker rewrites its rows by where the compaction
// recorded it moved them (`tablemere-maint translate-deletes`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "maintenance/catalog_names.h"
#include "maintenance/maintenance_worker.h"
#include "maintenance/snapshot_writer.h"

namespace tablemere::maintenance {

// `data_file` is the delete file as its manifest lists it; `moves` says where each
// replaced data file's rows went (table_compaction.cc). Answers the new file as a manifest
// lists it (uploaded under `location`/data/, recorded in `written`), or nullopt when the
// compaction had deleted every row it names already. A file whose rows do not add up, or a
// position beyond its data file, is an error: the commit is then not rebased.
Result<std::optional<iceberg::DataFile>> TranslateDeleteFile(
    WarehouseFiles& files, Random& random, const metastore::Warehouse& w,
    const WorkerOptions& worker, const std::string& location, const iceberg::DataFile& data_file,
    const protocol::RowMoves& moves, snapshot_writer::Written& written);

// A copy-on-write commit planned before a compaction removed `removed` (data files of one
// partition, `partition`) whole; their rows are in the files the compaction wrote now.
// Answers the position delete file naming each of those rows at its new place (uploaded,
// recorded in `written`), or nullopt when the compaction had deleted them all already.
Result<std::optional<iceberg::DataFile>> DeletesForRemovedFiles(
    WarehouseFiles& files, Random& random, const metastore::Warehouse& w,
    const WorkerOptions& worker, const std::string& location,
    const std::vector<std::string>& removed, const iceberg::PartitionTuple& partition,
    const protocol::RowMoves& moves, snapshot_writer::Written& written);

}  // namespace tablemere::maintenance
