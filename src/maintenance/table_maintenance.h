// Table maintenance jobs the catalog runs on a table itself. Today: snapshot expiry with
// the deletion of exactly the files no retained snapshot reaches. A job commits through
// the same commit path as any client, as the warehouse's write identity, and only when
// the table has not moved since it planned: a job that loses a race is dropped (retried by
// the next run), never retried against a user's commit.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "catalog/catalog_service.h"
#include "iceberg/snapshot_expiry.h"
#include "maintenance/catalog_names.h"
#include "maintenance/compaction_budget.h"
#include "maintenance/manifest_rewrite.h"
#include "maintenance/table_compaction.h"

namespace tablemere::maintenance {

struct ExpireResult {
  bool ran = false;    // false: skipped, `reason` says why
  std::string reason;  // "" when it ran
  int snapshots_before = 0;
  int snapshots_expired = 0;
  int files_deleted = 0;
  int files_missing = 0;  // unreachable files already gone
};

struct OrphanResult {
  bool ran = false;
  std::string reason;
  int files_listed = 0;
  int orphans_found = 0;    // below the table location, referenced by no metadata
  int orphans_deleted = 0;  // of those, older than the grace period
  int64_t bytes_deleted = 0;
  // Unreferenced for less than the grace period (perhaps a write in flight): kept in their
  // noncurrent stage, which usage does not count.
  int orphans_kept_young = 0;
  int64_t noncurrent_bytes = 0;
  int files_nested = 0;  // inside another table's or view's location: never touched
};

// Each job's result as the operator route and GET /v1/table show it.
Json ToJson(const ExpireResult& r);
Json ToJson(const OrphanResult& r);
Json ToJson(const CompactResult& r);
Json ToJson(const ManifestRewriteResult& r);

// A table's visit after client commits: {"warehouse_id", "namespace": [...], "table"}.
inline constexpr char kMaintainTableTask[] = "maintain_table";

// How long a compaction's hold on the shared budget lasts unless renewed (a running one
// renews it every third of that): another server waits at most this long after the
// holder died.
inline constexpr int64_t kCompactionLeaseMs = 60 * 1000;

struct MaintenanceOptions {
  iceberg::ExpiryPolicy expiry;
  // Orphans younger than this stay: a client may be writing files it has not committed.
  int64_t orphan_grace_ms = 3LL * 24 * 3600 * 1000;
  CompactionOptions compaction;
  int64_t compaction_bytes_per_hour = 8LL << 30;
  int64_t sweep_interval_ms = 3'600'000;  // 0: no sweep (then nothing is ever "due")
  // No other server shares the metastore (the embedded one): a compaction budget held by
  // another server's holder is a killed process's.
  bool sole_server = true;
  // This server's name across its restarts (unique among live servers; "" for none): a
  // compaction budget an earlier run of it held is a killed process's.
  std::string server_name;
};

class TableMaintenance {
 public:
  TableMaintenance(CatalogService& catalog, const Clock& clock, Random& random,
                   MaintenanceOptions options)
      : catalog_(catalog),
        clock_(clock),
        random_(random),
        options_(std::move(options)),
        budget_(catalog.metastore().shared_values(), clock, {options_.server_name, random.Uuid()},
                options_.compaction_bytes_per_hour, kCompactionLeaseMs, options_.sole_server),
        next_sweep_ms_(clock.NowMillis() + options_.sweep_interval_ms) {}
  const MaintenanceOptions& options() const { return options_; }

  // Expires the table's snapshots by the policy (and its properties), commits the
  // removal, then deletes the manifest lists, manifests and data and delete files only
  // the expired snapshots reached. Errors: the catalog's (kNotFound for the table), and
  // kInvalidInput for metadata files that cannot be read (nothing is deleted then).
  Result<ExpireResult> Expire(const metastore::Warehouse& w, const TableIdent& ident);

  // Deletes the files below the table's location that no metadata references (no
  // metadata.json of its log, no snapshot's manifest list, manifest, data or delete file,
  // no statistics file) and that runs have found unreferenced for `grace_ms`; until then
  // they are noncurrent (kept, recorded in the metastore, left out of usage). The location is
  // listed before the references are read; files inside another entry's location (a nested
  // namespace's tables) are never candidates; paths compare in one spelling (s3a:// is s3://).
  Result<OrphanResult> Orphans(const metastore::Warehouse& w, const TableIdent& ident,
                               int64_t grace_ms);

  // Rewrites the table's small data files (see table_compaction.h). One compaction runs at
  // a time, and all of them together read at most `compaction_bytes_per_hour` an hour.
  // `sweep`: the periodic sweep's run, which leaves recently written partitions alone.
  Result<CompactResult> Compact(const metastore::Warehouse& w, const TableIdent& ident,
                                bool sweep = false);

  // The table's maintenance state: the last run of each job (when, and its result) and
  // when the sweep is next due to visit it. `table_uuid` tells a table from an earlier
  // one of the same name.
  Result<Json> Status(const metastore::Warehouse& w, const TableIdent& ident,
                      const std::string& table_uuid);

  // Merges each spec's manifests into one (see manifest_rewrite.h).
  Result<ManifestRewriteResult> RewriteManifests(const metastore::Warehouse& w,
                                                 const TableIdent& ident, bool sweep = false);

  struct SweepResult {
    int tables = 0, compacted = 0, expired_snapshots = 0, files_deleted = 0, failures = 0;
  };
  // A client committed to the table (CatalogService's commit observer). The table is
  // visited (compact, rewrite manifests, expire) once its writes settle: when no commit
  // has come for the quiet period, or three quiet periods after the first commit since
  // its last visit, however busy it is. Through the task queue, so a restart or another
  // replica still makes the visit; one pending visit per table across every replica
  // (kept in the metastore).
  // Never fails or slows a commit beyond queueing that task.
  void NoteCommit(const metastore::Warehouse& w, const TableIdent& ident);

  // Makes a queued visit (kMaintainTableTask's payload), or queues it again for when the
  // table's writes will have settled. A table or warehouse that is gone is no error.
  Result<void> RunQueued(const std::string& payload_json);

  // Compacts every table of every warehouse, expires its snapshots, then removes its
  // orphans older than the grace period. A table that fails is counted
  // and skipped (it is tried again by the next sweep); only a failure to list warehouses is an
  // error.
  Result<SweepResult> SweepAll();

 private:
  // Keeps a job's result as the table's last run of it (best effort: a failure to record
  // never fails the job).
  void Record(const metastore::Warehouse& w, const TableIdent& ident, const std::string& job,
              Json result);

  CatalogService& catalog_;
  const Clock& clock_;
  Random& random_;
  MaintenanceOptions options_;
  std::mutex worker_mu_;                // one compaction at a time in this server
  CompactionBudget budget_;             // and one across servers, within the hour's bytes
  std::atomic<int64_t> next_sweep_ms_;  // when the periodic sweep next starts
  // The pending visits (kept in the metastore, shared by every server) as this server last
  // wrote them, by visit key, with when: commits in between need not write again.
  struct Noted {
    metastore::PendingVisit visit;
    int64_t written_ms = 0;
  };
  std::mutex noted_mu_;
  std::map<std::string, Noted> noted_;
  int64_t VisitDue(const metastore::PendingVisit& p) const;
};

}  // namespace tablemere::maintenance
