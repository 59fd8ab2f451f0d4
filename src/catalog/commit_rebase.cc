#include "catalog/commit_rebase.h"

#include <map>
#include <set>

#include "avro/container.h"
#include "catalog/manifest_files.h"
#include "common/strings.h"
#include "iceberg/table_metadata.h"

namespace tablemere::catalog {
namespace {

constexpr int64_t kStatusAdded = 1, kStatusDeleted = 2;

std::optional<int64_t> IntOf(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

const Json* SnapshotById(const Json& metadata, int64_t id) {
  auto it = metadata.find("snapshots");
  if (it == metadata.end() || !it->is_array()) return nullptr;
  for (const auto& s : *it) {
    if (IntOf(s, "snapshot-id") == id) return &s;
  }
  return nullptr;
}

Result<avro::Container> ReadAvro(WarehouseFiles& files, const metastore::Warehouse& w,
                                 const std::string& location) {
  return ReadManifestFile(files, w, location);
}

Result<std::optional<TableChange>> Rebase(WarehouseFiles& files, Random& random,
                                          const metastore::Warehouse& w, const Json& current,
                                          const TableChange& change) {
  const std::optional<TableChange> no;
  // The updates: one add-snapshot and the set-snapshot-ref pointing a branch at it.
  const Json* added = nullptr;
  const Json* set_ref = nullptr;
  for (const auto& u : change.updates) {
    const std::string action = u.value("action", "");
    if (action == "add-snapshot" && !added) {
      added = &u;
    } else if (action == "set-snapshot-ref" && !set_ref) {
      set_ref = &u;
    } else {
      return no;
    }
  }
  if (!added || !set_ref || !added->contains("snapshot")) return no;
  const Json& snapshot = (*added)["snapshot"];
  const std::string branch = set_ref->value("ref-name", "");
  if (set_ref->value("type", "") != "branch" ||
      IntOf(*set_ref, "snapshot-id") != IntOf(snapshot, "snapshot-id")) {
    return no;
  }
  // The requirements: all but the branch's head hold now; that one names the parent.
  std::optional<int64_t> asserted;
  Json requirements = Json::array();
  for (const auto& r : change.requirements) {
    if (r.value("type", "") == "assert-ref-snapshot-id" && r.value("ref", "") == branch) {
      asserted = IntOf(r, "snapshot-id");
      if (!asserted) return no;
      continue;
    }
    if (!iceberg::CheckRequirement(&current, r)) return no;
    requirements.push_back(r);
  }
  if (!asserted || IntOf(snapshot, "parent-snapshot-id") != asserted) return no;
  const Json refs = current.value("refs", Json::object());
  if (!refs.contains(branch)) return no;
  const std::optional<int64_t> head = IntOf(refs[branch], "snapshot-id");
  if (!head || *head == *asserted) return no;
  // Every snapshot from the head back to the asserted one is a compaction.
  std::set<int64_t> maintenance;
  for (int64_t at = *head; at != *asserted;) {
    const Json* s = SnapshotById(current, at);
    if (!s || maintenance.count(at)) return no;
    const Json summary = s->value("summary", Json::object());
    const std::string job = summary.value("tablemere.maintenance", "");
    if (job != "compact" && job != "rewrite-manifests") return no;
    maintenance.insert(at);
    auto parent = IntOf(*s, "parent-snapshot-id");
    if (!parent) return no;
    at = *parent;
  }
  const Json* base = SnapshotById(current, *asserted);
  const Json* now = SnapshotById(current, *head);
  if (!base || !now || !snapshot.contains("manifest-list") || !base->contains("manifest-list") ||
      !now->contains("manifest-list")) {
    return no;
  }

  // The client's list: every manifest of its parent, plus new ones of ADDED entries only.
  TM_ASSIGN(avro::Container base_list, ReadAvro(files, w, (*base)["manifest-list"]));
  TM_ASSIGN(avro::Container head_list, ReadAvro(files, w, (*now)["manifest-list"]));
  TM_ASSIGN(avro::Container client_list, ReadAvro(files, w, snapshot["manifest-list"]));
  std::set<std::string> parent_manifests;
  for (const auto& r : base_list.records) {
    parent_manifests.insert(WarehouseFiles::Canonical(
        avro::ToJson(*base_list.schema.root, r).value("manifest_path", std::string())));
  }
  std::vector<Json> new_manifests;
  size_t carried = 0;
  for (const auto& r : client_list.records) {
    Json m = avro::ToJson(*client_list.schema.root, r);
    if (parent_manifests.count(
            WarehouseFiles::Canonical(m.value("manifest_path", std::string())))) {
      carried++;
    } else {
      new_manifests.push_back(std::move(m));
    }
  }
  if (carried != parent_manifests.size()) return no;
  // The files the compactions removed.
  std::set<std::string> removed;
  for (const auto& r : head_list.records) {
    Json m = avro::ToJson(*head_list.schema.root, r);
    if (!maintenance.count(m.value("added_snapshot_id", int64_t{-1}))) continue;
    TM_ASSIGN(avro::Container c, ReadAvro(files, w, m["manifest_path"]));
    for (const auto& e : c.records) {
      Json entry = avro::ToJson(*c.schema.root, e);
      if (entry.value("status", 0) == kStatusDeleted &&
          maintenance.count(entry.value("snapshot_id", int64_t{-1}))) {
        removed.insert(WarehouseFiles::Canonical(entry["data_file"].value("file_path", "")));
      }
    }
  }
  for (const auto& m : new_manifests) {
    TM_ASSIGN(avro::Container c, ReadAvro(files, w, m["manifest_path"]));
    for (const auto& e : c.records) {
      Json entry = avro::ToJson(*c.schema.root, e);
      if (entry.value("status", 0) != kStatusAdded) return no;
      const Json& file = entry["data_file"];
      if (file.value("content", 0) == 1) {
        const std::string target = PositionDeleteTarget(file);
        if (target.empty() || removed.count(target)) return no;
      }
    }
  }

  // The rebased manifest list: the client's new manifests, renumbered, then the head's.
  const int64_t old_sequence = IntOf(snapshot, "sequence-number").value_or(0);
  const int64_t sequence = IntOf(current, "last-sequence-number").value_or(0) + 1;
  avro::Container list;
  list.schema = client_list.schema;
  list.codec = client_list.codec;
  list.metadata = client_list.metadata;
  list.metadata["parent-snapshot-id"] = std::to_string(*head);
  list.metadata["sequence-number"] = std::to_string(sequence);
  for (Json m : new_manifests) {
    if (m.value("sequence_number", int64_t{-1}) == old_sequence) m["sequence_number"] = sequence;
    if (m.value("min_sequence_number", int64_t{-1}) == old_sequence) {
      m["min_sequence_number"] = sequence;
    }
    auto v = avro::FromJson(*list.schema.root, m);
    if (!v) return no;
    list.records.push_back(std::move(*v));
  }
  for (const auto& r : head_list.records) {
    // The head's records in the client's schema (another writer's field set).
    auto v = avro::FromJson(*list.schema.root, avro::ToJson(*head_list.schema.root, r));
    if (!v) return no;
    list.records.push_back(std::move(*v));
  }
  TM_ASSIGN(std::string bytes, avro::WriteContainer(list, random.Bytes(16)));
  std::string location = WarehouseFiles::Canonical(current.value("location", ""));
  while (location.ends_with('/')) location.pop_back();
  const std::string list_path = location + "/metadata/snap-" +
                                std::to_string(IntOf(snapshot, "snapshot-id").value_or(0)) +
                                "-rebased-" + random.Uuid() + ".avro";
  TM_TRY(files.WriteBytes(w, list_path, bytes, "application/octet-stream"));

  Json rebased = snapshot;
  rebased["parent-snapshot-id"] = *head;
  rebased["sequence-number"] = sequence;
  rebased["manifest-list"] = list_path;
  // Totals move by what the compactions changed between the two heads.
  const Json before = base->value("summary", Json::object());
  const Json after = now->value("summary", Json::object());
  if (rebased.contains("summary") && rebased["summary"].is_object()) {
    for (auto& [key, value] : rebased["summary"].items()) {
      if (!key.starts_with("total-") || !value.is_string()) continue;
      auto mine = ParseInt(value.get<std::string>());
      auto was = before.contains(key) && before[key].is_string()
                     ? ParseInt(before[key].get<std::string>())
                     : std::nullopt;
      auto is = after.contains(key) && after[key].is_string()
                    ? ParseInt(after[key].get<std::string>())
                    : std::nullopt;
      if (mine && was && is) value = std::to_string(*mine + (*is - *was));
    }
  }
  requirements.push_back(
      {{"type", "assert-ref-snapshot-id"}, {"ref", branch}, {"snapshot-id", *head}});
  Json updates = Json::array();
  for (const auto& u : change.updates) {
    if (&u == added) {
      updates.push_back({{"action", "add-snapshot"}, {"snapshot", rebased}});
    } else {
      updates.push_back(u);
    }
  }
  return std::optional<TableChange>(
      TableChange{change.ident, requirements, updates, change.guard, change.origin});
}

}  // namespace

Result<std::optional<TableChange>> RebaseOverMaintenance(WarehouseFiles& files, Random& random,
                                                         const metastore::Warehouse& w,
                                                         const Json& current,
                                                         const TableChange& change) {
  // A rebase never makes an answer worse: a file that cannot be read or written, or a
  // document of an unexpected shape, leaves the original failure standing.
  try {
    auto rebased = Rebase(files, random, w, current, change);
    if (rebased) return rebased;
  } catch (const std::exception&) {
  }
  return std::optional<TableChange>();
}

}  // namespace tablemere::catalog
