#include "catalog/generic_table_service.h"

#include "iceberg/json_access.h"

#include "common/strings.h"
#include "storage/access.h"

namespace tablemere::catalog {

namespace {

// A listing names each table's format; a record that lost it (or never had a string
// there) lists with none rather than failing the whole page.
std::string FormatOf(const Json& record) {
  const Json* f = record.is_object() ? iceberg::Member(record, "format") : nullptr;
  return f && f->is_string() ? f->get<std::string>() : std::string();
}

}  // namespace

namespace {

Error NoSuchGeneric(const TableIdent& ident) {
  return Error{ErrorCode::kNotFound,
               "Generic table does not exist: " + JoinDots(ident.ns) + "." + ident.name,
               {}}
      .With("missing", "generic");
}

Error Collision(const metastore::TableEntry& existing) {
  return NameTaken("generic", existing.kind, TableIdent{existing.namespace_levels, existing.name});
}

// The record's CAS token: changes whenever the record does.
std::string NextVersion(const std::string& id, int64_t now) {
  return "generic:" + id + ":" + std::to_string(now);
}

}  // namespace

Result<metastore::TableEntry> GenericTableService::Entry(const metastore::Warehouse& w,
                                                         const TableIdent& ident) {
  auto entry = catalog_.metastore().catalog().GetEntry(w.id, ident.ns, ident.name);
  if (!entry) {
    if (entry.error().code == ErrorCode::kNotFound) return Fail(NoSuchGeneric(ident));
    return Fail(entry.error());
  }
  if (entry->kind != "generic") return Fail(NoSuchGeneric(ident));
  return entry;
}

Result<LoadedGenericTable> GenericTableService::Loaded(const CatalogPrincipal& caller,
                                                       const metastore::Warehouse& w,
                                                       const TableIdent& ident,
                                                       const metastore::TableEntry& entry,
                                                       bool vend) {
  LoadedGenericTable out;
  const std::string what = "generic table " + JoinDots(ident.ns) + "." + ident.name;
  TM_ASSIGN(out.table, ParseStored(entry.metadata_json, what));
  TM_ASSIGN(std::string format, StoredString(out.table, "format", "", what));
  out.table["name"] = ident.name;  // a rename changes the name, not the record
  out.config = catalog_.files().BaseConfig();
  if (vend) {
    StorageCredential c = catalog_.files().Vend(
        caller, w, entry.location,
        "lakekeeper/v1/w-" + w.id + "/namespaces/" + UrlEncode(JoinNsWire(ident.ns)) +
            "/generic-tables/" + UrlEncode(ident.name) + "/credentials",
        format);
    for (const auto& [k, v] : c.config) out.config[k] = v;
    out.credentials.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<GenericTableSummary>> GenericTableService::List(const metastore::Warehouse& w,
                                                                   const Namespace& ns) {
  auto& store = catalog_.metastore().catalog();
  TM_TRY(store.GetNamespace(w.id, ns));
  TM_ASSIGN(auto entries, store.ListEntries(w.id, ns, "generic"));
  std::vector<GenericTableSummary> out;
  for (const auto& e : entries) {
    Json record = Json::parse(e.metadata_json, nullptr, false);
    out.push_back(
        GenericTableSummary{TableIdent{e.namespace_levels, e.name}, e.uuid, FormatOf(record)});
  }
  return out;
}

Result<LoadedGenericTable> GenericTableService::Create(const CatalogPrincipal& caller,
                                                       const metastore::Warehouse& w,
                                                       const Namespace& ns, const Json& request,
                                                       bool vend) {
  // ---- validate
  TM_TRY(RequireWrite(caller));
  if (!request.is_object()) return Fail(BadRequest("Expected a JSON object"));
  auto str = [&](const char* field) -> const Json* {
    auto it = request.find(field);
    return it == request.end() || it->is_null() ? nullptr : &*it;
  };
  const Json* name = str("name");
  const Json* format = str("format");
  if (!name || !name->is_string()) return Fail(BadRequest("name (a string) is required"));
  if (!format || !format->is_string()) return Fail(BadRequest("format (a string) is required"));
  TableIdent ident{ns, name->get<std::string>()};
  if (!ValidName(ident.name)) return Fail(BadRequest("Invalid table name '" + ident.name + "'"));
  std::string fmt = ToLower(format->get<std::string>());
  if (!storage::IsSupportedGenericFormat(fmt)) {
    return Fail(BadRequest("Unsupported format '" + format->get<std::string>() +
                           "'; the table bucket stores lance, delta, csv or parquet tables"));
  }
  const Json* doc = str("doc");
  if (doc && !doc->is_string()) return Fail(BadRequest("doc must be a string"));
  const Json* props = str("properties");
  if (props) {
    if (!props->is_object()) return Fail(BadRequest("properties must be an object of strings"));
    for (const auto& [k, v] : props->items()) {
      if (!v.is_string()) return Fail(BadRequest("property '" + k + "' must be a string"));
    }
  }
  const Json* base = str("base-location");
  if (base && !base->is_string()) return Fail(BadRequest("base-location must be a string"));
  auto& store = catalog_.metastore().catalog();
  TM_TRY(store.GetNamespace(w.id, ns));
  if (auto existing = store.GetEntry(w.id, ns, ident.name)) return Fail(Collision(*existing));
  std::string id = random_.Uuid();
  std::string location;
  if (base && !base->get<std::string>().empty()) {
    location = base->get<std::string>();
    while (location.ends_with("/")) location.pop_back();
    TM_ASSIGN(std::string key, catalog_.files().KeyOf(w, location));
    // The table bucket refuses such keys, and the overlap check compares text.
    for (const auto& part : Split(key, '/')) {
      if (part.empty() || part == "." || part == "..") {
        return Fail(BadRequest("base-location '" + location +
                               "' must not contain empty, '.' or '..' path segments"));
      }
    }
    TM_TRY(catalog_.CheckLocationFree(catalog_.metastore(), w, ident, location));
  } else {
    location = WarehouseFiles::Root(w) + JoinPath(ns) + "/" + ident.name;
    TM_ASSIGN(bool occupied, catalog_.files().Occupied(w, location));
    if (occupied) location += "-" + id.substr(0, 8);
    TM_TRY(catalog_.CheckLocationFree(catalog_.metastore(), w, ident, location));
  }
  // ---- apply
  Json record = {{"id", id},
                 {"name", ident.name},
                 {"format", fmt},
                 {"base-location", location},
                 {"doc", doc ? *doc : Json(nullptr)},
                 {"properties", props ? *props : Json::object()},
                 {"protected", false}};
  if (const Json* schema = str("schema")) record["schema"] = *schema;
  if (const Json* stats = str("statistics")) record["statistics"] = *stats;
  int64_t now = clock_.NowMillis();
  metastore::TableEntry entry{
      w.id, ns, ident.name, "generic", id, location, NextVersion(id, now), record.dump(), now, now};
  // Checked again where the entry is written: a concurrent create at an overlapping
  // location is seen by one of the two checks.
  auto created = catalog_.CreateEntry(entry, [&](metastore::Stores& stores) {
    return catalog_.CheckLocationFree(stores, w, ident, location);
  });
  if (!created) {
    if (created.error().code == ErrorCode::kAlreadyExists) {
      if (auto existing = store.GetEntry(w.id, ns, ident.name)) return Fail(Collision(*existing));
    }
    return Fail(created.error());
  }
  return Loaded(caller, w, ident, entry, vend);
}

Result<LoadedGenericTable> GenericTableService::Load(const CatalogPrincipal& caller,
                                                     const metastore::Warehouse& w,
                                                     const TableIdent& ident, bool vend) {
  TM_ASSIGN(auto entry, Entry(w, ident));
  return Loaded(caller, w, ident, entry, vend);
}

Result<void> GenericTableService::Drop(const CatalogPrincipal& caller,
                                       const metastore::Warehouse& w, const TableIdent& ident) {
  TM_TRY(RequireDelete(caller));
  TM_ASSIGN(auto entry, Entry(w, ident));
  const std::string what = "generic table " + JoinDots(ident.ns) + "." + ident.name;
  TM_ASSIGN(Json record, ParseStored(entry.metadata_json, what));
  TM_ASSIGN(bool is_protected, StoredBool(record, "protected", false, what));
  if (is_protected) {
    return Fail(Error{
        ErrorCode::kConflict,
        "Generic table " + JoinDots(ident.ns) + "." + ident.name +
            " is protected; unprotect it first (POST …/generic-tables/" + ident.name +
            "/protection {\"protected\": false})",
        {}}.With("iceberg_type", "ProtectedException"));
  }
  // The table is unreachable as soon as the entry is gone; its files follow in the
  // background, unless another entry lives inside its location. The purge is queued with
  // the drop (a crash never drops without it) and names the warehouse, so it re-checks
  // when it runs that no entry was created there meanwhile.
  TM_ASSIGN(std::string key, catalog_.files().KeyOf(w, entry.location));
  const bool sole =
      catalog_.CheckLocationFree(catalog_.metastore(), w, ident, entry.location).has_value();
  metastore::CatalogStore::DropFollowUp follow_up =
      [&](const metastore::TableEntry& dropping) -> Result<std::optional<metastore::NewTask>> {
    // Protected (or otherwise changed) since it was read: the drop is refused whole.
    if (dropping.metadata_location != entry.metadata_location) {
      return Fail(Error{
          ErrorCode::kConflict,
          "Generic table " + JoinDots(ident.ns) + "." + ident.name +
              " changed while it was being dropped; load it and retry",
          {}}.With("conflict", metastore::kStalePointer));
    }
    if (!sole) return std::optional<metastore::NewTask>();
    Json payload = {
        {"warehouse", w.id.str()}, {"bucket", WarehouseFiles::Bucket(w)}, {"prefix", key + "/"}};
    return std::optional<metastore::NewTask>(metastore::NewTask{"purge_prefix", payload.dump(), 0});
  };
  TM_TRY(
      catalog_.metastore().catalog().DropEntry(w.id, ident.ns, ident.name, "generic", follow_up));
  return {};
}

Result<void> GenericTableService::Rename(const CatalogPrincipal& caller,
                                         const metastore::Warehouse& w, const TableIdent& from,
                                         const TableIdent& to) {
  TM_TRY(RequireWrite(caller));
  if (!ValidName(to.name)) return Fail(BadRequest("Invalid table name '" + to.name + "'"));
  TM_TRY(Entry(w, from));
  auto& store = catalog_.metastore().catalog();
  auto r = store.RenameEntry(w.id, from.ns, from.name, to.ns, to.name, "generic");
  if (!r && r.error().code == ErrorCode::kAlreadyExists) {
    if (auto existing = store.GetEntry(w.id, to.ns, to.name)) {
      return Fail(RenameTargetTaken(from, to, existing->kind));
    }
  }
  return r;
}

Result<std::vector<StorageCredential>> GenericTableService::Credentials(
    const CatalogPrincipal& caller, const metastore::Warehouse& w, const TableIdent& ident,
    const std::vector<TableIdent>& referenced_by, const std::string& request_id) {
  TM_ASSIGN(auto entry, Entry(w, ident));
  Json chain = Json::array();
  for (const auto& view : referenced_by) {
    auto v = catalog_.metastore().catalog().GetEntry(w.id, view.ns, view.name);
    if (!v || v->kind != "view") {
      return Fail(Error{
          ErrorCode::kNotFound,
          "referenced-by names a view that does not exist: " + JoinDots(view.ns) + "." + view.name,
          {}}.With("missing", "view"));
    }
    chain.push_back(JoinDots(view.ns) + "." + view.name);
  }
  TM_ASSIGN(LoadedGenericTable loaded, Loaded(caller, w, ident, entry, true));
  metastore::AuditEvent event;
  event.at_ms = clock_.NowMillis();
  event.principal_id = caller.identity;
  event.org_id = w.org_id;
  event.action = "credentials.vend";
  event.target_type = "generic_table";
  event.target_id = JoinDots(ident.ns) + "." + ident.name;
  event.request_id = request_id;
  event.detail_json = Json{
      {"warehouse_id", w.id},
      {"read_only", caller.read_only},
      {"location", entry.location},
      {"referenced_by",
       chain}}.dump();
  TM_TRY(catalog_.metastore().audit().Record(event));
  return loaded.credentials;
}

Result<LoadedGenericTable> GenericTableService::SetProtected(const CatalogPrincipal& caller,
                                                             const metastore::Warehouse& w,
                                                             const TableIdent& ident,
                                                             bool protect) {
  TM_TRY(RequireWrite(caller));
  TM_ASSIGN(auto entry, Entry(w, ident));
  TM_ASSIGN(Json record, ParseStored(entry.metadata_json,
                                     "generic table " + JoinDots(ident.ns) + "." + ident.name));
  record["protected"] = protect;
  metastore::TableEntry next = entry;
  next.metadata_json = record.dump();
  next.updated_ms = clock_.NowMillis();
  next.metadata_location =
      NextVersion(entry.uuid, next.updated_ms) + ":" + random_.Uuid().substr(0, 8);
  TM_TRY(catalog_.metastore().catalog().SwapMetadata(
      {metastore::MetadataSwap{w.id, ident.ns, ident.name, entry.metadata_location, next}}));
  return Loaded(caller, w, ident, next, false);
}

}  // namespace tablemere::catalog
