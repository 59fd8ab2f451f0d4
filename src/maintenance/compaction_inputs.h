// What a compaction works on: the live data and delete files of a snapshot, read from its
// manifests, and which delete files apply to which data files by the spec's rules, indexed
// by spec and partition so matching them is not all deletes against all files.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catalog/manifest_files.h"
#include "iceberg/delete_index.h"
#include "maintenance/catalog_names.h"
#include "maintenance/snapshot_writer.h"

namespace tablemere::maintenance::compaction {

// A live file of a snapshot: where its manifest entry is and what it holds.
struct LiveEntry {
  size_t manifest = 0, entry = 0;
  std::string path;  // canonical (s3a:// and s3n:// as s3://)
  int64_t size = 0, records = 0;
  int spec = 0;
  iceberg::PartitionTuple partition;
  std::string key;       // iceberg::PartitionKey(spec, partition)
  int64_t sequence = 0;  // its data sequence number
  int64_t added_ms = 0;  // when the snapshot that added it was committed (0: expired)
  bool parquet = true;   // only Parquet files are rewritten
};

// A live data file.
struct LiveFile : LiveEntry {
  std::optional<int64_t> first_row_id;  // format v3: its rows' ids start here
};

// A live delete file: position deletes (content 1) or equality deletes (2).
struct DeleteFile : LiveEntry {
  int content = 1;
  std::string target;              // position deletes: the one data file, "" when unknown
  std::optional<PathRange> paths;  // position deletes: the bounds of the files they name
  std::vector<int> equality_ids;   // equality deletes: the fields they compare
  // A format v3 deletion vector: its blob's place in its Puffin file.
  bool deletion_vector = false;
  int64_t content_offset = 0, content_size = 0;

  // Equality deletes of an unpartitioned spec apply to every partition of every spec
  // (position deletes of one apply within that spec only, as Iceberg Java reads them).
  bool Global() const { return content == 2 && partition.empty(); }
  // The spec's rules (iceberg::DeleteApplies, as scan planning decides): a delete applies
  // within its spec and partition, or as above; position deletes to data no newer than
  // them (within their file_path bounds), equality deletes to data older than them.
  bool AppliesTo(const LiveFile& f) const {
    if (!Global() && key != f.key) return false;
    return iceberg::DeleteApplies(static_cast<iceberg::FileContent>(content), sequence, target,
                                  paths, f.sequence, f.path);
  }
};

// A snapshot's live files and the index between them. Built once; the vectors are not
// changed afterwards (the index points into them).
class Inputs {
 public:
  Inputs() = default;
  Inputs(Inputs&&) = default;  // the vectors' elements stay where they are
  Inputs(const Inputs&) = delete;
  Inputs& operator=(const Inputs&) = delete;

  std::vector<LiveFile> live;
  std::vector<DeleteFile> deletes;
  std::map<int, size_t> data_model;  // a data manifest of each spec

  // Reads the live entries of `manifests` (DELETED ones are history); `snapshots` gives
  // when each file was added.
  static Inputs Read(const std::vector<snapshot_writer::Manifest>& manifests,
                     const Json& snapshots);

  // Whether `d` is position deletes that may name a live data file of another spec or
  // partition: its target is one, or one is within its file_path bounds (DuckDB 1.5 files
  // the deletes of a file written before a partition spec change under the current spec
  // with a null partition). By the spec they do not apply to that file; PyIceberg 0.12 and
  // Iceberg Java 1.11 ignore them, other versions match them by path or refuse the scan,
  // and DuckDB applies them. Readers disagree, so neither they nor the files they may name
  // are rewritten, merged or removed.
  bool Misfiled(const DeleteFile& d) const { return misfiled_.count(&d) > 0; }
  // Whether a misfiled delete file names `f`.
  bool NamedByMisfiled(const LiveFile& f) const { return misfiled_targets_.count(f.path) > 0; }

  // Inputs of files already read (their `key`s set), indexed.
  static Inputs Of(std::vector<LiveFile> live, std::vector<DeleteFile> deletes);

  // The delete files that apply to `f`.
  std::vector<const DeleteFile*> DeletesOf(const LiveFile& f) const;
  // Whether `d` applies to a live file that `counts` accepts.
  bool AppliesToAny(const DeleteFile& d,
                    const std::function<bool(const LiveFile&)>& counts = nullptr) const;
  // The live files `d` applies to.
  std::vector<const LiveFile*> FilesOf(const DeleteFile& d) const;

 private:
  void Index();
  std::map<std::string, std::vector<const LiveFile*>> files_by_key_;
  std::map<std::string, std::vector<const DeleteFile*>> deletes_by_key_;
  std::map<std::string, const LiveFile*> file_by_path_;
  std::set<const DeleteFile*> misfiled_;
  std::set<std::string> misfiled_targets_;
  std::vector<const DeleteFile*> global_deletes_;
};

}  // namespace tablemere::maintenance::compaction
