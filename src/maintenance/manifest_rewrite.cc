#include "maintenance/manifest_rewrite.h"

#include <map>

#include "accounts/account_service.h"
#include "catalog/control_tables.h"
#include "catalog/manifest_files.h"
#include "maintenance/snapshot_writer.h"

namespace tablemere::maintenance {
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
  const int format = metadata.value("format-version", 1);
  // Format v3 entries keep their first row ids (EntryJson); the new manifests get theirs
  // when the list is written (CommitReplace).
  if (format < 1 || format > 3) {
    return Fail(Skip("format v" + std::to_string(format) + " tables' manifests are not rewritten"));
  }
  TM_ASSIGN(const Head head, CurrentHead(metadata));
  const int64_t current = head.id;
  const Json* snapshot = &head.snapshot;
  const std::string& location = head.location;
  if (quiet_ms > 0 && clock.NowMillis() - snapshot->value("timestamp-ms", int64_t{0}) < quiet_ms) {
    return Fail(Skip("the table was written in the last " + std::to_string(quiet_ms / 1000) +
                     " s; it waits for a quiet one"));
  }

  TM_ASSIGN(LoadedManifests read, LoadManifests(catalog.files(), w, (*snapshot)["manifest-list"]));
  const avro::Container& list = read.list;
  std::vector<Manifest>& manifests = read.manifests;
  ManifestRewriteResult result;
  result.manifests_before = static_cast<int>(list.records.size());
  // Manifests by (spec, content); a group is rewritten when it has more than one, or one
  // that still carries deletions of the past.
  std::map<std::pair<int, int>, std::vector<size_t>> groups;
  for (size_t mi = 0; mi < manifests.size(); mi++) {
    const Manifest& m = manifests[mi];
    groups[{m.spec_id, m.content}].push_back(mi);
  }
  const int64_t sequence = format == 1 ? 0 : metadata.value("last-sequence-number", int64_t{0}) + 1;
  const int64_t snapshot_id = NewSnapshotId(random);
  Written written(catalog.files(), w);
  std::vector<avro::Value> records;
  int replaced = 0, created = 0;
  for (const auto& [group, members] : groups) {
    bool worth = members.size() > 1;
    for (size_t mi : members) {
      worth = worth || manifests[mi].listed.deleted_files.value_or(0) > 0;
    }
    if (!worth) {
      for (size_t mi : members) records.push_back(manifests[mi].list_value);
      continue;
    }
    std::vector<iceberg::ManifestEntry> entries;
    for (size_t mi : members) {
      const Manifest& m = manifests[mi];
      for (size_t i = 0; i < m.container.records.size(); i++) {
        if (!m.typed.entries[i].Live()) {
          result.entries_dropped++;
          continue;
        }
        entries.push_back(Entry(m, i, iceberg::EntryStatus::kExisting, snapshot_id));
      }
    }
    replaced += static_cast<int>(members.size());
    result.entries_kept += static_cast<int>(entries.size());
    if (entries.empty()) continue;  // only past deletions: the manifest goes
    TM_ASSIGN(iceberg::ManifestFile record,
              WriteManifest(catalog.files(), random, w, location, manifests[members.front()],
                            entries, snapshot_id, sequence, written));
    TM_ASSIGN(avro::Value v, iceberg::ToAvro(*list.schema.root, record));
    records.push_back(std::move(v));
    created++;
  }
  if (replaced == 0) return Fail(Skip("every spec already has one manifest without deletions"));
  result.manifests_after = static_cast<int>(records.size());

  // No data changes: the totals are the previous snapshot's.
  Json summary = {{"operation", "replace"},
                  {"manifests-created", std::to_string(created)},
                  {"manifests-replaced", std::to_string(replaced)},
                  {"manifests-kept", std::to_string(result.manifests_after - created)},
                  {"entries-processed", std::to_string(result.entries_kept)},
                  {kMaintenanceSummaryKey, "rewrite-manifests"}};
  const Json previous = snapshot->value("summary", Json::object());
  for (const auto& [key, value] : previous.items()) {
    if (key.starts_with("total-")) summary[key] = value;
  }
  TM_TRY(CommitReplace(catalog, clock, random, principal, w, ident, metadata, current, list,
                       std::move(records), {snapshot_id, sequence, summary}, "manifest rewrite",
                       written));
  result.ran = true;
  result.snapshot_id = snapshot_id;
  return result;
}

}  // namespace

Result<ManifestRewriteResult> RewriteManifests(CatalogService& catalog, const Clock& clock,
                                               Random& random, const metastore::Warehouse& w,
                                               const TableIdent& ident, int64_t quiet_ms) {
  return snapshot_writer::RunJob<ManifestRewriteResult>(
      [&] { return Rewrite(catalog, clock, random, w, ident, quiet_ms); });
}

}  // namespace tablemere::maintenance
