#include "maintenance/compaction_inputs.h"

#include "catalog/catalog_support.h"
#include "catalog/manifest_files.h"
#include "iceberg/delete_index.h"

namespace tablemere::maintenance::compaction {

using namespace snapshot_writer;  // NOLINT: the shared pieces of the maintenance commits

Inputs Inputs::Read(const std::vector<Manifest>& manifests, const Json& snapshots) {
  Inputs in;
  std::map<int64_t, int64_t> committed_ms;  // snapshot id -> its timestamp
  for (const auto& s : snapshots) {
    committed_ms[s.value("snapshot-id", int64_t{-1})] = s.value("timestamp-ms", int64_t{0});
  }
  auto added_ms = [&](int64_t snapshot_id) -> int64_t {
    auto at = committed_ms.find(snapshot_id);
    return at == committed_ms.end() ? 0 : at->second;
  };
  for (size_t mi = 0; mi < manifests.size(); mi++) {
    const Manifest& m = manifests[mi];
    const int spec = m.spec_id;
    const auto& entries = m.typed.entries;
    for (size_t i = 0; i < entries.size(); i++) {
      const iceberg::ManifestEntry& e = entries[i];
      if (!e.Live()) continue;
      const iceberg::DataFile& file = e.file;
      LiveEntry live;
      live.manifest = mi;
      live.entry = i;
      live.path = WarehouseFiles::Canonical(file.path);
      live.size = file.file_size_in_bytes;
      live.records = file.record_count;
      live.spec = spec;
      live.partition = file.partition;
      live.key = iceberg::PartitionKey(spec, live.partition);
      live.sequence = e.sequence_number;
      live.added_ms = added_ms(e.snapshot_id);
      live.parquet = file.FormatIs("PARQUET");
      if (file.content == iceberg::FileContent::kData) {
        in.live.push_back(LiveFile{std::move(live), file.first_row_id});
        continue;
      }
      DeleteFile d{std::move(live)};
      d.content = static_cast<int>(file.content);
      if (file.content == iceberg::FileContent::kPositionDeletes) {
        const std::string target = iceberg::PositionDeleteTarget(file);
        if (!target.empty()) d.target = WarehouseFiles::Canonical(target);
        if (auto paths = iceberg::PositionDeletePaths(file)) {
          d.paths = PathRange{WarehouseFiles::Canonical(paths->first),
                              WarehouseFiles::Canonical(paths->last)};
        }
      }
      d.equality_ids.assign(file.equality_ids.begin(), file.equality_ids.end());
      if (file.IsDeletionVector()) {
        d.deletion_vector = true;
        d.content_offset = file.content_offset.value_or(-1);
        d.content_size = file.content_size.value_or(-1);
      }
      in.deletes.push_back(std::move(d));
    }
    // The model of a new data manifest must be a data manifest: its list entry and header
    // carry the content (a delete manifest first in the list would list data as deletes).
    if (m.content == 0) in.data_model.emplace(spec, mi);
  }
  in.Index();
  return in;
}

Inputs Inputs::Of(std::vector<LiveFile> live, std::vector<DeleteFile> deletes) {
  Inputs in;
  in.live = std::move(live);
  in.deletes = std::move(deletes);
  in.Index();
  return in;
}

void Inputs::Index() {
  for (const auto& f : live) {
    files_by_key_[f.key].push_back(&f);
    file_by_path_.emplace(f.path, &f);
  }
  for (const auto& d : deletes) {
    if (d.Global()) {
      global_deletes_.push_back(&d);
    } else {
      deletes_by_key_[d.key].push_back(&d);
    }
    // The live files of another spec or partition it may name.
    if (d.content != 1) continue;
    std::vector<const LiveFile*> elsewhere;
    if (!d.target.empty()) {
      auto named = file_by_path_.find(d.target);
      if (named != file_by_path_.end() && named->second->key != d.key) {
        elsewhere.push_back(named->second);
      }
    } else if (d.paths) {
      for (auto it = file_by_path_.lower_bound(d.paths->first);
           it != file_by_path_.end() && it->first <= d.paths->last; ++it) {
        if (it->second->key != d.key) elsewhere.push_back(it->second);
      }
    }
    if (elsewhere.empty()) continue;
    misfiled_.insert(&d);
    for (const LiveFile* f : elsewhere) misfiled_targets_.insert(f->path);
  }
}

std::vector<const DeleteFile*> Inputs::DeletesOf(const LiveFile& f) const {
  std::vector<const DeleteFile*> out;
  auto scoped = deletes_by_key_.find(f.key);
  if (scoped != deletes_by_key_.end()) {
    for (const DeleteFile* d : scoped->second) {
      if (d->AppliesTo(f)) out.push_back(d);
    }
  }
  for (const DeleteFile* d : global_deletes_) {
    if (d->AppliesTo(f)) out.push_back(d);
  }
  return out;
}

bool Inputs::AppliesToAny(const DeleteFile& d,
                          const std::function<bool(const LiveFile&)>& counts) const {
  for (const LiveFile* f : FilesOf(d)) {
    if (!counts || counts(*f)) return true;
  }
  return false;
}

std::vector<const LiveFile*> Inputs::FilesOf(const DeleteFile& d) const {
  std::vector<const LiveFile*> out;
  if (d.content == 1 && !d.target.empty()) {
    auto named = file_by_path_.find(d.target);
    if (named != file_by_path_.end() && d.AppliesTo(*named->second)) out.push_back(named->second);
    return out;
  }
  if (d.Global()) {
    for (const auto& f : live) {
      if (d.AppliesTo(f)) out.push_back(&f);
    }
    return out;
  }
  auto scoped = files_by_key_.find(d.key);
  if (scoped == files_by_key_.end()) return out;
  for (const LiveFile* f : scoped->second) {
    if (d.AppliesTo(*f)) out.push_back(f);
  }
  return out;
}

}  // namespace tablemere::maintenance::compaction
