#include "iceberg/delete_index.h"

namespace tablemere::iceberg {
namespace {

constexpr int32_t kPathFieldIds[] = {2147483546, 2147483646};

}  // namespace

std::string PartitionKey(int32_t spec_id, const std::vector<std::optional<Literal>>& partition) {
  std::string key = std::to_string(spec_id) + "/";
  for (const auto& v : partition) {
    if (!v) {
      key += "n;";
      continue;
    }
    // The type's family and the value's single-value bytes, length-prefixed.
    const std::string bytes = v->IsNaN() ? "NaN" : ToBound(*v);
    key += "v" + std::to_string(IsIntegral(v->type.id) ? 0 : static_cast<int>(v->type.id)) + ":" +
           std::to_string(bytes.size()) + ":" + bytes + ";";
  }
  return key;
}

std::optional<PathBounds> PositionDeletePaths(const DataFile& file) {
  for (int32_t id : kPathFieldIds) {
    auto lo = file.lower_bounds.find(id), hi = file.upper_bounds.find(id);
    if (lo == file.lower_bounds.end() || hi == file.upper_bounds.end()) continue;
    return PathBounds{lo->second, hi->second};
  }
  return std::nullopt;
}

std::string PositionDeleteTarget(const DataFile& file) {
  if (file.referenced_data_file) return *file.referenced_data_file;
  auto range = PositionDeletePaths(file);
  return range && range->first == range->last ? range->first : "";
}

void DeleteIndex::Add(const ManifestEntry& entry, int32_t spec_id) {
  const DataFile& f = entry.file;
  Indexed d{&entry, "", std::nullopt};
  if (f.content == FileContent::kPositionDeletes) {
    std::string target = PositionDeleteTarget(f);
    if (!target.empty()) d.target = Canonical(target);
    if (auto paths = PositionDeletePaths(f)) {
      d.paths = PathBounds{Canonical(paths->first), Canonical(paths->last)};
    }
  }
  count_++;
  if (f.content == FileContent::kEqualityDeletes && f.partition.empty()) {
    global_.push_back(std::move(d));
    return;
  }
  by_key_[PartitionKey(spec_id, f.partition)].push_back(std::move(d));
}

bool DeleteApplies(FileContent content, int64_t delete_sequence, const std::string& target,
                   const std::optional<PathBounds>& paths, int64_t data_sequence,
                   const std::string& data_path) {
  if (content == FileContent::kEqualityDeletes) return delete_sequence > data_sequence;
  if (delete_sequence < data_sequence) return false;
  if (!target.empty()) return target == data_path;
  return !paths || (paths->first <= data_path && data_path <= paths->last);
}

bool DeleteIndex::Applies(const Indexed& d, const ManifestEntry& data,
                          const std::string& path) const {
  return DeleteApplies(d.entry->file.content, d.entry->sequence_number, d.target, d.paths,
                       data.sequence_number, path);
}

std::vector<const ManifestEntry*> DeleteIndex::For(const ManifestEntry& data,
                                                   int32_t spec_id) const {
  std::vector<const ManifestEntry*> out;
  if (count_ == 0) return out;
  const std::string path = Canonical(data.file.path);
  auto scoped = by_key_.find(PartitionKey(spec_id, data.file.partition));
  if (scoped != by_key_.end()) {
    for (const auto& d : scoped->second) {
      if (Applies(d, data, path)) out.push_back(d.entry);
    }
  }
  for (const auto& d : global_) {
    if (Applies(d, data, path)) out.push_back(d.entry);
  }
  return out;
}

}  // namespace tablemere::iceberg
