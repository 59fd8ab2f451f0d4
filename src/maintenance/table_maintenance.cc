#include "maintenance/table_maintenance.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <set>
#include <stop_token>
#include <thread>

#include "accounts/account_service.h"
#include "avro/container.h"
#include "catalog/control_tables.h"
#include "catalog/manifest_files.h"
#include "common/strings.h"
#include "iceberg/manifest.h"

namespace tablemere::maintenance {
namespace {

// The manifest entry status of the Iceberg spec.

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

  // Adds what `snapshot` reaches. With `tolerate_missing` (an expired snapshot), a
  // manifest list or manifest that is already gone is counted in `missing` and skipped:
  // what it reached is left for orphan cleanup.
  Result<void> Add(const Json& snapshot, Reach& into, bool tolerate_missing = false) {
    // nullptr: gone, and tolerated.
    auto read = [&](const std::string& location) -> Result<const avro::Container*> {
      auto c = Read(location);
      if (!c && tolerate_missing && c.error().code == ErrorCode::kNotFound) {
        missing++;
        return nullptr;
      }
      return c;
    };
    std::vector<std::string> manifests;
    if (snapshot.contains("manifest-list") && snapshot["manifest-list"].is_string()) {
      const std::string list = WarehouseFiles::Canonical(snapshot["manifest-list"]);
      into.metadata.insert(list);
      TM_ASSIGN(const avro::Container* c, read(list));
      if (!c) return {};
      auto listed = iceberg::ReadManifestList(*c);
      if (!listed) return Fail(ErrorCode::kInvalidInput, list + ": " + listed.error().message);
      for (const auto& f : *listed) manifests.push_back(WarehouseFiles::Canonical(f.path));
    } else if (snapshot.contains("manifests") && snapshot["manifests"].is_array()) {
      for (const auto& m : snapshot["manifests"]) {  // v1
        if (!m.is_string()) return Fail(ErrorCode::kInvalidInput, "a manifest is not a string");
        manifests.push_back(WarehouseFiles::Canonical(m.get<std::string>()));
      }
    }
    for (const auto& m : manifests) {
      into.metadata.insert(m);
      TM_ASSIGN(const avro::Container* c, read(m));
      if (!c) continue;
      auto manifest = iceberg::ReadManifest(*c, iceberg::ManifestFile{});
      if (!manifest) return Fail(ErrorCode::kInvalidInput, m + ": " + manifest.error().message);
      for (const auto& e : manifest->entries) {
        const std::string file_path = WarehouseFiles::Canonical(e.file.path);
        into.all.insert(file_path);
        if (e.Live()) into.live.insert(file_path);
      }
    }
    return {};
  }

  int missing = 0;  // manifest lists and manifests found gone (tolerated ones only)

 private:
  // Each file once per job: manifests are shared by many snapshots.
  Result<const avro::Container*> Read(const std::string& location) {
    auto it = cache_.find(location);
    if (it != cache_.end()) return &it->second;
    TM_ASSIGN(avro::Container c, ReadManifestFile(files_, w_, location));
    return &cache_.emplace(location, std::move(c)).first->second;
  }

  WarehouseFiles& files_;
  const metastore::Warehouse& w_;
  std::map<std::string, avro::Container> cache_;
};

// Runs a job over metadata documents read from storage: a document of the wrong shape
// (a number where an object belongs) is the job's kInvalidInput, never an exception.
template <typename Job>
auto Guarded(const Job& job) -> decltype(job()) {
  try {
    return job();
  } catch (const Json::exception& e) {
    return Fail(ErrorCode::kInvalidInput, std::string("malformed table metadata: ") + e.what());
  }
}

// The table's metadata as the warehouse's write identity sees it.
Result<std::pair<LoadedTable, Json>> LoadMetadata(CatalogService& catalog,
                                                  const CatalogPrincipal& principal,
                                                  const metastore::Warehouse& w,
                                                  const TableIdent& ident) {
  TM_ASSIGN(LoadedTable loaded, catalog.LoadTable(principal, w, ident, false, false));
  Json metadata = Json::parse(loaded.metadata_text(), nullptr, false);
  if (!metadata.is_object()) return Fail(ErrorCode::kInternal, "stored metadata is not JSON");
  return std::pair{std::move(loaded), std::move(metadata)};
}

// The table's location with one trailing slash, canonical ("" when it has none).
std::string LocationPrefix(const Json& metadata) {
  const Json& location = metadata.contains("location") ? metadata["location"] : Json();
  if (!location.is_string() || location.get<std::string>().empty()) return "";
  std::string prefix = WarehouseFiles::Canonical(location.get<std::string>());
  while (prefix.ends_with('/')) prefix.pop_back();
  return prefix + "/";
}

// Refuses a maintenance commit that would drop a ref: `remove-snapshots` drops a ref
// whose head it removes, and a branch created on such a snapshot after the job planned
// is a user's work.
Result<void> KeepsEveryRef(const Json& base, const Json& next) {
  const Json none = Json::object();
  const Json& before = base.contains("refs") ? base["refs"] : none;
  const Json& after = next.contains("refs") ? next["refs"] : none;
  for (const auto& [name, ref] : before.items()) {
    if (!after.contains(name) || after[name] != ref) {
      return Fail(Error{ErrorCode::kConflict, "the ref " + name + " changed", {}});
    }
  }
  return {};
}

Result<ExpireResult> ExpireTable(CatalogService& catalog, const Clock& clock,
                                 const MaintenanceOptions& options, const metastore::Warehouse& w,
                                 const TableIdent& ident) {
  const CatalogPrincipal principal =
      ControlTables::PrincipalFor(accounts::WarehouseAccess{w, metastore::Level::kWrite, ""});
  TM_ASSIGN(auto loaded, LoadMetadata(catalog, principal, w, ident));
  const Json& metadata = loaded.second;
  ExpireResult result;
  const Json snapshots = metadata.value("snapshots", Json::array());
  result.snapshots_before = static_cast<int>(snapshots.size());
  iceberg::ExpiryPlan plan =
      iceberg::PlanSnapshotExpiry(metadata, options.expiry, clock.NowMillis());
  if (plan.expired.empty()) {
    result.reason = "nothing to expire";
    return result;
  }
  // What the retained snapshots reach stays; what only the expired ones reach goes. Both
  // are read before the commit, so an unreadable file stops the job with nothing changed
  // -- except a file of an expired snapshot that is already gone: the snapshot still
  // expires, and what only that file named is left to orphan cleanup.
  Walker walker(catalog.files(), w);
  Reach kept, gone;
  for (const auto& s : snapshots) {
    const bool retained = plan.retained.count(s.value("snapshot-id", int64_t{-1})) > 0;
    TM_TRY(walker.Add(s, retained ? kept : gone, !retained));
  }
  // Only the table's refs as this job saw them: a commit in between makes the job lose.
  Json requirements =
      Json::array({{{"type", "assert-table-uuid"}, {"uuid", metadata.at("table-uuid")}}});
  Json refs = metadata.contains("refs") ? metadata["refs"] : Json::object();
  // v1 metadata may carry no refs: main is then the current snapshot.
  if (!refs.contains("main") && metadata.contains("current-snapshot-id") &&
      metadata["current-snapshot-id"].is_number() &&
      metadata["current-snapshot-id"].get<int64_t>() >= 0) {
    refs["main"] = {{"snapshot-id", metadata["current-snapshot-id"]}};
  }
  for (const auto& [name, ref] : refs.items()) {
    requirements.push_back({{"type", "assert-ref-snapshot-id"},
                            {"ref", name},
                            {"snapshot-id", ref.at("snapshot-id")}});
  }
  Json updates = Json::array(
      {{{"action", "remove-snapshots"},
        {"snapshot-ids", std::vector<int64_t>(plan.expired.begin(), plan.expired.end())}}});
  auto committed = catalog.Commit(
      principal, w,
      {TableChange{ident, requirements, updates, KeepsEveryRef, CommitOrigin::kMaintenance}});
  if (!committed) {
    if (committed.error().code == ErrorCode::kConflict) {
      result.reason = "the table changed while expiring; the next run retries";
      return result;
    }
    return Fail(committed.error());
  }
  result.ran = true;
  result.snapshots_expired = static_cast<int>(plan.expired.size());
  result.files_missing = walker.missing;
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
  const std::string location = LocationPrefix(metadata);
  auto remove = [&](const std::string& file) {
    if (location.empty() || !file.starts_with(location)) return;
    auto deleted = catalog.files().Delete(w, file);
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

// The locations (canonical, with a trailing slash) of every other table, view and
// generic table of the warehouse inside `prefix`: a table at `a/b` may hold namespace
// a.b's tables, and their files are not this table's orphans.
Result<std::vector<std::string>> NestedLocations(CatalogService& catalog,
                                                 const metastore::Warehouse& w,
                                                 const TableIdent& self,
                                                 const std::string& prefix) {
  std::vector<std::string> nested;
  for (const char* kind : {"table", "view", "generic"}) {
    TM_ASSIGN(auto entries, catalog.metastore().catalog().ListEntriesOfKind(w.id, kind));
    for (const auto& e : entries) {
      if (e.namespace_levels == self.ns && e.name == self.name) continue;
      std::string other = WarehouseFiles::Canonical(e.location);
      while (other.ends_with('/')) other.pop_back();
      other += "/";
      if (other.starts_with(prefix)) nested.push_back(std::move(other));
    }
  }
  return nested;
}

Result<OrphanResult> OrphanTable(CatalogService& catalog, const Clock& clock,
                                 const metastore::Warehouse& w, const TableIdent& ident,
                                 int64_t grace_ms) {
  const CatalogPrincipal principal =
      ControlTables::PrincipalFor(accounts::WarehouseAccess{w, metastore::Level::kWrite, ""});
  // Read once for the location only.
  TM_ASSIGN(auto first, LoadMetadata(catalog, principal, w, ident));
  OrphanResult result;
  const std::string location = LocationPrefix(first.second);
  if (location.empty()) {
    result.reason = "the table has no location";
    return result;
  }
  // Listed first: a file written after the listing is not a candidate at all.
  TM_ASSIGN(auto listed, catalog.files().ListUnder(w, location));
  result.files_listed = static_cast<int>(listed.size());
  TM_ASSIGN(auto nested, NestedLocations(catalog, w, ident, location));
  // Everything any metadata references, read after the listing so that a commit landing
  // in between only adds references.
  TM_ASSIGN(auto loaded, LoadMetadata(catalog, principal, w, ident));
  const Json& metadata = loaded.second;
  if (LocationPrefix(metadata) != location) {
    result.reason = "the table moved while listing; the next run retries";
    return result;
  }
  std::set<std::string> referenced = {WarehouseFiles::Canonical(loaded.first.metadata_location)};
  for (const auto& entry : metadata.value("metadata-log", Json::array())) {
    referenced.insert(WarehouseFiles::Canonical(entry.value("metadata-file", "")));
  }
  for (const char* kind : {"statistics", "partition-statistics"}) {
    for (const auto& s : metadata.value(kind, Json::array())) {
      referenced.insert(WarehouseFiles::Canonical(s.value("statistics-path", "")));
    }
  }
  Walker walker(catalog.files(), w);
  Reach reach;
  for (const auto& s : metadata.value("snapshots", Json::array())) TM_TRY(walker.Add(s, reach));
  referenced.insert(reach.metadata.begin(), reach.metadata.end());
  referenced.insert(reach.all.begin(), reach.all.end());
  // Orphans are deleted once unreferenced for the grace period, counted from when a run
  // first found them; until then they are noncurrent (kept, not counted in usage). A file
  // written a moment ago by a client that has not committed yet is one of those.
  auto& store = catalog.metastore().maintenance();
  TM_ASSIGN(auto known, store.Noncurrent(w.id.str(), ident.ns, ident.name));
  std::map<std::string, metastore::NoncurrentObject> found_before;
  for (auto& k : known) found_before.emplace(k.object_key, std::move(k));
  std::vector<metastore::NoncurrentObject> noncurrent;
  const int64_t now = clock.NowMillis();
  for (const auto& o : listed) {
    const std::string file = WarehouseFiles::LocationOf(w, o.key);
    if (referenced.count(file) || file.ends_with("/metadata/version-hint.text")) continue;
    if (std::any_of(nested.begin(), nested.end(),
                    [&](const std::string& n) { return file.starts_with(n); })) {
      result.files_nested++;
      continue;
    }
    result.orphans_found++;
    const auto size = static_cast<int64_t>(o.size);
    auto before = found_before.find(o.key);
    // The clock runs from when the key was first found unreferenced, whatever was written
    // under it since: rewriting an object that nothing commits must not keep it unmetered
    // forever (engines never rewrite a file in place; they write new names).
    const int64_t found_ms = before != found_before.end() ? before->second.found_ms : now;
    if (now - found_ms < grace_ms) {
      result.orphans_kept_young++;
      result.noncurrent_bytes += size;
      noncurrent.push_back({o.key, size, found_ms});
      continue;
    }
    auto deleted = catalog.files().Delete(w, file);
    if (!deleted) {
      noncurrent.push_back({o.key, size, found_ms});  // tried again by the next run
      continue;
    }
    result.orphans_deleted++;
    result.bytes_deleted += size;
  }
  // What is referenced again (a slow writer committed it) or gone leaves the stage.
  TM_TRY(store.ReplaceNoncurrent(w.id.str(), ident.ns, ident.name, noncurrent));
  result.ran = true;
  return result;
}

}  // namespace

namespace {

// Rewriting adds files before expiry removes the old ones: not while the warehouse is
// over its quota, when only what frees space runs.
constexpr char kOverQuota[] =
    "the warehouse is over its storage quota: rewriting waits until space is freed "
    "(snapshot expiry and orphan cleanup still run)";

// Compactions run one at a time across every server over the metastore.
constexpr char kBudgetHeld[] =
    "another compaction is running (on this or another server); the table's next visit "
    "compacts it";

Json Reason(const std::string& reason) { return reason.empty() ? Json(nullptr) : Json(reason); }

// The table's uuid as the catalog has it now ("" when it cannot be read).
std::string UuidOf(CatalogService& catalog, const metastore::Warehouse& w,
                   const TableIdent& ident) {
  auto entry = catalog.metastore().catalog().GetEntryHead(w.id, ident.ns, ident.name);
  return entry ? entry->uuid : "";
}

}  // namespace

Json ToJson(const ExpireResult& r) {
  return {{"ran", r.ran},
          {"skipped_because", Reason(r.reason)},
          {"snapshots_before", r.snapshots_before},
          {"snapshots_expired", r.snapshots_expired},
          {"files_deleted", r.files_deleted},
          {"files_already_gone", r.files_missing}};
}

Json ToJson(const OrphanResult& r) {
  return {{"ran", r.ran},
          {"skipped_because", Reason(r.reason)},
          {"files_listed", r.files_listed},
          {"orphans_found", r.orphans_found},
          {"orphans_deleted", r.orphans_deleted},
          {"bytes_deleted", r.bytes_deleted},
          {"orphans_kept_young", r.orphans_kept_young},
          {"noncurrent_bytes", r.noncurrent_bytes},
          {"files_nested", r.files_nested}};
}

Json ToJson(const CompactResult& r) {
  return {{"ran", r.ran},
          {"skipped_because", Reason(r.reason)},
          {"data_files_before", r.data_files_before},
          {"data_files_after", r.data_files_after},
          {"data_bytes_before", r.data_bytes_before},
          {"data_bytes_after", r.data_bytes_after},
          {"files_rewritten", r.files_rewritten},
          {"files_written", r.files_written},
          {"bins", r.bins},
          {"bins_failed", r.bins_failed},
          {"delete_files_removed", r.delete_files_removed},
          {"delete_files_merged", r.delete_files_merged},
          {"delete_files_misfiled", r.delete_files_misfiled},
          {"delete_files_written", r.delete_files_written},
          {"position_deletes_dropped", r.position_deletes_dropped},
          {"rows_deleted", r.rows_deleted},
          {"snapshot_id", r.snapshot_id >= 0 ? Json(r.snapshot_id) : Json(nullptr)}};
}

Json ToJson(const ManifestRewriteResult& r) {
  return {{"ran", r.ran},
          {"skipped_because", Reason(r.reason)},
          {"manifests_before", r.manifests_before},
          {"manifests_after", r.manifests_after},
          {"entries_kept", r.entries_kept},
          {"entries_dropped", r.entries_dropped},
          {"snapshot_id", r.snapshot_id >= 0 ? Json(r.snapshot_id) : Json(nullptr)}};
}

Result<ManifestRewriteResult> TableMaintenance::RewriteManifests(const metastore::Warehouse& w,
                                                                 const TableIdent& ident,
                                                                 bool sweep) {
  ManifestRewriteResult r;
  if (w.read_only_ms != 0) {
    r.reason = kOverQuota;
  } else {
    TM_ASSIGN(r, maintenance::RewriteManifests(catalog_, clock_, random_, w, ident,
                                               sweep ? options_.compaction.quiet_ms : 0));
  }
  Record(w, ident, "rewrite-manifests", ToJson(r));
  return r;
}

void TableMaintenance::Record(const metastore::Warehouse& w, const TableIdent& ident,
                              const std::string& job, Json result) {
  result["table_uuid"] = UuidOf(catalog_, w, ident);
  (void)catalog_.metastore().maintenance().RecordRun(
      {w.id.str(), ident.ns, ident.name, job, clock_.NowMillis(), result.dump()});
}

Result<ExpireResult> TableMaintenance::Expire(const metastore::Warehouse& w,
                                              const TableIdent& ident) {
  TM_ASSIGN(auto r, Guarded([&] { return ExpireTable(catalog_, clock_, options_, w, ident); }));
  Record(w, ident, "expire", ToJson(r));
  return r;
}

Result<OrphanResult> TableMaintenance::Orphans(const metastore::Warehouse& w,
                                               const TableIdent& ident, int64_t grace_ms) {
  TM_ASSIGN(auto r, Guarded([&] { return OrphanTable(catalog_, clock_, w, ident, grace_ms); }));
  Record(w, ident, "orphans", ToJson(r));
  return r;
}

namespace {

Json VisitPayload(const metastore::Warehouse& w, const TableIdent& ident) {
  return {{"warehouse_id", w.id.str()}, {"namespace", ident.ns}, {"table", ident.name}};
}

}  // namespace

Result<Json> TableMaintenance::Status(const metastore::Warehouse& w, const TableIdent& ident,
                                      const std::string& table_uuid) {
  TM_ASSIGN(auto runs,
            catalog_.metastore().maintenance().LastRuns(w.id.str(), ident.ns, ident.name));
  Json jobs = Json::object();
  for (const auto& run : runs) {
    Json result = Json::parse(run.result_json, nullptr, false);
    if (!result.is_object() || result.value("table_uuid", "") != table_uuid) continue;
    result.erase("table_uuid");
    jobs[run.job] = {{"last_run_at", FormatIso8601(run.at_ms)}, {"result", result}};
  }
  for (const char* job : {"compact", "rewrite-manifests", "expire", "orphans"}) {
    if (!jobs.contains(job)) jobs[job] = {{"last_run_at", nullptr}, {"result", nullptr}};
  }
  // Every sweep visits every table; a table clients wrote is visited sooner.
  Json next_due = nullptr;
  if (options_.sweep_interval_ms > 0) {
    int64_t due = next_sweep_ms_.load();
    auto pending =
        catalog_.metastore().maintenance().FindPendingVisit(VisitPayload(w, ident).dump());
    if (pending && *pending) due = std::min(due, VisitDue(**pending));
    next_due = FormatIso8601(due);
  }
  return Json{{"enabled", options_.sweep_interval_ms > 0},
              {"jobs", jobs},
              {"next_due_at", next_due},
              {"orphan_grace_seconds", options_.orphan_grace_ms / 1000}};
}

Result<CompactResult> TableMaintenance::Compact(const metastore::Warehouse& w,
                                                const TableIdent& ident, bool sweep) {
  if (w.read_only_ms != 0) {
    CompactResult r;
    r.reason = kOverQuota;
    Record(w, ident, "compact", ToJson(r));
    return r;
  }
  // One at a time in this server (the others wait); across servers, one holds the budget.
  std::lock_guard lock(worker_mu_);
  TM_ASSIGN(std::optional<int64_t> allowance, budget_.Reserve());
  if (!allowance) {
    CompactResult r;
    r.reason = kBudgetHeld;
    Record(w, ident, "compact", ToJson(r));
    return r;
  }
  Result<CompactResult> compacted = [&] {
    // Renewed while it runs, so other servers wait for it and not for a dead one.
    std::jthread renewer([this](std::stop_token stop) {
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock lock(mu);
      while (true) {
        cv.wait_for(lock, stop, std::chrono::milliseconds(budget_.lease_ms() / 3),
                    [] { return false; });
        if (stop.stop_requested()) return;
        (void)budget_.Renew();
      }
    });
    return CompactTable(catalog_, clock_, random_, options_.compaction, w, ident, *allowance,
                        sweep ? options_.compaction.quiet_ms : 0);
  }();
  // Charged whether or not it succeeded; if it cannot be, the reservation runs out and all
  // of it counts.
  (void)budget_.Release(compacted ? compacted->bytes_read : 0);
  TM_ASSIGN(CompactResult r, std::move(compacted));
  Record(w, ident, "compact", ToJson(r));
  return r;
}

int64_t TableMaintenance::VisitDue(const metastore::PendingVisit& p) const {
  const int64_t quiet = options_.compaction.quiet_ms;
  return std::min(p.last_ms + quiet, p.first_ms + 3 * quiet);
}

void TableMaintenance::NoteCommit(const metastore::Warehouse& w, const TableIdent& ident) {
  const std::string key = VisitPayload(w, ident).dump();
  const int64_t now = clock_.NowMillis();
  // Noted in the metastore at most once a tenth of the quiet period by this server while
  // the visit is not yet due by what it wrote there: the visit cannot have ended before
  // then, and it comes that much sooner at most.
  const int64_t interval = options_.compaction.quiet_ms / 10;
  {
    std::lock_guard lock(noted_mu_);
    auto it = noted_.find(key);
    if (it != noted_.end() && now < VisitDue(it->second.visit) &&
        now - it->second.written_ms < interval) {
      return;
    }
  }
  auto noted = catalog_.metastore().maintenance().NoteCommit(
      key, now, {kMaintainTableTask, key, options_.compaction.quiet_ms});
  std::lock_guard lock(noted_mu_);
  std::erase_if(noted_, [&](const auto& kv) { return now >= VisitDue(kv.second.visit); });
  // Not noted: the next commit tries again, and the sweep visits the table anyway.
  if (noted) noted_[key] = Noted{noted->visit, now};
}

Result<void> TableMaintenance::RunQueued(const std::string& payload_json) {
  const Json payload = Json::parse(payload_json, nullptr, false);
  if (!payload.is_object() || !payload.contains("warehouse_id") ||
      !payload["warehouse_id"].is_string() || !payload.contains("namespace") ||
      !payload["namespace"].is_array() || !payload.contains("table") ||
      !payload["table"].is_string()) {
    return {};  // not ours to retry: nothing could ever run it
  }
  TableIdent ident;
  for (const auto& level : payload["namespace"]) {
    if (!level.is_string()) return {};
    ident.ns.push_back(level.get<std::string>());
  }
  ident.name = payload["table"].get<std::string>();
  const std::string key = payload.dump();
  const int64_t now = clock_.NowMillis();
  // Runs now if its pending visit is due and ends here (a commit from then on queues the
  // next visit), or if there is none (a visit queued before visits were kept in the
  // metastore); else it is queued again for when it will be due.
  int64_t later = 0;
  bool run = false;
  auto& store = catalog_.metastore().maintenance();
  for (int round = 0; round < 3 && !run && later == 0; round++) {
    TM_ASSIGN(auto pending, store.FindPendingVisit(key));
    if (!pending) {
      run = true;
      break;
    }
    const int64_t due = VisitDue(*pending);
    if (due > now) {
      later = due - now;
      break;
    }
    // Not ended when a commit came meanwhile: its due time is read again.
    TM_ASSIGN(run, store.EndPendingVisit(key, pending->last_ms));
  }
  if (!run) {
    if (later == 0) later = 1000;  // commits kept coming while it tried to end the visit
    return catalog_.metastore().tasks().EnqueueTask({kMaintainTableTask, key, later});
  }
  {
    std::lock_guard lock(noted_mu_);
    noted_.erase(key);
  }
  auto w = catalog_.metastore().warehouses().FindWarehouse(
      WarehouseId(payload["warehouse_id"].get<std::string>()));
  if (!w) return w.error().code == ErrorCode::kNotFound ? Result<void>{} : Fail(w.error());
  // Each job records its own result; a table dropped meanwhile is skipped by them all.
  (void)Compact(*w, ident, /*sweep=*/true);
  (void)RewriteManifests(*w, ident, /*sweep=*/true);
  (void)Expire(*w, ident);
  return {};
}

Result<TableMaintenance::SweepResult> TableMaintenance::SweepAll() {
  next_sweep_ms_ = clock_.NowMillis() + options_.sweep_interval_ms;
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
        auto c = Compact(w, ident, /*sweep=*/true);
        if (!c) {
          sweep.failures++;
        } else if (c->ran) {
          sweep.compacted++;
        }
        if (!RewriteManifests(w, ident, /*sweep=*/true)) sweep.failures++;
        auto r = Expire(w, ident);
        if (!r) {
          sweep.failures++;
          continue;
        }
        sweep.expired_snapshots += r->snapshots_expired;
        sweep.files_deleted += r->files_deleted;
        auto o = Orphans(w, ident, options_.orphan_grace_ms);
        if (!o) {
          sweep.failures++;
          continue;
        }
        sweep.files_deleted += o->orphans_deleted;
      }
    }
  }
  return sweep;
}

}  // namespace tablemere::maintenance
