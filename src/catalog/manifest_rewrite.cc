#include "catalog/manifest_rewrite.h"

#include <map>

#include "accounts/account_service.h"
#include "catalog/control_tables.h"
#include "catalog/manifest_files.h"
#include "catalog/snapshot_writer.h"

namespace tablemere::catalog {
namespace {

using namespace snapshot_writer;  // NOLINT: the shared pieces of the maintenance commits

Result<ManifestRewriteResult> Rewrite(CatalogService& catalog, const Clock& clock, Random& random,
                                      const metastore::Warehouse& w, const TableIdent& ident,
                                      int64_t quiet_ms) {
  const CatalogPrincipal principal =
      ControlTables::PrincipalFor(accounts::WarehouseAccess{w, metastore::Level::kWrite, ""});
  TM_ASSIGN(LoadedTable loaded, catalog.LoadTable(principal, w, ident, false, false));
  const Json metadata = Json::parse(loaded.metadata_text(), nullptr, false);
  if (!metadata.is_object()) return Fail(ErrorCode::kInternal, "stored metadata is not JSON");
  if (metadata.value("format-version", 1) != 2) {
    return Fail(Skip("only format v2 tables have their manifests rewritten yet"));
  }
  const Json& current_id =
      metadata.contains("current-snapshot-id") ? metadata["current-snapshot-id"] : Json();
  const int64_t current = current_id.is_number_integer() ? current_id.get<int64_t>() : -1;
  const Json snapshots = metadata.value("snapshots", Json::array());
  const Json* snapshot = nullptr;
  for (const auto& s : snapshots) {
    if (s.value("snapshot-id", int64_t{-2}) == current) snapshot = &s;
  }
  if (current < 0 || !snapshot || !snapshot->contains("manifest-list")) {
    return Fail(Skip("the table has no snapshot"));
  }
  if (quiet_ms > 0 && clock.NowMillis() - snapshot->value("timestamp-ms", int64_t{0}) < quiet_ms) {
    return Fail(Skip("the table was written in the last " + std::to_string(quiet_ms / 1000) +
                     " s; it waits for a quiet one"));
  }
  std::string location = WarehouseFiles::Canonical(metadata.at("location").get<std::string>());
  while (location.ends_with('/')) location.pop_back();
  location += "/";

  TM_ASSIGN(avro::Container list,
            ReadManifestFile(catalog.files(), w, (*snapshot)["manifest-list"]));
  ManifestRewriteResult result;
  result.manifests_before = static_cast<int>(list.records.size());
  // Manifests by (spec, content); a group is rewritten when it has more than one, or one
  // that still carries deletions of the past.
  std::vector<Manifest> manifests;
  std::map<std::pair<int, int>, std::vector<size_t>> groups;
  std::map<int, const avro::Node*> partition_nodes;
  for (const auto& record : list.records) {
    Manifest m;
    m.list_value = record;
    m.list_entry = avro::ToJson(*list.schema.root, record);
    m.path = WarehouseFiles::Canonical(m.list_entry.at("manifest_path").get<std::string>());
    m.sequence_number = m.list_entry.value("sequence_number", int64_t{0});
    m.added_snapshot_id = m.list_entry.value("added_snapshot_id", int64_t{-1});
    TM_ASSIGN(m.container, ReadManifestFile(catalog.files(), w, m.path));
    const avro::Node& entry = *m.container.schema.root;
    int file_index = entry.FieldIndex("data_file");
    if (file_index < 0) return Fail(ErrorCode::kInvalidInput, m.path + " is not a manifest");
    const avro::Node& data_file = *entry.fields[static_cast<size_t>(file_index)].type;
    int partition_index = data_file.FieldIndex("partition");
    if (partition_index < 0) return Fail(ErrorCode::kInvalidInput, m.path + " has no partition");
    const int spec = m.list_entry.value("partition_spec_id", 0);
    partition_nodes[spec] = data_file.fields[static_cast<size_t>(partition_index)].type.get();
    groups[{spec, m.list_entry.value("content", 0)}].push_back(manifests.size());
    manifests.push_back(std::move(m));
  }
  const int64_t sequence = metadata.value("last-sequence-number", int64_t{0}) + 1;
  int64_t snapshot_id = 0;
  {
    std::string b = random.Bytes(8);
    std::memcpy(&snapshot_id, b.data(), 8);
    snapshot_id &= INT64_MAX;
    if (snapshot_id == 0) snapshot_id = 1;
  }
  Written written(catalog.files(), w);
  std::vector<avro::Value> records;
  int replaced = 0, created = 0;
  for (const auto& [group, members] : groups) {
    bool worth = members.size() > 1;
    for (size_t mi : members) {
      worth = worth || manifests[mi].list_entry.value("deleted_files_count", 0) > 0;
    }
    for (const auto& field : partition_nodes[group.first]->fields) {
      worth = worth && Comparable(*field.type);
    }
    if (!worth) {
      for (size_t mi : members) records.push_back(manifests[mi].list_value);
      continue;
    }
    std::vector<Json> entries;
    for (size_t mi : members) {
      const Manifest& m = manifests[mi];
      for (const auto& r : m.container.records) {
        Json e = avro::ToJson(*m.container.schema.root, r);
        if (e.value("status", kStatusDeleted) == kStatusDeleted) {
          result.entries_dropped++;
          continue;
        }
        e = Materialized(std::move(e), m);
        e["status"] = kStatusExisting;
        entries.push_back(std::move(e));
      }
    }
    replaced += static_cast<int>(members.size());
    result.entries_kept += static_cast<int>(entries.size());
    if (entries.empty()) continue;  // only past deletions: the manifest goes
    TM_ASSIGN(Json record, WriteManifest(catalog.files(), random, w, location,
                                         manifests[members.front()], *partition_nodes[group.first],
                                         entries, snapshot_id, sequence, written));
    TM_ASSIGN(avro::Value v, avro::FromJson(*list.schema.root, record));
    records.push_back(std::move(v));
    created++;
  }
  if (replaced == 0) return Fail(Skip("every spec already has one manifest without deletions"));
  result.manifests_after = static_cast<int>(records.size());

  avro::Container new_list;
  new_list.schema = list.schema;
  new_list.codec = list.codec;
  new_list.metadata = list.metadata;
  new_list.metadata["snapshot-id"] = std::to_string(snapshot_id);
  new_list.metadata["parent-snapshot-id"] = std::to_string(current);
  new_list.metadata["sequence-number"] = std::to_string(sequence);
  new_list.records = std::move(records);
  TM_ASSIGN(std::string bytes, avro::WriteContainer(new_list, random.Bytes(16)));
  const std::string list_path =
      location + "metadata/snap-" + std::to_string(snapshot_id) + "-1-" + random.Uuid() + ".avro";
  written.Add(list_path);
  TM_TRY(catalog.files().WriteBytes(w, list_path, bytes, "application/octet-stream"));

  // No data changes: the totals are the previous snapshot's.
  Json summary = {{"operation", "replace"},
                  {"manifests-created", std::to_string(created)},
                  {"manifests-replaced", std::to_string(replaced)},
                  {"manifests-kept", std::to_string(result.manifests_after - created)},
                  {"entries-processed", std::to_string(result.entries_kept)},
                  {"tablemere.maintenance", "rewrite-manifests"}};
  const Json previous = snapshot->value("summary", Json::object());
  for (const auto& [key, value] : previous.items()) {
    if (key.starts_with("total-")) summary[key] = value;
  }
  Json new_snapshot = {{"snapshot-id", snapshot_id},  {"parent-snapshot-id", current},
                       {"sequence-number", sequence}, {"timestamp-ms", clock.NowMillis()},
                       {"manifest-list", list_path},  {"summary", summary}};
  if (metadata.contains("current-schema-id")) {
    new_snapshot["schema-id"] = metadata["current-schema-id"];
  }
  Json main_ref = {{"action", "set-snapshot-ref"},
                   {"ref-name", "main"},
                   {"type", "branch"},
                   {"snapshot-id", snapshot_id}};
  const Json refs = metadata.value("refs", Json::object());
  if (refs.contains("main")) {
    for (const char* k : {"min-snapshots-to-keep", "max-snapshot-age-ms", "max-ref-age-ms"}) {
      if (refs["main"].contains(k)) main_ref[k] = refs["main"][k];
    }
  }
  Json requirements = Json::array(
      {{{"type", "assert-table-uuid"}, {"uuid", metadata.at("table-uuid")}},
       {{"type", "assert-ref-snapshot-id"}, {"ref", "main"}, {"snapshot-id", current}}});
  Json updates = Json::array({{{"action", "add-snapshot"}, {"snapshot", new_snapshot}}, main_ref});
  auto committed = catalog.Commit(principal, w, {TableChange{ident, requirements, updates, {}}});
  if (!committed) {
    if (committed.error().code == ErrorCode::kConflict) {
      return Fail(Skip("the table changed while rewriting manifests; the next run retries"));
    }
    return Fail(committed.error());
  }
  written.Keep();
  result.ran = true;
  result.snapshot_id = snapshot_id;
  return result;
}

}  // namespace

Result<ManifestRewriteResult> RewriteManifests(CatalogService& catalog, const Clock& clock,
                                               Random& random, const metastore::Warehouse& w,
                                               const TableIdent& ident, int64_t quiet_ms) {
  try {
    auto r = Rewrite(catalog, clock, random, w, ident, quiet_ms);
    if (!r && IsSkip(r.error())) {
      ManifestRewriteResult skipped;
      skipped.reason = r.error().message;
      return skipped;
    }
    return r;
  } catch (const Json::exception& e) {
    return Fail(ErrorCode::kInvalidInput, std::string("malformed table metadata: ") + e.what());
  }
}

}  // namespace tablemere::catalog
