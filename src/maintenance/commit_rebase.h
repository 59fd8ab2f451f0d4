// The commit rebase: a client's commit whose only failed requirement is its branch head,
// moved meanwhile by maintenance alone (compaction's `replace` snapshots), is re-applied
// on the current head instead of answered 409 — so maintenance is never the reason a
// user's commit fails (DuckDB 1.5 does not retry a failed commit at all).
//
// It is rebased only when that is safe (data files are never read; delete files may be):
// - the updates are add-snapshots, each followed by the set-snapshot-ref that points the
//   asserted branch at it, each snapshot the parent of the next (PyIceberg's overwrite
//   commits a delete and an append so); each is rebased on the one rebased before it;
// - every snapshot between the asserted head and the current one is maintenance's;
// - each manifest in the client's list is one of its parent's, a new one whose entries
//   are all ADDED, or a rewrite of some of its parent's (EXISTING and DELETED entries
//   only: how a copy-on-write delete or overwrite removes files); what those rewrites no
//   longer list is what the client removed;
// - a data file it removes whole (copy-on-write) that a compaction replaced is not removed
//   again: its rows, in the compacted file now, get position deletes at their new places
//   (and the client's rewritten file stays); a delete file maintenance removed or merged
//   may not be removed again;
// - its position delete files that may name a file the compactions replaced (their
//   target, from `referenced_data_file` or equal file_path bounds, is one, or cannot be
//   told) are re-aimed by the worker (`tablemere-maint translate-deletes`) at the rows'
//   new places, from where each compaction recorded it moved them (row_moves); rows the
//   compaction deleted already are left out. Without a record for every replaced data
//   file, or without a worker, such a commit is not rebased;
// - equality deletes rebase as they are: they apply to data older than them, and the
//   compacted files keep their inputs' starting sequence number;
// - format v3: deletion vectors of replaced files, and copy-on-write removals of them,
//   become one deletion vector per compacted file (read and written here, no worker); a
//   deletion vector the client removed that maintenance removed with its rewritten file
//   stays removed; the client's new data manifests get their first row ids anew from the
//   table's next-row-id (their rows' ids past maintenance's), as do rewritten manifests.
// The rebased snapshot keeps its id; it gets the next sequence number, the current head as
// parent, totals moved by what the compactions changed (and by what re-aiming changed), and
// a new manifest list: the client's new manifests (renumbered; those with re-aimed delete
// files rewritten), the position deletes standing for its copy-on-write removals, then
// the current head's manifests, those listing a file the client removed rewritten with
// that entry DELETED by its snapshot.
#pragma once

#include <optional>

#include "catalog/catalog_service.h"
#include "catalog/commit_rebaser.h"
#include "maintenance/catalog_names.h"
#include "maintenance/maintenance_worker.h"

namespace tablemere::maintenance {

// `current` is the table's metadata; `change` failed one of its requirements against it.
// Answers the rebased change, or nullopt when it cannot be rebased (the original failure
// stands; so it does when a manifest file cannot be read or the new list written).
// `moves` is where compactions recorded moving rows; `worker` re-aims delete files (none:
// commits with deletes of replaced files are not rebased); its deadline bounds all of its
// runs, however often the commit is retried.
Result<std::optional<TableChange>> RebaseOverMaintenance(WarehouseFiles& files, Random& random,
                                                         metastore::MaintenanceStore& moves,
                                                         const WorkerOptions* worker,
                                                         const metastore::Warehouse& w,
                                                         const Json& current,
                                                         const TableChange& change);

// The catalog's CommitRebaser: RebaseOverMaintenance with the server's files, the
// metastore's row moves and the maintenance worker (none: commits with deletes of
// replaced files are not rebased).
class WorkerRebaser final : public catalog::CommitRebaser {
 public:
  WorkerRebaser(WarehouseFiles& files, Random& random, metastore::MaintenanceStore& moves,
                std::optional<WorkerOptions> worker)
      : files_(files), random_(random), moves_(moves), worker_(std::move(worker)) {}
  std::chrono::milliseconds Budget() const override {
    return std::chrono::milliseconds(worker_ ? worker_->timeout_ms : 0);
  }
  Result<std::optional<TableChange>> Rebase(
      const metastore::Warehouse& w, const Json& current, const TableChange& change,
      std::chrono::steady_clock::time_point deadline) override;

 private:
  WarehouseFiles& files_;
  Random& random_;
  metastore::MaintenanceStore& moves_;
  std::optional<WorkerOptions> worker_;
};

}  // namespace tablemere::maintenance
