// The catalog's commit path asks maintenance, through this interface, whether a client
// commit that failed only its branch-head requirement can be re-applied on a head that
// maintenance moved (the rebase lives in src/maintenance/commit_rebase.*; the catalog
// includes nothing of that module). And the summary key that marks maintenance's own
// snapshots, which the catalog refuses in client commits.
#pragma once

#include <chrono>
#include <optional>

#include "catalog/catalog_support.h"

namespace tablemere::catalog {

struct TableChange;

// The summary key that marks a snapshot maintenance committed, naming the job (the commit
// rebase trusts it: client commits may not carry it).
inline constexpr char kMaintenanceSummaryKey[] = "tablemere.maintenance";

// kInvalidInput when one of a client commit's `updates` adds a snapshot carrying
// kMaintenanceSummaryKey: the rebase would take it for maintenance's own.
Result<void> RefuseMaintenanceMarks(const Json& updates);

class CommitRebaser {
 public:
  virtual ~CommitRebaser() = default;
  // How long all of one commit request's rebase work may take, however often the commit
  // is retried.
  virtual std::chrono::milliseconds Budget() const = 0;
  // `current` is the table's metadata; `change` failed one of its requirements against it.
  // The rebased change, or nullopt when it cannot be rebased (the failure stands). Work
  // past `deadline` is not started.
  virtual Result<std::optional<TableChange>> Rebase(
      const metastore::Warehouse& w, const Json& current, const TableChange& change,
      std::chrono::steady_clock::time_point deadline) = 0;
};

}  // namespace tablemere::catalog
