// What the maintenance jobs that commit a new snapshot share (compaction, manifest
// rewriting): the loaded manifests of the current snapshot, manifest entries with their
// inherited fields made explicit, writing a manifest with its list record (counts,
// sequence numbers, partition summaries in Iceberg's single-value encoding), the files a
// job wrote (deleted unless its commit published them), and the reasons to skip.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "avro/container.h"
#include "catalog/catalog_service.h"
#include "iceberg/manifest.h"
#include "maintenance/catalog_names.h"
#include "maintenance/worker_protocol.h"

namespace tablemere::maintenance::snapshot_writer {

inline constexpr int64_t kStatusExisting = 0, kStatusAdded = 1, kStatusDeleted = 2;

// A reason not to run a job: answered as a skipped run, not an error.
Error Skip(const std::string& why);
bool IsSkip(const Error& e);

// Runs a job that answers `R` (which has a `reason`): a Skip becomes a result saying why,
// and metadata of the wrong shape a typed kInvalidInput, never an exception.
template <typename R, typename Job>
Result<R> RunJob(const Job& job) {
  try {
    Result<R> r = job();
    if (!r && IsSkip(r.error())) {
      R skipped;
      skipped.reason = r.error().message;
      return skipped;
    }
    return r;
  } catch (const Json::exception& e) {
    return Fail(ErrorCode::kInvalidInput, std::string("malformed table metadata: ") + e.what());
  }
}

// A table property as a positive integer, or `fallback`.
int64_t IntProperty(const Json& metadata, const char* name, int64_t fallback);

// One manifest of a snapshot, as the manifest list names it.
struct Manifest {
  avro::Value list_value;        // the manifest list's record, as the list has it
  iceberg::ManifestFile listed;  // the same record, typed
  iceberg::Manifest typed;       // its entries, typed, inherited fields explicit
  std::string path;
  int64_t sequence_number = 0, added_snapshot_id = -1;
  int spec_id = 0, content = 0;  // partition_spec_id; 0 data, 1 deletes
  avro::Container container;     // its schema, codec and metadata are a new manifest's model
  bool rewritten = false;
};

// A manifest list and every manifest it names, read (kInvalidInput for a file that is
// not a manifest list or manifest).
struct LoadedManifests {
  avro::Container list;
  std::vector<Manifest> manifests;
};
Result<LoadedManifests> LoadManifests(WarehouseFiles& files, const metastore::Warehouse& w,
                                      const std::string& list_location);

// Entry `index` of `m` (inherited fields explicit: snapshot id, sequence numbers, a v3
// data file's first row id, so a rewritten manifest means the same) with `status`; a
// DELETED one is deleted by `snapshot_id`.
iceberg::ManifestEntry Entry(const Manifest& m, size_t index, iceberg::EntryStatus status,
                             int64_t snapshot_id);

// A data file the worker wrote, with its metrics, as a manifest lists it (Parquet; the
// caller sets its content, path and partition).
iceberg::DataFile WrittenFile(const protocol::FileMetrics& written);

// Files a job wrote; deleted unless the commit published them (Keep).
class Written {
 public:
  Written(WarehouseFiles& files, const metastore::Warehouse& w) : files_(files), w_(w) {}
  ~Written();
  void Add(const std::string& location) { locations_.push_back(location); }
  void Keep() { keep_ = true; }

 private:
  WarehouseFiles& files_;
  const metastore::Warehouse& w_;
  std::vector<std::string> locations_;
  bool keep_ = false;
};

// Writes one manifest of `entries` (inherited fields explicit) in the Avro schema and
// with the file metadata of `model`, and answers its manifest list record: model's, with
// this manifest's path, counts, sequence numbers and partition summaries, and no first
// row id (CommitReplace assigns those). An entry that does not fit the schema is
// kInvalidInput.
Result<iceberg::ManifestFile> WriteManifest(WarehouseFiles& files, Random& random,
                                            const metastore::Warehouse& w,
                                            const std::string& location, const Manifest& model,
                                            const std::vector<iceberg::ManifestEntry>& entries,
                                            int64_t snapshot_id, int64_t sequence,
                                            Written& written);

// The table's current snapshot (one with a manifest list) and its location with one
// trailing slash; a Skip when the table has none.
struct Head {
  int64_t id = -1;
  Json snapshot;
  std::string location;
};
Result<Head> CurrentHead(const Json& metadata);

// Format v3 deletion vectors read from their Puffin files, each file read once.
class DeletionVectors {
 public:
  DeletionVectors(WarehouseFiles& files, const metastore::Warehouse& w) : files_(files), w_(w) {}
  // The positions the vector at [offset, offset + size) of Puffin file `path` deletes
  // from a data file of `rows` rows. Errors: kInvalidInput naming the file.
  Result<std::vector<int64_t>> Positions(const std::string& path, int64_t offset, int64_t size,
                                         int64_t rows);

 private:
  WarehouseFiles& files_;
  const metastore::Warehouse& w_;
  std::map<std::string, std::string> read_;  // path -> the file's bytes
};

// Format v3: gives each data manifest of `list` that has no first row id one, from `next`
// on, each taking its existing and added rows (as Iceberg Java's list writer does);
// answers the next unassigned id.
Result<int64_t> AssignFirstRowIds(avro::Container& list, int64_t next);

// A new snapshot id: random, positive.
int64_t NewSnapshotId(Random& random);

// What a maintenance job commits: a snapshot with `records` as its manifest list (in the
// schema, codec and metadata of `list`), replacing main's head `current` of `metadata`.
struct ReplaceSnapshot {
  int64_t snapshot_id = 0, sequence = 0;
  Json summary;  // with "operation"
};

// Writes the manifest list, then commits the snapshot asserting the table's uuid and that
// main is still `current` (main's retention settings kept). In format v3, the data
// manifests written anew get first row ids from the table's next-row-id on (as Iceberg
// Java assigns them: existing plus added rows each), and the snapshot its first-row-id
// and added-rows. A lost race is a Skip naming
// `job`; the job's files are left to `written`.
Result<void> CommitReplace(CatalogService& catalog, const Clock& clock, Random& random,
                           const CatalogPrincipal& principal, const metastore::Warehouse& w,
                           const TableIdent& ident, const Json& metadata, int64_t current,
                           const avro::Container& list, std::vector<avro::Value> records,
                           const ReplaceSnapshot& snapshot, const std::string& job,
                           Written& written);

}  // namespace tablemere::maintenance::snapshot_writer
