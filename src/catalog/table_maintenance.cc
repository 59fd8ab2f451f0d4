#include "catalog/table_maintenance.h"

#include <set>

#include "accounts/account_service.h"
#include "avro/container.h"
#include "catalog/control_tables.h"

namespace tablemere::catalog {
namespace {

// Manifest lists and manifests are small; a larger one is refused rather than loaded.
constexpr size_t kMaxManifestBytes = 256u << 20;

// The manifest entry status of the Iceberg spec.
constexpr int64_t kStatusDeleted = 2;

// What one snapshot reaches: its manifest list, its manifests and the data and delete
// files those hold. `live` is only the files the snapshot still holds (entries ADDED or
// EXISTING); `all` also those its manifests record as deleted.
struct Reach {
  std::set<std::string> metadata;  // manifest lists and manifests
  std::set<std::string> live;
  std::set<std::string> all;
};

class Walker {
 public:
  Walker(WarehouseFiles& files, const metastore::Warehouse& w) : files_(files), w_(w) {}

  Result<void> Add(const Json& snapshot, Reach& into) {
    std::vector<std::string> manifests;
    if (snapshot.contains("manifest-list") && snapshot["manifest-list"].is_string()) {
      const std::string list = snapshot["manifest-list"];
      into.metadata.insert(list);
      TM_ASSIGN(auto c, Read(list));
      for (const auto& r : c->records) {
        const avro::Value* path = r.Get(*c->schema.root, "manifest_path");
        if (!path) return Fail(ErrorCode::kInvalidInput, list + " is not a manifest list");
        manifests.push_back(path->Unwrapped().s);
      }
    } else if (snapshot.contains("manifests") && snapshot["manifests"].is_array()) {
      for (const auto& m : snapshot["manifests"]) manifests.push_back(m.get<std::string>());  // v1
    }
    for (const auto& m : manifests) {
      into.metadata.insert(m);
      TM_ASSIGN(auto c, Read(m));
      const avro::Node& entry = *c->schema.root;
      int file_index = entry.FieldIndex("data_file");
      if (file_index < 0) return Fail(ErrorCode::kInvalidInput, m + " is not a manifest");
      const avro::Node& file = *entry.fields[static_cast<size_t>(file_index)].type;
      for (const auto& r : c->records) {
        const avro::Value* status = r.Get(entry, "status");
        const avro::Value* data_file = r.Get(entry, "data_file");
        const avro::Value* path = data_file ? data_file->Get(file, "file_path") : nullptr;
        if (!status || !path)
          return Fail(ErrorCode::kInvalidInput, m + " has an entry without a file");
        into.all.insert(path->Unwrapped().s);
        if (status->i != kStatusDeleted) into.live.insert(path->Unwrapped().s);
      }
    }
    return {};
  }

 private:
  // Each file once per job: manifests are shared by many snapshots.
  Result<const avro::Container*> Read(const std::string& location) {
    auto it = cache_.find(location);
    if (it != cache_.end()) return &it->second;
    TM_ASSIGN(std::string bytes, files_.ReadBytes(w_, location, kMaxManifestBytes));
    TM_ASSIGN(avro::Container c, avro::ReadContainer(bytes));
    return &cache_.emplace(location, std::move(c)).first->second;
  }

  WarehouseFiles& files_;
  const metastore::Warehouse& w_;
  std::map<std::string, avro::Container> cache_;
};

}  // namespace

Result<ExpireResult> TableMaintenance::Expire(const metastore::Warehouse& w,
                                              const TableIdent& ident) {
  const CatalogPrincipal principal =
      ControlTables::PrincipalFor(accounts::WarehouseAccess{w, metastore::Level::kWrite, ""});
  TM_ASSIGN(LoadedTable loaded, catalog_.LoadTable(principal, w, ident, false, false));
  Json metadata = Json::parse(loaded.metadata_text(), nullptr, false);
  if (!metadata.is_object()) return Fail(ErrorCode::kInternal, "stored metadata is not JSON");
  ExpireResult result;
  const Json snapshots = metadata.value("snapshots", Json::array());
  result.snapshots_before = static_cast<int>(snapshots.size());
  iceberg::ExpiryPlan plan =
      iceberg::PlanSnapshotExpiry(metadata, options_.expiry, clock_.NowMillis());
  if (plan.expired.empty()) {
    result.reason = "nothing to expire";
    return result;
  }
  // What the retained snapshots reach stays; what only the expired ones reach goes. Both
  // are read before the commit, so an unreadable file stops the job with nothing changed.
  Walker walker(catalog_.files(), w);
  Reach kept, gone;
  for (const auto& s : snapshots) {
    int64_t id = s.value("snapshot-id", int64_t{-1});
    TM_TRY(walker.Add(s, plan.retained.count(id) ? kept : gone));
  }
  // Only the table's refs as this job saw them: a commit in between makes the job lose.
  Json requirements =
      Json::array({{{"type", "assert-table-uuid"}, {"uuid", metadata["table-uuid"]}}});
  Json refs = metadata.contains("refs") ? metadata["refs"] : Json::object();
  // v1 metadata may carry no refs: main is then the current snapshot.
  if (!refs.contains("main") && metadata.contains("current-snapshot-id") &&
      metadata["current-snapshot-id"].is_number() &&
      metadata["current-snapshot-id"].get<int64_t>() >= 0) {
    refs["main"] = {{"snapshot-id", metadata["current-snapshot-id"]}};
  }
  for (const auto& [name, ref] : refs.items()) {
    requirements.push_back(
        {{"type", "assert-ref-snapshot-id"}, {"ref", name}, {"snapshot-id", ref["snapshot-id"]}});
  }
  Json updates = Json::array(
      {{{"action", "remove-snapshots"},
        {"snapshot-ids", std::vector<int64_t>(plan.expired.begin(), plan.expired.end())}}});
  auto committed = catalog_.Commit(principal, w, {TableChange{ident, requirements, updates}});
  if (!committed) {
    if (committed.error().code == ErrorCode::kConflict) {
      result.reason = "the table changed while expiring; the next run retries";
      return result;
    }
    return Fail(committed.error());
  }
  result.ran = true;
  result.snapshots_expired = static_cast<int>(plan.expired.size());
  // The commit may have landed on metadata newer than the plan (a concurrent commit that
  // left the asserted refs alone): what stays is everything the published metadata's
  // snapshots reach, recomputed from it. If it cannot be read, nothing is deleted (what
  // is left is orphans for a later cleanup).
  {
    Json published = Json::parse(committed->at(0).metadata_text(), nullptr, false);
    if (!published.is_object()) return result;
    Reach now;
    for (const auto& s : published.value("snapshots", Json::array())) {
      if (!walker.Add(s, now)) return result;
    }
    kept = std::move(now);
  }
  // Deleted only inside the table's own location, never a file another table may share.
  std::string location = metadata.value("location", "");
  if (!location.empty() && location.back() != '/') location += '/';
  auto remove = [&](const std::string& file) {
    if (location.empty() || !file.starts_with(location)) return;
    auto deleted = catalog_.files().Delete(w, file);
    if (deleted) {
      result.files_deleted++;
    } else if (deleted.error().code == ErrorCode::kNotFound) {
      result.files_missing++;
    }
    // Any other failure leaves an orphan, which orphan cleanup removes later.
  };
  for (const auto& f : gone.metadata) {
    if (!kept.metadata.count(f)) remove(f);
  }
  for (const auto& f : gone.all) {
    if (!kept.live.count(f)) remove(f);
  }
  return result;
}

Result<OrphanResult> TableMaintenance::Orphans(const metastore::Warehouse& w,
                                               const TableIdent& ident, int64_t grace_ms) {
  const CatalogPrincipal principal =
      ControlTables::PrincipalFor(accounts::WarehouseAccess{w, metastore::Level::kWrite, ""});
  TM_ASSIGN(LoadedTable loaded, catalog_.LoadTable(principal, w, ident, false, false));
  Json metadata = Json::parse(loaded.metadata_text(), nullptr, false);
  if (!metadata.is_object()) return Fail(ErrorCode::kInternal, "stored metadata is not JSON");
  OrphanResult result;
  std::string location = metadata.value("location", "");
  if (location.empty()) {
    result.reason = "the table has no location";
    return result;
  }
  // Listed first: a file written after the listing is not a candidate at all.
  TM_ASSIGN(auto listed, catalog_.files().ListUnder(w, location));
  result.files_listed = static_cast<int>(listed.size());
  // Everything any metadata references, read after the listing so that a commit landing
  // in between only adds references.
  std::set<std::string> referenced = {loaded.metadata_location};
  for (const auto& entry : metadata.value("metadata-log", Json::array())) {
    referenced.insert(entry.value("metadata-file", ""));
  }
  for (const char* kind : {"statistics", "partition-statistics"}) {
    for (const auto& s : metadata.value(kind, Json::array())) {
      referenced.insert(s.value("statistics-path", ""));
    }
  }
  Walker walker(catalog_.files(), w);
  Reach reach;
  for (const auto& s : metadata.value("snapshots", Json::array())) TM_TRY(walker.Add(s, reach));
  referenced.insert(reach.metadata.begin(), reach.metadata.end());
  referenced.insert(reach.all.begin(), reach.all.end());
  const int64_t now = clock_.NowMillis();
  for (const auto& o : listed) {
    const std::string file = WarehouseFiles::LocationOf(w, o.key);
    if (referenced.count(file) || file.ends_with("/metadata/version-hint.text")) continue;
    result.orphans_found++;
    if (now - o.last_modified_ms < grace_ms) {
      result.orphans_kept_young++;
      continue;
    }
    auto deleted = catalog_.files().Delete(w, file);
    if (deleted) {
      result.orphans_deleted++;
      result.bytes_deleted += static_cast<int64_t>(o.size);
    }
  }
  result.ran = true;
  return result;
}

Result<TableMaintenance::SweepResult> TableMaintenance::SweepAll() {
  SweepResult sweep;
  TM_ASSIGN(auto warehouses, catalog_.metastore().warehouses().AllWarehouses());
  for (const auto& w : warehouses) {
    // Namespaces breadth first from the root; the tables of each.
    std::vector<Namespace> pending = {Namespace{}};
    while (!pending.empty()) {
      Namespace ns = std::move(pending.back());
      pending.pop_back();
      auto children = catalog_.ListNamespaces(w, ns);
      if (!children) {
        sweep.failures++;
        continue;
      }
      for (auto& c : *children) pending.push_back(std::move(c));
      if (ns.empty()) continue;
      auto tables = catalog_.ListTables(w, ns);
      if (!tables) {
        sweep.failures++;
        continue;
      }
      for (const auto& ident : *tables) {
        sweep.tables++;
        auto r = Expire(w, ident);
        if (!r) {
          sweep.failures++;
          continue;
        }
        sweep.expired_snapshots += r->snapshots_expired;
        sweep.files_deleted += r->files_deleted;
        // Orphan cleanup is not swept: a table's location may hold another table's or
        // view's files (nested namespaces), which it cannot yet tell apart. It runs only
        // on an operator's request.
      }
    }
  }
  return sweep;
}

}  // namespace tablemere::catalog
