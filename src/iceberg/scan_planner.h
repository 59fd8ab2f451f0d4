// Server-side scan planning over a table's metadata and its manifests: which data files a
// scan must read, with the delete files that apply to each (delete_index.h) and the
// residual filter it still needs, pruned by the filter's projection onto each partition
// spec (the manifest list's summaries, each file's partition) and by each file's column
// metrics. Pure but for `ReadFile`, through which the caller supplies manifest lists and
// manifests.
//
// A large plan is split: Prepare lists the data manifests the scan needs and cuts them
// into groups of about `files_per_group` files; Plan plans one group. The groups are the
// same on every call with the same request (the snapshot is immutable), so a plan task
// names one by its index and any server can plan it later.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "avro/container.h"
#include "iceberg/evaluators.h"

namespace tablemere::iceberg {

// What a scan asks (the REST PlanTableScanRequest, typed).
struct ScanRequest {
  std::optional<int64_t> snapshot_id;
  std::optional<int64_t> start_snapshot_id, end_snapshot_id;  // an incremental append scan
  std::optional<std::vector<std::string>> select, stats_fields;
  nlohmann::json filter;  // null: every row
  bool case_sensitive = true;
  bool use_snapshot_schema = false;
  std::optional<int64_t> min_rows_requested;

  // From the request body. Errors: kInvalidInput naming the field.
  static Result<ScanRequest> FromJson(const nlohmann::json& body);
  nlohmann::json ToJson() const;
};

// One data file to read, its delete files (indices into ScanTasks::deletes) and what of
// the filter its rows still need.
struct FileScanTask {
  DataFile file;
  int32_t spec_id = 0;
  std::vector<size_t> deletes;
  ExpressionPtr residual;  // null without a filter
};

struct DeleteFileRef {
  DataFile file;
  int32_t spec_id = 0;
};

struct ScanTasks {
  std::vector<FileScanTask> tasks;
  std::vector<DeleteFileRef> deletes;
  // The columns whose metrics the answer carries (the request's stats-fields).
  std::vector<SchemaField> stats;
  // Counters, for tests and benchmarks.
  int64_t manifests_read = 0, manifests_skipped = 0, files_skipped = 0;
};

// Reads a manifest list or manifest by its location.
using ReadFile = std::function<Result<avro::Container>(const std::string& location)>;

class ScanPlanner {
 public:
  static constexpr int64_t kFilesPerGroup = 2000;

  // Resolves the snapshot (or the incremental range), the schema, binds the filter and
  // reads the manifest list(s). Errors: kInvalidInput for a filter or selected column the
  // schema does not have; kNotFound for an unknown snapshot.
  static Result<ScanPlanner> Prepare(const nlohmann::json& metadata, const ScanRequest& request,
                                     const ReadFile& read,
                                     int64_t files_per_group = kFilesPerGroup);

  // The snapshot the plan reads (the end snapshot of an incremental scan; -1 for a table
  // without one).
  int64_t snapshot_id() const { return snapshot_id_; }
  size_t groups() const { return groups_.size(); }
  // Plans group `index` (0 <= index < groups()).
  Result<ScanTasks> Plan(size_t index, const ReadFile& read) const;

 private:
  struct Listed {
    ManifestFile file;
    std::optional<int64_t> only_snapshot;  // incremental: only entries this snapshot added
  };
  int64_t snapshot_id_ = -1;
  std::vector<SchemaField> fields_;
  std::vector<SchemaField> stats_;
  ExpressionPtr filter_;  // bound, nots rewritten; true without a filter
  bool has_filter_ = false;
  std::map<int32_t, PartitionSpec> specs_;
  std::map<int32_t, ExpressionPtr> projected_;  // the filter projected onto each spec
  std::vector<std::vector<Listed>> groups_;
  std::vector<ManifestFile> delete_manifests_;
  int64_t manifests_skipped_ = 0;
};

}  // namespace tablemere::iceberg
