#include "maintenance/commit_rebase.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "avro/container.h"
#include "catalog/manifest_files.h"
#include "common/strings.h"
#include "iceberg/deletion_vector.h"
#include "iceberg/table_metadata.h"
#include "maintenance/compaction_inputs.h"
#include "maintenance/delete_translation.h"
#include "maintenance/snapshot_writer.h"

namespace tablemere::maintenance {
namespace {

using namespace snapshot_writer;  // NOLINT: manifests read and written as maintenance does

using iceberg::FindSnapshot;
using iceberg::IntMember;
// Calls `visit` with each live entry of `m` (inherited fields explicit) and its index.
template <typename Visit>
void ForLiveEntries(const Manifest& m, const Visit& visit) {
  for (size_t i = 0; i < m.typed.entries.size(); i++) {
    if (m.typed.entries[i].Live()) visit(m.typed.entries[i], i);
  }
}

// What identifies a live entry: its file's path, and for a deletion vector also its
// blob's offset (one Puffin file holds the vectors of many data files).
std::string PathOf(const iceberg::DataFile& file) {
  std::string key = WarehouseFiles::Canonical(file.path);
  if (file.IsDeletionVector() && file.content_offset) {
    key += "#" + std::to_string(*file.content_offset);
  }
  return key;
}

// The one data file position deletes name (canonical), or "" when it cannot be told.
std::string TargetOf(const iceberg::DataFile& file) {
  const std::string target = iceberg::PositionDeleteTarget(file);
  return target.empty() ? target : WarehouseFiles::Canonical(target);
}

// Moves each count of `summary` (strings, as Iceberg writes them) that `deltas` names. A
// total the summary lacks stays unknown; a count of what the snapshot itself changed
// ("added-…", "deleted-…", "removed-…") is written as Iceberg does, only when not zero.
void MoveCounts(Json& summary, std::initializer_list<std::pair<const char*, int64_t>> deltas) {
  if (!summary.is_object()) return;
  for (const auto& [key, delta] : deltas) {
    if (delta == 0) continue;
    const bool total = std::string_view(key).starts_with("total-");
    const std::optional<int64_t> n = iceberg::SummaryCount(summary, key);
    if (summary.contains(key)) {
      if (!n) continue;  // not a count: left as the client wrote it
    } else if (total || delta < 0) {
      continue;  // an unknown total stays unknown; a count the client did not make, unmade
    }
    const int64_t moved = n.value_or(0) + delta;
    if (!total && moved == 0) {
      summary.erase(key);
    } else {
      summary[key] = std::to_string(moved);
    }
  }
}

// The moves of `paths` only: what one worker run needs of them.
protocol::RowMoves MovesOf(const protocol::RowMoves& moves, const std::vector<std::string>& paths) {
  protocol::RowMoves out;
  for (const auto& path : paths) {
    auto it = moves.find(path);
    if (it != moves.end()) out.insert(*it);
  }
  return out;
}

// Moves the totals of `summary`, planned on a snapshot summarised by `before`, by what
// changed between that and `after`.
void MoveTotals(Json& summary, const Json& before, const Json& after) {
  if (!summary.is_object()) return;
  for (auto& [key, value] : summary.items()) {
    if (!key.starts_with("total-") || !value.is_string()) continue;
    auto mine = ParseInt(value.get<std::string>());
    auto was = iceberg::SummaryCount(before, key), is = iceberg::SummaryCount(after, key);
    if (mine && was && is) value = std::to_string(*mine + (*is - *was));
  }
}

// The model of a new delete manifest of `spec`: a delete manifest of that spec in the
// first of `loaded` that has one, or else a data manifest of it made one (the v2 entry
// schema is the same; the content is in the list record and the file's metadata).
std::optional<Manifest> DeleteManifestModel(int spec,
                                            std::initializer_list<const LoadedManifests*> loaded) {
  std::optional<Manifest> model;
  for (const LoadedManifests* l : loaded) {
    for (const auto& m : l->manifests) {
      if (m.spec_id != spec) continue;
      if (m.content == 1) return m;
      if (!model) model = m;
    }
  }
  if (model) {
    model->content = 1;
    model->listed.content = iceberg::ManifestContent::kDeletes;
    model->container.metadata["content"] = "deletes";
  }
  return model;
}

// What every step of a rebase shares.
struct Context {
  WarehouseFiles& files;
  Random& random;
  metastore::MaintenanceStore& store;
  const WorkerOptions* worker;
  const metastore::Warehouse& w;
  std::set<int64_t> maintenance;  // the maintenance snapshots the client did not see
  std::string location;           // the table's, without a trailing slash
  std::string table_uuid;
  int format = 2;
  int64_t next_row_id = 0;  // format v3: where the next rebased snapshot's row ids start
};

// Re-applies one client snapshot, planned on `base`, on `now` (the branch head, or the
// client's previous snapshot already rebased) with sequence number `sequence`: answers the
// rebased snapshot (its new manifest list written), or nullopt when it cannot be rebased.
Result<std::optional<Json>> RebaseSnapshot(Context& ctx, const Json& base, const Json& now,
                                           const Json& snapshot, int64_t sequence) {
  const std::optional<Json> no;
  WarehouseFiles& files = ctx.files;
  Random& random = ctx.random;
  metastore::MaintenanceStore& store = ctx.store;
  const WorkerOptions* worker = ctx.worker;
  const metastore::Warehouse& w = ctx.w;
  const std::set<int64_t>& maintenance = ctx.maintenance;
  const std::string& location = ctx.location;
  const std::optional<int64_t> head_id = IntMember(now, "snapshot-id");
  if (!head_id || !snapshot.contains("manifest-list") || !base.contains("manifest-list") ||
      !now.contains("manifest-list")) {
    return no;
  }
  const int64_t head = *head_id;
  TM_ASSIGN(LoadedManifests parent, LoadManifests(files, w, base["manifest-list"]));
  TM_ASSIGN(LoadedManifests head_manifests, LoadManifests(files, w, now["manifest-list"]));
  TM_ASSIGN(LoadedManifests client, LoadManifests(files, w, snapshot["manifest-list"]));
  const std::optional<int64_t> client_id = IntMember(snapshot, "snapshot-id");
  if (!client_id) return no;

  // The client's manifests: its parent's, carried as they are; new ones of ADDED entries
  // only; and rewrites of some of its parent's (EXISTING and DELETED entries only), which
  // is how a copy-on-write commit removes files. Anything else is not rebased.
  std::set<std::string> parent_paths;
  for (const auto& m : parent.manifests) parent_paths.insert(m.path);
  std::set<std::string> carried, kept_by_rewrites;
  std::vector<const Manifest*> added_manifests;
  for (const auto& m : client.manifests) {
    if (parent_paths.count(m.path)) {
      carried.insert(m.path);
      continue;
    }
    bool any_added = false, any_other = false;
    for (const auto& e : m.typed.entries) {
      if (e.status == iceberg::EntryStatus::kAdded) {
        any_added = true;
      } else {
        any_other = true;
        if (e.status == iceberg::EntryStatus::kExisting) kept_by_rewrites.insert(PathOf(e.file));
      }
    }
    if (any_added && any_other) return no;
    if (any_added) added_manifests.push_back(&m);
  }
  // What the client removed: files live in the parent manifests it did not carry that its
  // rewrites no longer list. Its rewrites keep only files those manifests held.
  std::set<std::string> removed_by_client, rewritten_live;
  for (const auto& m : parent.manifests) {
    if (carried.count(m.path)) continue;
    ForLiveEntries(m, [&](const iceberg::ManifestEntry& e, size_t) {
      const std::string path = PathOf(e.file);
      rewritten_live.insert(path);
      if (!kept_by_rewrites.count(path)) removed_by_client.insert(path);
    });
  }
  for (const auto& path : kept_by_rewrites) {
    if (!rewritten_live.count(path)) return no;
  }
  // The files maintenance removed: live at the client's parent, not at the head (only
  // maintenance committed in between; its DELETED entries may be gone already, dropped
  // by a manifest rewrite). The client may neither remove them again nor aim a position
  // delete at them.
  std::set<std::string> removed, live_at_head;
  struct RemovedData {
    int spec = 0;
    iceberg::PartitionTuple partition;
    int64_t records = 0, bytes = 0;
  };
  std::map<std::string, RemovedData> removed_data;
  std::map<std::string, std::string> removed_vector_targets;  // deletion vector -> its file
  struct LiveData {
    int spec = 0;
    iceberg::PartitionTuple partition;
  };
  std::map<std::string, LiveData> head_data;  // the head's live data files
  for (const auto& m : head_manifests.manifests) {
    ForLiveEntries(m, [&](const iceberg::ManifestEntry& e, size_t) {
      live_at_head.insert(PathOf(e.file));
      if (e.file.content == iceberg::FileContent::kData) {
        head_data[PathOf(e.file)] = {m.spec_id, e.file.partition};
      }
    });
  }
  for (const auto& m : parent.manifests) {
    ForLiveEntries(m, [&](const iceberg::ManifestEntry& e, size_t) {
      const iceberg::DataFile& file = e.file;
      const std::string path = PathOf(file);
      if (live_at_head.count(path)) return;
      removed.insert(path);
      if (file.content == iceberg::FileContent::kData) {
        removed_data[path] = {m.spec_id, file.partition, file.record_count,
                              file.file_size_in_bytes};
      } else if (file.IsDeletionVector() && file.referenced_data_file) {
        removed_vector_targets[path] = WarehouseFiles::Canonical(*file.referenced_data_file);
      }
    });
  }
  // A data file the client removed whole (copy-on-write) that a compaction replaced: its
  // rows are in the compacted file, so the removal becomes position deletes of those rows
  // there, one delete file per partition. A delete file maintenance removed is not followed.
  // (spec, partition key) -> (partition, the files)
  std::map<std::pair<int, std::string>,
           std::pair<iceberg::PartitionTuple, std::vector<std::string>>>
      cow_moved;
  struct {
    int64_t files = 0, records = 0, bytes = 0;
  } cow_removed;
  for (auto it = removed_by_client.begin(); it != removed_by_client.end();) {
    if (!removed.count(*it)) {
      ++it;
      continue;
    }
    auto data = removed_data.find(*it);
    if (data == removed_data.end()) {
      // A deletion vector maintenance removed because it rewrote the file it applies to
      // (its rows deleted there already): the client removed it to replace it with one it
      // merged it into, re-aimed below (the rows deleted already left out), or with the
      // file. Either way it is gone at the head already. Any other removal of a file
      // maintenance removed is not rebased.
      auto vector = removed_vector_targets.find(*it);
      if (vector == removed_vector_targets.end() || !removed_data.count(vector->second)) {
        return no;
      }
      it = removed_by_client.erase(it);
      continue;
    }
    const RemovedData& d = data->second;
    auto& group = cow_moved[{d.spec, iceberg::PartitionKey(d.spec, d.partition)}];
    group.first = d.partition;
    group.second.push_back(*it);
    // The client's summary counted it removed; the compaction had replaced it already.
    cow_removed.files++;
    cow_removed.records += d.records;
    cow_removed.bytes += d.bytes;
    it = removed_by_client.erase(it);
  }
  // The client's position delete files that may name a replaced data file (it is their
  // target, or their target cannot be told) are re-aimed at where the rows went.
  std::set<std::pair<const Manifest*, size_t>> to_translate;
  if (!removed_data.empty()) {
    for (const Manifest* m : added_manifests) {
      for (size_t i = 0; i < m->typed.entries.size(); i++) {
        const iceberg::DataFile& file = m->typed.entries[i].file;
        if (file.content != iceberg::FileContent::kPositionDeletes) continue;
        const std::string target = TargetOf(file);
        if (target.empty() || removed.count(target)) to_translate.insert({m, i});
      }
    }
  }
  // Where every replaced data file's rows went, to a file live at the head (one compaction
  // between; a file compacted twice since is not followed).
  protocol::RowMoves moves;
  std::vector<std::string> replaced_paths;  // the data files maintenance replaced
  for (const auto& [path, where] : removed_data) replaced_paths.push_back(path);
  if (!to_translate.empty() || !cow_moved.empty()) {
    if (!worker) return no;
    for (int64_t id : maintenance) {
      TM_ASSIGN(std::optional<std::string> saved, store.RowMoves(w.id.str(), ctx.table_uuid, id));
      if (!saved) continue;
      auto parsed = protocol::Decode<protocol::RowMoves>(Json::parse(*saved, nullptr, false));
      if (!parsed) return no;
      for (auto& [from, move] : *parsed) moves[from] = std::move(move);
    }
    for (const auto& [path, where] : removed_data) {
      auto move = moves.find(path);
      if (move == moves.end() || !live_at_head.count(WarehouseFiles::Canonical(move->second.to))) {
        return no;
      }
    }
    moves = MovesOf(moves, replaced_paths);  // nothing of other files, nor other tables
  }

  // The rebased manifest list: the client's new manifests, renumbered, then the head's,
  // where a manifest listing a file the client removed is rewritten with that entry
  // DELETED by the client's snapshot.
  const int64_t old_sequence = IntMember(snapshot, "sequence-number").value_or(0);
  Written written(files, w);
  // The client's new manifests holding delete files to re-aim, rewritten with the new ones
  // (a delete file whose every row the compaction deleted already is left out).
  // -> list record, or none
  std::map<const Manifest*, std::optional<iceberg::ManifestFile>> rewritten_added;
  struct {
    int64_t files = 0, records = 0, bytes = 0;
  } translated_delta;
  // Format v3: the positions to delete in each file a compaction wrote, from the client's
  // deletion vectors and copy-on-write removals, written as one deletion vector per file
  // (a data file has at most one).
  struct VectorOf {
    std::string to;  // as the manifest names it
    std::vector<int64_t> positions;
  };
  std::map<std::string, VectorOf> vectors;  // canonical compacted file -> its deletes
  auto aim_at_moved = [&](const std::string& from, const std::vector<int64_t>& positions) {
    const protocol::RowMove& move = moves.at(from);
    VectorOf& v = vectors[WarehouseFiles::Canonical(move.to)];
    v.to = move.to;
    for (int64_t p : positions) {
      if (auto moved = move.Moved(p)) v.positions.push_back(*moved);
    }
  };
  DeletionVectors client_vectors(files, w);
  auto added_entry = [&](iceberg::DataFile file) {
    iceberg::ManifestEntry e;
    e.status = iceberg::EntryStatus::kAdded;
    e.snapshot_id = *client_id;
    e.sequence_number = e.file_sequence_number = sequence;
    e.file = std::move(file);
    return e;
  };
  for (const Manifest* m : added_manifests) {
    bool any = false;
    for (size_t i = 0; i < m->container.records.size(); i++) any |= to_translate.count({m, i}) > 0;
    if (!any) continue;
    std::vector<iceberg::ManifestEntry> entries;
    for (size_t i = 0; i < m->typed.entries.size(); i++) {
      iceberg::ManifestEntry e = m->typed.entries[i];
      e.sequence_number = e.file_sequence_number = sequence;
      if (to_translate.count({m, i}) && e.file.IsDeletionVector()) {
        // Format v3: its positions join the compacted file's one deletion vector.
        const std::string target = TargetOf(e.file);
        if (target.empty() || !moves.count(target)) return no;
        TM_ASSIGN(auto positions, client_vectors.Positions(
                                      e.file.path, e.file.content_offset.value_or(-1),
                                      e.file.content_size.value_or(-1), moves.at(target).rows));
        aim_at_moved(target, positions);
        translated_delta.files--;
        translated_delta.records -= e.file.record_count;
        translated_delta.bytes -= e.file.file_size_in_bytes;
        continue;
      }
      if (to_translate.count({m, i})) {
        const iceberg::DataFile before = e.file;
        // Only its target's moves, when it has one.
        const std::string target = TargetOf(before);
        const protocol::RowMoves needed = target.empty() ? moves : MovesOf(moves, {target});
        TM_ASSIGN(std::optional<iceberg::DataFile> after,
                  TranslateDeleteFile(files, random, w, *worker, location + "/", before, needed,
                                      written));
        if (!after) {
          translated_delta.files--;
          translated_delta.records -= before.record_count;
          translated_delta.bytes -= before.file_size_in_bytes;
          continue;
        }
        translated_delta.records += after->record_count - before.record_count;
        translated_delta.bytes += after->file_size_in_bytes - before.file_size_in_bytes;
        e.file = std::move(*after);
      }
      entries.push_back(std::move(e));
    }
    if (entries.empty()) {
      rewritten_added[m] = std::nullopt;
      continue;
    }
    TM_ASSIGN(iceberg::ManifestFile record, WriteManifest(files, random, w, location + "/", *m,
                                                          entries, *client_id, sequence, written));
    rewritten_added[m] = std::move(record);
  }
  // The position deletes that stand for the client's copy-on-write removals, a manifest
  // per spec, modelled on a delete manifest of that spec (or a data manifest made one).
  std::vector<iceberg::ManifestFile> cow_records;
  std::map<int, std::vector<iceberg::ManifestEntry>> cow_entries;
  for (const auto& [key, group] : cow_moved) {
    if (ctx.format >= 3) {
      // Every row of the removed files, deleted where the compaction put it.
      for (const std::string& from : group.second) {
        std::vector<int64_t> all(static_cast<size_t>(moves.at(from).rows));
        for (size_t p = 0; p < all.size(); p++) all[p] = static_cast<int64_t>(p);
        aim_at_moved(from, all);
      }
      continue;
    }
    TM_ASSIGN(std::optional<iceberg::DataFile> file,
              DeletesForRemovedFiles(files, random, w, *worker, location + "/", group.second,
                                     group.first, MovesOf(moves, group.second), written));
    if (!file) continue;  // the compaction had deleted every row already
    translated_delta.files++;
    translated_delta.records += file->record_count;
    translated_delta.bytes += file->file_size_in_bytes;
    cow_entries[key.first].push_back(added_entry(std::move(*file)));
  }
  std::erase_if(vectors, [](const auto& v) { return v.second.positions.empty(); });
  if (!vectors.empty()) {
    std::vector<iceberg::DeletionVectorBlob> blobs;
    for (const auto& [key, v] : vectors) blobs.push_back({v.to, v.positions});
    TM_ASSIGN(iceberg::PuffinFile puffin,
              iceberg::WriteDeletionVectorPuffin(blobs, "tablemere commit rebase"));
    const std::string path = location + "/data/rebased-" + random.Uuid() + "-deletes.puffin";
    written.Add(path);
    TM_TRY(files.WriteBytes(w, path, puffin.bytes, "application/octet-stream"));
    translated_delta.bytes += static_cast<int64_t>(puffin.bytes.size());
    size_t b = 0;
    for (const auto& [key, v] : vectors) {
      const iceberg::WrittenBlob& blob = puffin.blobs[b++];
      auto target = head_data.find(key);
      if (target == head_data.end()) return no;
      translated_delta.files++;
      translated_delta.records += blob.cardinality;
      iceberg::DataFile file;
      file.content = iceberg::FileContent::kPositionDeletes;
      file.path = path;
      file.format = "PUFFIN";
      file.partition = target->second.partition;
      file.record_count = blob.cardinality;
      file.file_size_in_bytes = static_cast<int64_t>(puffin.bytes.size());
      file.referenced_data_file = v.to;
      file.content_offset = blob.offset;
      file.content_size = blob.length;
      cow_entries[target->second.spec].push_back(added_entry(std::move(file)));
    }
  }
  for (const auto& [spec, entries] : cow_entries) {
    std::optional<Manifest> model = DeleteManifestModel(spec, {&head_manifests, &client, &parent});
    if (!model) return no;
    TM_ASSIGN(iceberg::ManifestFile record, WriteManifest(files, random, w, location + "/", *model,
                                                          entries, *client_id, sequence, written));
    cow_records.push_back(std::move(record));
  }
  const avro::Container& client_list = client.list;
  avro::Container list;
  list.schema = client_list.schema;
  list.codec = client_list.codec;
  list.metadata = client_list.metadata;
  list.metadata["parent-snapshot-id"] = std::to_string(head);
  list.metadata["sequence-number"] = std::to_string(sequence);
  // Records in the client's list schema (another writer's field set).
  auto add_record = [&](const iceberg::ManifestFile& record) {
    auto v = iceberg::ToAvro(*list.schema.root, record);
    if (!v) return false;
    list.records.push_back(std::move(*v));
    return true;
  };
  for (const auto& record : cow_records) {
    if (!add_record(record)) return no;
  }
  for (const Manifest* added_manifest : added_manifests) {
    auto rewritten = rewritten_added.find(added_manifest);
    if (rewritten != rewritten_added.end()) {
      if (rewritten->second && !add_record(*rewritten->second)) return no;
      continue;
    }
    iceberg::ManifestFile m = added_manifest->listed;
    if (m.sequence_number == old_sequence) m.sequence_number = sequence;
    if (m.min_sequence_number == old_sequence) m.min_sequence_number = sequence;
    // Format v3: its rows' ids are assigned anew below, past the maintenance snapshots'.
    if (m.content == iceberg::ManifestContent::kData) m.first_row_id.reset();
    if (!add_record(m)) return no;
  }
  size_t removed_found = 0;
  for (const auto& m : head_manifests.manifests) {
    bool touched = false;
    ForLiveEntries(m, [&](const iceberg::ManifestEntry& e, size_t) {
      touched = touched || removed_by_client.count(PathOf(e.file));
    });
    iceberg::ManifestFile record = m.listed;
    if (touched) {
      std::vector<iceberg::ManifestEntry> entries;
      ForLiveEntries(m, [&](const iceberg::ManifestEntry& e, size_t i) {
        const bool gone = removed_by_client.count(PathOf(e.file)) > 0;
        removed_found += gone;
        entries.push_back(
            Entry(m, i, gone ? iceberg::EntryStatus::kDeleted : iceberg::EntryStatus::kExisting,
                  *client_id));
      });
      TM_ASSIGN(record, WriteManifest(files, random, w, location + "/", m, entries, *client_id,
                                      sequence, written));
    }
    if (!add_record(record)) return no;
  }
  if (removed_found != removed_by_client.size()) return no;
  std::optional<int64_t> first_row_id, added_rows;
  if (ctx.format >= 3) {
    first_row_id = ctx.next_row_id;
    TM_ASSIGN(ctx.next_row_id, AssignFirstRowIds(list, *first_row_id));
    added_rows = ctx.next_row_id - *first_row_id;
    list.metadata["first-row-id"] = std::to_string(*first_row_id);
  }
  TM_ASSIGN(std::string bytes, avro::WriteContainer(list, random.Bytes(16)));
  const std::string list_path = location + "/metadata/snap-" +
                                std::to_string(IntMember(snapshot, "snapshot-id").value_or(0)) +
                                "-rebased-" + random.Uuid() + ".avro";
  TM_TRY(files.WriteBytes(w, list_path, bytes, "application/octet-stream"));
  // Kept even if the commit then loses a race: orphan cleanup takes what it never named.
  written.Keep();

  Json rebased = snapshot;
  rebased["parent-snapshot-id"] = head;
  rebased["sequence-number"] = sequence;
  // Never older than its new parent: readers order snapshots by time (the snapshot log
  // must be, and DuckDB reads the newest), and a client stamps its snapshot when it plans.
  const int64_t head_ms = IntMember(now, "timestamp-ms").value_or(0);
  if (IntMember(snapshot, "timestamp-ms").value_or(0) <= head_ms) {
    rebased["timestamp-ms"] = head_ms + 1;
  }
  rebased["manifest-list"] = list_path;
  if (first_row_id) {
    rebased["first-row-id"] = *first_row_id;
    rebased["added-rows"] = *added_rows;
  }
  // Totals move by what the compactions changed between the two heads, and by what
  // re-aiming the client's deletes changed.
  if (rebased.contains("summary")) {
    Json& summary = rebased["summary"];
    MoveTotals(summary, base.value("summary", Json::object()),
               now.value("summary", Json::object()));
    MoveCounts(summary, {{"added-delete-files", translated_delta.files},
                         {"added-position-delete-files", translated_delta.files},
                         {"added-position-deletes", translated_delta.records},
                         {"added-files-size", translated_delta.bytes},
                         {"total-delete-files", translated_delta.files},
                         {"total-position-deletes", translated_delta.records},
                         {"total-files-size", translated_delta.bytes + cow_removed.bytes},
                         {"total-data-files", cow_removed.files},
                         {"total-records", cow_removed.records},
                         {"deleted-data-files", -cow_removed.files},
                         {"deleted-records", -cow_removed.records},
                         {"removed-files-size", -cow_removed.bytes}});
  }
  return std::optional<Json>(std::move(rebased));
}

Result<std::optional<TableChange>> Rebase(Context& ctx, const Json& current,
                                          const TableChange& change) {
  const std::optional<TableChange> no;
  // Formats v2 and v3: renumbering is about sequence numbers, which v1 has not (its
  // clients retry on their own); v3's row ids are assigned anew, past maintenance's.
  ctx.format = current.value("format-version", 1);
  if (ctx.format != 2 && ctx.format != 3) return no;
  ctx.next_row_id = IntMember(current, "next-row-id").value_or(0);
  // The updates: one or more add-snapshots, each followed by the set-snapshot-ref that
  // points one branch at it (PyIceberg's overwrite commits a delete and an append so).
  std::vector<const Json*> added;
  std::string branch;
  for (size_t i = 0; i < change.updates.size(); i++) {
    const Json& u = change.updates[i];
    if (i % 2 == 0) {
      if (u.value("action", "") != "add-snapshot" || !u.contains("snapshot")) return no;
      added.push_back(&u);
      continue;
    }
    const std::string ref = u.value("ref-name", "");
    if (u.value("action", "") != "set-snapshot-ref" || u.value("type", "") != "branch" ||
        ref.empty() || (!branch.empty() && ref != branch) ||
        IntMember(u, "snapshot-id") != IntMember((*added.back())["snapshot"], "snapshot-id")) {
      return no;
    }
    branch = ref;
  }
  if (added.empty() || change.updates.size() != 2 * added.size()) return no;
  // The requirements: all but the branch's head hold now; that one names the parent.
  std::optional<int64_t> asserted;
  Json requirements = Json::array();
  for (const auto& r : change.requirements) {
    if (r.value("type", "") == "assert-ref-snapshot-id" && r.value("ref", "") == branch) {
      asserted = IntMember(r, "snapshot-id");
      if (!asserted) return no;
      continue;
    }
    if (!iceberg::CheckRequirement(&current, r)) return no;
    requirements.push_back(r);
  }
  if (!asserted) return no;
  // Each snapshot's parent is the one before it, the first's the asserted head.
  std::optional<int64_t> parent = asserted;
  for (const Json* u : added) {
    const Json& s = (*u)["snapshot"];
    if (IntMember(s, "parent-snapshot-id") != parent) return no;
    parent = IntMember(s, "snapshot-id");
  }
  const Json refs = current.value("refs", Json::object());
  if (!refs.contains(branch)) return no;
  const std::optional<int64_t> head = IntMember(refs[branch], "snapshot-id");
  if (!head || *head == *asserted) return no;
  // Every snapshot from the head back to the asserted one is maintenance's.
  for (int64_t at = *head; at != *asserted;) {
    const Json* s = FindSnapshot(current, at);
    if (!s || ctx.maintenance.count(at)) return no;
    const Json summary = s->value("summary", Json::object());
    const std::string job = summary.value(kMaintenanceSummaryKey, "");
    if (job != "compact" && job != "rewrite-manifests") return no;
    if (summary.value("operation", "") != "replace") return no;  // never a data change
    ctx.maintenance.insert(at);
    auto up = IntMember(*s, "parent-snapshot-id");
    if (!up) return no;
    at = *up;
  }
  const Json* base = FindSnapshot(current, *asserted);
  const Json* now = FindSnapshot(current, *head);
  if (!base || !now) return no;
  ctx.location = WarehouseFiles::Canonical(current.value("location", ""));
  ctx.table_uuid = current.value("table-uuid", "");
  while (ctx.location.ends_with('/')) ctx.location.pop_back();
  // One snapshot after the other, each on the one rebased before it.
  const int64_t last_sequence = IntMember(current, "last-sequence-number").value_or(0);
  Json on_base = *base, on_head = *now;
  std::map<const Json*, Json> rebased;  // add-snapshot update -> its rebased snapshot
  for (size_t i = 0; i < added.size(); i++) {
    const Json& snapshot = (*added[i])["snapshot"];
    TM_ASSIGN(std::optional<Json> next,
              RebaseSnapshot(ctx, on_base, on_head, snapshot,
                             last_sequence + 1 + static_cast<int64_t>(i)));
    if (!next) return no;
    on_base = snapshot;
    on_head = *next;
    rebased[added[i]] = std::move(*next);
  }
  requirements.push_back(
      {{"type", "assert-ref-snapshot-id"}, {"ref", branch}, {"snapshot-id", *head}});
  Json updates = Json::array();
  for (const auto& u : change.updates) {
    auto it = rebased.find(&u);
    if (it != rebased.end()) {
      updates.push_back({{"action", "add-snapshot"}, {"snapshot", it->second}});
    } else {
      updates.push_back(u);
    }
  }
  return std::optional<TableChange>(
      TableChange{change.ident, requirements, updates, change.guard, change.origin});
}

}  // namespace

Result<std::optional<TableChange>> RebaseOverMaintenance(WarehouseFiles& files, Random& random,
                                                         metastore::MaintenanceStore& store,
                                                         const WorkerOptions* worker,
                                                         const metastore::Warehouse& w,
                                                         const Json& current,
                                                         const TableChange& change) {
  // A rebase never makes an answer worse: a file that cannot be read or written, or a
  // document of an unexpected shape, leaves the original failure standing.
  try {
    Context ctx{files, random, store, worker, w, {}, {}, {}};
    auto rebased = Rebase(ctx, current, change);
    if (rebased) return rebased;
  } catch (const std::exception&) {
  }
  return std::optional<TableChange>();
}

Result<std::optional<TableChange>> WorkerRebaser::Rebase(
    const metastore::Warehouse& w, const Json& current, const TableChange& change,
    std::chrono::steady_clock::time_point deadline) {
  std::optional<WorkerOptions> worker = worker_;
  if (worker) worker->deadline = deadline;
  return RebaseOverMaintenance(files_, random_, moves_, worker ? &*worker : nullptr, w, current,
                               change);
}

}  // namespace tablemere::maintenance
