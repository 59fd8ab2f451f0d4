#include "catalog/view_service.h"

#include "catalog/commit_loop.h"
#include "iceberg/view_metadata.h"

namespace tablemere::catalog {

namespace {

Error NoSuchView(const TableIdent& ident) {
  return Error{
      ErrorCode::kNotFound, "View does not exist: " + JoinDots(ident.ns) + "." + ident.name, {}}
      .With("missing", "view");
}

std::string ViewName(const TableIdent& ident) {
  return "view " + JoinDots(ident.ns) + "." + ident.name;
}

Error Collision(const metastore::TableEntry& existing) {
  return NameTaken("view", existing.kind, TableIdent{existing.namespace_levels, existing.name});
}

}  // namespace

Result<metastore::TableEntry> ViewService::Entry(const metastore::Warehouse& w,
                                                 const TableIdent& ident) {
  auto entry = catalog_.metastore().catalog().GetEntry(w.id, ident.ns, ident.name);
  if (!entry) {
    if (entry.error().code == ErrorCode::kNotFound) return Fail(NoSuchView(ident));
    return Fail(entry.error());
  }
  if (entry->kind != "view") return Fail(NoSuchView(ident));
  return entry;
}

Result<std::vector<TableIdent>> ViewService::List(const metastore::Warehouse& w,
                                                  const Namespace& ns) {
  auto& store = catalog_.metastore().catalog();
  TM_TRY(store.GetNamespace(w.id, ns));
  TM_ASSIGN(auto entries, store.ListEntries(w.id, ns, "view"));
  std::vector<TableIdent> out;
  for (const auto& e : entries) out.push_back(TableIdent{e.namespace_levels, e.name});
  return out;
}

Result<LoadedView> ViewService::Create(const CatalogPrincipal& caller,
                                       const metastore::Warehouse& w, const Namespace& ns,
                                       const Json& request) {
  // ---- validate
  TM_TRY(RequireWrite(caller));
  if (!request.is_object() || !request.contains("name") || !request["name"].is_string()) {
    return Fail(BadRequest("name is required"));
  }
  TableIdent ident{ns, request["name"].get<std::string>()};
  if (!ValidName(ident.name)) return Fail(BadRequest("Invalid view name '" + ident.name + "'"));
  if (request.contains("location") && !request["location"].is_null() &&
      !request["location"].is_string()) {
    return Fail(BadRequest("location must be a string"));
  }
  auto& store = catalog_.metastore().catalog();
  TM_TRY(store.GetNamespace(w.id, ns));
  if (auto existing = store.GetEntry(w.id, ns, ident.name)) return Fail(Collision(*existing));
  std::string location;
  if (request.contains("location") && request["location"].is_string() &&
      !request["location"].get<std::string>().empty()) {
    location = request["location"].get<std::string>();
    while (location.ends_with("/")) location.pop_back();
    TM_TRY(catalog_.files().KeyOf(w, location));
    TM_TRY(catalog_.CheckOutsideGenericTables(catalog_.metastore(), w, location));  // fast
  } else {
    location = WarehouseFiles::Root(w) + JoinPath(ns) + "/" + ident.name;
    TM_ASSIGN(bool occupied, catalog_.files().Occupied(w, location));
    if (occupied) location += "-" + random_.Uuid().substr(0, 8);
  }
  TM_ASSIGN(Json metadata,
            iceberg::NewViewMetadata(request, location, random_.Uuid(), clock_.NowMillis()));
  // ---- apply
  TM_ASSIGN(std::string metadata_location,
            catalog_.files().WriteMetadata(w, location, 0, metadata));
  metastore::TableEntry entry{w.id,
                              ns,
                              ident.name,
                              "view",
                              metadata.value("view-uuid", ""),
                              location,
                              metadata_location,
                              metadata.dump(),
                              clock_.NowMillis(),
                              clock_.NowMillis()};
  auto created = catalog_.CreateEntry(entry, [&](metastore::Stores& stores) {
    return catalog_.CheckOutsideGenericTables(stores, w, location);
  });
  if (!created) {
    if (created.error().code == ErrorCode::kAlreadyExists) {
      if (auto existing = store.GetEntry(w.id, ns, ident.name)) return Fail(Collision(*existing));
    }
    return Fail(created.error());
  }
  return LoadedView{metadata_location, metadata, catalog_.files().BaseConfig()};
}

Result<LoadedView> ViewService::Load(const metastore::Warehouse& w, const TableIdent& ident) {
  TM_ASSIGN(auto entry, Entry(w, ident));
  TM_ASSIGN(Json metadata, ParseStored(entry.metadata_json, ViewName(ident)));
  return LoadedView{entry.metadata_location, std::move(metadata), catalog_.files().BaseConfig()};
}

Result<LoadedView> ViewService::Replace(const CatalogPrincipal& caller,
                                        const metastore::Warehouse& w, const TableIdent& ident,
                                        const Json& requirements, const Json& updates) {
  TM_TRY(RequireWrite(caller));
  if (!requirements.is_array() || !updates.is_array()) {
    return Fail(BadRequest("requirements and updates must be arrays"));
  }
  auto prepare = [&]() -> Result<std::vector<EntryChange>> {
    TM_ASSIGN(auto entry, Entry(w, ident));
    TM_ASSIGN(Json current, ParseStored(entry.metadata_json, ViewName(ident)));
    for (const auto& r : requirements) TM_TRY(iceberg::CheckViewRequirement(current, r));
    TM_ASSIGN(Json next, iceberg::ApplyViewUpdates(current, updates, clock_.NowMillis()));
    EntryChange change;
    change.expected_metadata_location = entry.metadata_location;
    if (next == current) {
      change.changed = false;
      change.next = std::move(current);
      return std::vector<EntryChange>{std::move(change)};
    }
    TM_ASSIGN(std::string location,
              StoredString(next, "location", entry.location, ViewName(ident)));
    TM_TRY(catalog_.files().KeyOf(w, location));
    change.replacement = std::move(entry);
    change.replacement.location = location;
    change.replacement.updated_ms = clock_.NowMillis();
    change.next = std::move(next);
    return std::vector<EntryChange>{std::move(change)};
  };
  TM_ASSIGN(auto published, CommitOptimistically(catalog_.metastore().catalog(), catalog_.files(),
                                                 w, commit_retries_, "view", prepare));
  return LoadedView{std::move(published.front().metadata_location),
                    std::move(published.front().metadata), catalog_.files().BaseConfig()};
}

Result<void> ViewService::Drop(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                               const TableIdent& ident) {
  TM_TRY(RequireDelete(caller));
  auto dropped = catalog_.metastore().catalog().DropEntry(w.id, ident.ns, ident.name, "view");
  if (!dropped) {
    if (dropped.error().code == ErrorCode::kNotFound) return Fail(NoSuchView(ident));
    return Fail(dropped.error());
  }
  return {};
}

Result<void> ViewService::Rename(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                                 const TableIdent& from, const TableIdent& to) {
  TM_TRY(RequireWrite(caller));
  if (!ValidName(to.name)) return Fail(BadRequest("Invalid view name '" + to.name + "'"));
  auto& store = catalog_.metastore().catalog();
  TM_TRY(Entry(w, from));
  auto r = store.RenameEntry(w.id, from.ns, from.name, to.ns, to.name, "view");
  if (!r && r.error().code == ErrorCode::kAlreadyExists) {
    auto existing = store.GetEntry(w.id, to.ns, to.name);
    if (existing) return Fail(RenameTargetTaken(from, to, existing->kind));
  }
  return r;
}

Result<LoadedView> ViewService::Register(const CatalogPrincipal& caller,
                                         const metastore::Warehouse& w, const Namespace& ns,
                                         const std::string& name,
                                         const std::string& metadata_location) {
  TM_TRY(RequireWrite(caller));
  if (!ValidName(name)) return Fail(BadRequest("Invalid view name '" + name + "'"));
  auto& store = catalog_.metastore().catalog();
  TM_TRY(store.GetNamespace(w.id, ns));
  TM_ASSIGN(Json metadata, catalog_.files().ReadJson(w, metadata_location));
  if (!metadata.contains("view-uuid") || !metadata["view-uuid"].is_string() ||
      !metadata.contains("location") || !metadata["location"].is_string()) {
    return Fail(BadRequest(metadata_location + " is not Iceberg view metadata"));
  }
  std::string location = metadata["location"].get<std::string>();
  TM_TRY(catalog_.files().KeyOf(w, location));
  if (auto existing = store.GetEntry(w.id, ns, name)) return Fail(Collision(*existing));
  metastore::TableEntry entry{w.id,
                              ns,
                              name,
                              "view",
                              metadata["view-uuid"].get<std::string>(),
                              location,
                              metadata_location,
                              metadata.dump(),
                              clock_.NowMillis(),
                              clock_.NowMillis()};
  TM_TRY(store.SwapMetadata({metastore::MetadataSwap{w.id, ns, name, "", entry}}));
  return LoadedView{metadata_location, metadata, catalog_.files().BaseConfig()};
}

}  // namespace tablemere::catalog
