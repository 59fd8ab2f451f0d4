// Which delete files apply to which data files, by the spec's rules: a delete file
// applies within its partition spec and partition (equality deletes of an unpartitioned
// spec everywhere); position deletes to data files of a data sequence number no newer
// than theirs, only the file they name when they name one (referenced_data_file, a
// deletion vector's, or equal file_path bounds) and only files within their file_path
// bounds; equality deletes to strictly older data. Indexed by spec and partition, so
// matching is not every delete against every file. Pure.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "iceberg/manifest.h"

namespace tablemere::iceberg {

// A spec and partition tuple as one comparable key (null and NaN are values of their own).
std::string PartitionKey(int32_t spec_id, const std::vector<std::optional<Literal>>& partition);

// The file_path bounds of a position delete file (the reserved field 2147483546, or
// 2147483646 where DuckDB 1.5 keys them), when it has both.
struct PathBounds {
  std::string first, last;
};
std::optional<PathBounds> PositionDeletePaths(const DataFile& file);
// The one data file position deletes name: referenced_data_file, or equal path bounds;
// "" when they may name any file of their partition.
std::string PositionDeleteTarget(const DataFile& file);

// The spec's rule for a delete file and a data file of the same spec and partition (or a
// global equality delete file): position deletes apply to data no newer than them, only
// to the file they name when they name one, and only within their file_path bounds;
// equality deletes to strictly older data. Compaction and scan planning both decide by it.
bool DeleteApplies(FileContent content, int64_t delete_sequence, const std::string& target,
                   const std::optional<PathBounds>& paths, int64_t data_sequence,
                   const std::string& data_path);

class DeleteIndex {
 public:
  // `canonical` maps a path to the form paths compare in (s3a:// as s3://, say).
  explicit DeleteIndex(std::function<std::string(const std::string&)> canonical = nullptr)
      : canonical_(std::move(canonical)) {}

  // A live delete entry of a manifest of spec `spec_id`; it must outlive the index.
  void Add(const ManifestEntry& entry, int32_t spec_id);
  // The delete entries that apply to live data entry `data` of spec `spec_id`.
  std::vector<const ManifestEntry*> For(const ManifestEntry& data, int32_t spec_id) const;
  size_t size() const { return count_; }

 private:
  struct Indexed {
    const ManifestEntry* entry;
    std::string target;               // canonical, "" when any file
    std::optional<PathBounds> paths;  // canonical
  };
  std::string Canonical(const std::string& path) const {
    return canonical_ ? canonical_(path) : path;
  }
  bool Applies(const Indexed& d, const ManifestEntry& data, const std::string& path) const;

  std::function<std::string(const std::string&)> canonical_;
  std::map<std::string, std::vector<Indexed>> by_key_;
  std::vector<Indexed> global_;
  size_t count_ = 0;
};

}  // namespace tablemere::iceberg
