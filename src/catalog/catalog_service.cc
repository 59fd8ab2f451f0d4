#include "catalog/catalog_service.h"

#include "catalog/commit_rebaser.h"

#include "catalog/commit_loop.h"
#include "catalog/drop_record.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include <set>
#include "common/crypto.h"
#include "common/strings.h"
#include "iceberg/json_access.h"

namespace tablemere::catalog {

namespace {

Error OAuthError(const std::string& error, const std::string& description) {
  return Error{ErrorCode::kUnauthenticated, description, {}}.With("oauth_error", error);
}
}  // namespace

Result<Namespace> ParseNamespace(const std::string& text) {
  std::string decoded = text;
  // The router already percent-decoded the path segment; also accept a literal "%1F".
  size_t pos;
  while ((pos = decoded.find("%1F")) != std::string::npos) decoded.replace(pos, 3, "\x1f");
  while ((pos = decoded.find("%1f")) != std::string::npos) decoded.replace(pos, 3, "\x1f");
  Namespace ns = Split(decoded, '\x1f');
  for (const auto& level : ns) {
    if (!ValidName(level)) return Fail(BadRequest("Invalid namespace: '" + text + "'"));
  }
  return ns;
}

CatalogService::CatalogService(metastore::Metastore& meta, objectstore::ObjectStore& objects,
                               const Clock& clock, Random& random,
                               const storage::SessionSealer& sealer,
                               const accounts::IdentitySecrets& secrets,
                               const CatalogTokens& tokens, CatalogOptions options)
    : meta_(meta),
      objects_(objects),
      clock_(clock),
      random_(random),
      sealer_(sealer),
      secrets_(secrets),
      tokens_(tokens),
      options_(std::move(options)),
      files_(objects, clock, random, sealer, options_.s3_url, options_.session_seconds) {}

// ------------------------------------------------------------------ authentication

Result<TokenGrant> CatalogService::ClientCredentials(const std::string& client_id,
                                                     const std::string& secret) {
  auto identity = accounts::ParseIdentityName(client_id);
  if (!identity)
    return Fail(OAuthError("invalid_client", "Unknown client_id or wrong client_secret"));
  auto w = meta_.warehouses().FindWarehouse(WarehouseId(identity->warehouse_id));
  if (!w) {
    if (w.error().code == ErrorCode::kNotFound) {
      return Fail(OAuthError("invalid_client", "Unknown client_id or wrong client_secret"));
    }
    return Fail(w.error());
  }
  std::string expected = secrets_.SecretFor(client_id, w->credential_generation);
  if (!crypto::ConstantTimeEquals(expected, secret)) {
    return Fail(OAuthError("invalid_client", "Unknown client_id or wrong client_secret"));
  }
  CatalogPrincipal p{client_id, w->id, identity->read_only, w->credential_generation, 0};
  TokenGrant grant;
  grant.access_token = tokens_.Mint(p, &grant.expires_in);
  return grant;
}

Result<TokenGrant> CatalogService::ExchangeToken(const std::string& subject_token) {
  auto p = Authenticate(subject_token);
  if (!p) return Fail(OAuthError("invalid_grant", "The subject token is invalid or expired"));
  TokenGrant grant;
  grant.access_token = tokens_.Mint(*p, &grant.expires_in);
  return grant;
}

namespace {

// The warehouse id a prefix names, or the caller's own for "".
// The warehouse id in a prefix: "w-<id>", "s3://w-<id>/" or the id ("" for none).
std::string IdInPrefix(const std::string& name) {
  std::string id = name;
  if (id.starts_with("s3://")) id = id.substr(5);
  while (id.ends_with("/")) id.pop_back();
  if (id.starts_with("w-")) id = id.substr(2);
  return id;
}

Result<std::string> WarehouseIdOf(const CatalogPrincipal& caller, const std::string& name) {
  std::string id = IdInPrefix(name);
  if (id.empty()) id = caller.warehouse_id;
  if (id != caller.warehouse_id) {
    return Fail(Forbidden("This credential belongs to warehouse w-" + caller.warehouse_id +
                          ", not '" + name + "'"));
  }
  return id;
}

// Rotation must refuse old tokens at once, so the generation is read from the metastore
// on every request rather than from a cache.
Result<metastore::Warehouse> CurrentWarehouse(Result<metastore::Warehouse> w,
                                              const CatalogPrincipal& p) {
  if (!w || w->credential_generation != p.generation) {
    return Fail(
        Error{ErrorCode::kUnauthenticated, "Token no longer valid (credential rotated)", {}});
  }
  return w;
}

}  // namespace

Result<CatalogPrincipal> CatalogService::Authenticate(const std::string& bearer) {
  TM_ASSIGN(CatalogPrincipal p, tokens_.Verify(bearer));
  TM_TRY(CurrentWarehouse(meta_.warehouses().FindWarehouse(WarehouseId(p.warehouse_id)), p));
  return p;
}

Result<metastore::Warehouse> CatalogService::Warehouse(const CatalogPrincipal& caller,
                                                       const std::string& name) {
  TM_ASSIGN(std::string id, WarehouseIdOf(caller, name));
  return meta_.warehouses().FindWarehouse(WarehouseId(id));
}

Result<AuthenticatedCaller> CatalogService::AuthenticateFor(const std::string& bearer,
                                                            const std::string& name,
                                                            const TableIdent* table) {
  TM_ASSIGN(CatalogPrincipal p, tokens_.Verify(bearer));
  const WarehouseId id(p.warehouse_id);
  std::optional<TableHead> head;
  Result<metastore::Warehouse> found = Fail(ErrorCode::kNotFound, "");
  if (table) {
    auto both = meta_.catalog().GetWarehouseAndHead(id, table->ns, table->name);
    if (both) {
      head = TableHead{*table, std::move(both->head)};
      found = std::move(both->warehouse);
    } else {
      found = Fail(both.error());
    }
  } else {
    found = meta_.warehouses().FindWarehouse(id);
  }
  TM_ASSIGN(metastore::Warehouse w, CurrentWarehouse(std::move(found), p));
  // Only the caller's own warehouse passes, and that is the one just read.
  TM_TRY(WarehouseIdOf(p, name));
  p.over_quota = w.read_only_ms != 0;
  return AuthenticatedCaller{std::move(p), std::move(w), std::move(head)};
}

Result<AuthenticatedCaller> CatalogService::AuthenticateAnonymous(const std::string& name) {
  const std::string id = IdInPrefix(name);
  const Error refused{ErrorCode::kUnauthenticated,
                      "Authorization: Bearer <token> required (only a published catalog is "
                      "readable without one); get a token at /v1/oauth/tokens",
                      {}};
  if (id.empty()) return Fail(refused);
  auto w = meta_.warehouses().FindWarehouse(WarehouseId(id));
  if (!w) {
    if (w.error().code == ErrorCode::kNotFound) return Fail(refused);
    return Fail(w.error());
  }
  if (w->published_ms == 0 || w->catalog_public_ms == 0) return Fail(refused);
  CatalogPrincipal p{"anonymous", w->id, /*read_only=*/true, w->credential_generation, 0, true};
  return AuthenticatedCaller{std::move(p), std::move(*w)};
}

// ------------------------------------------------------------------ namespaces

Result<std::vector<Namespace>> CatalogService::ListNamespaces(const metastore::Warehouse& w,
                                                              const Namespace& parent) {
  if (!parent.empty()) TM_TRY(meta_.catalog().GetNamespace(w.id, parent));
  TM_ASSIGN(auto list, meta_.catalog().ListNamespaces(w.id, parent));
  std::vector<Namespace> out;
  for (auto& ns : list) out.push_back(std::move(ns.levels));
  return out;
}

Result<Json> CatalogService::CreateNamespace(const CatalogPrincipal& caller,
                                             const metastore::Warehouse& w, const Namespace& ns,
                                             const Json& properties) {
  TM_TRY(RequireWrite(caller));
  if (ns.empty()) return Fail(BadRequest("Namespace must not be empty"));
  for (const auto& level : ns) {
    if (!ValidName(level)) return Fail(BadRequest("Invalid namespace level '" + level + "'"));
  }
  if (!properties.is_object()) return Fail(BadRequest("properties must be an object"));
  for (const auto& [k, v] : properties.items()) {
    if (!v.is_string()) return Fail(BadRequest("property '" + k + "' must be a string"));
  }
  if (ns.size() > 1) {
    Namespace parent(ns.begin(), ns.end() - 1);
    TM_TRY(meta_.catalog().GetNamespace(w.id, parent));
  }
  TM_TRY(meta_.catalog().CreateNamespace(metastore::Namespace{w.id, ns, properties.dump()}));
  return properties;
}

Result<Json> CatalogService::LoadNamespace(const metastore::Warehouse& w, const Namespace& ns) {
  TM_ASSIGN(auto record, meta_.catalog().GetNamespace(w.id, ns));
  Json props = Json::parse(record.properties_json, nullptr, false);
  if (!props.is_object()) props = Json::object();
  if (!props.contains("location")) props["location"] = "s3://w-" + w.id + "/" + JoinPath(ns);
  return props;
}

Result<void> CatalogService::DropNamespace(const CatalogPrincipal& caller,
                                           const metastore::Warehouse& w, const Namespace& ns) {
  TM_TRY(RequireDelete(caller));
  return meta_.catalog().DropNamespace(w.id, ns);
}

Result<Json> CatalogService::UpdateNamespaceProperties(const CatalogPrincipal& caller,
                                                       const metastore::Warehouse& w,
                                                       const Namespace& ns,
                                                       const std::vector<std::string>& removals,
                                                       const Json& updates) {
  TM_TRY(RequireWrite(caller));
  if (!updates.is_object()) return Fail(BadRequest("updates must be an object"));
  for (const auto& r : removals) {
    if (updates.contains(r)) {
      return Fail(Error{
          ErrorCode::kInvalidInput,
          "Property '" + r + "' is both updated and removed",
          {}}.With("iceberg_type", "UnprocessableEntityException"));
    }
  }
  for (const auto& [k, v] : updates.items()) {
    if (!v.is_string()) return Fail(BadRequest("property '" + k + "' must be a string"));
  }
  Json removed = Json::array();
  Json missing = Json::array();
  Json updated = Json::array();
  // Read and written in one transaction: concurrent updates of other keys (on any
  // replica) are kept, not overwritten by a copy read before them.
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_ASSIGN(auto record, txn.catalog().GetNamespace(w.id, ns));
    Json props = Json::parse(record.properties_json, nullptr, false);
    if (!props.is_object()) props = Json::object();
    for (const auto& r : removals) {
      if (props.contains(r)) {
        props.erase(r);
        removed.push_back(r);
      } else {
        missing.push_back(r);
      }
    }
    for (const auto& [k, v] : updates.items()) {
      props[k] = v;
      updated.push_back(k);
    }
    return txn.catalog().UpdateNamespaceProperties(w.id, ns, props.dump());
  }));
  return Json{{"updated", updated}, {"removed", removed}, {"missing", missing}};
}

// ------------------------------------------------------------------ tables

Result<std::vector<TableIdent>> CatalogService::ListTables(const metastore::Warehouse& w,
                                                           const Namespace& ns) {
  TM_TRY(meta_.catalog().GetNamespace(w.id, ns));
  TM_ASSIGN(auto entries, meta_.catalog().ListEntries(w.id, ns, "table"));
  std::vector<TableIdent> out;
  for (const auto& e : entries) out.push_back(TableIdent{e.namespace_levels, e.name});
  return out;
}

std::string CatalogService::DefaultLocation(const metastore::Warehouse& w,
                                            const TableIdent& ident) const {
  return "s3://w-" + w.id + "/" + JoinPath(ident.ns) + "/" + ident.name;
}

Result<std::string> CatalogService::FreeDefaultLocation(const metastore::Warehouse& w,
                                                        const TableIdent& ident) {
  // A rename keeps the table's directory, and a purge deletes its whole prefix later,
  // asynchronously: a new table at an occupied default would share files with the old
  // one and lose its own to that purge.
  std::string location = DefaultLocation(w, ident);
  TM_ASSIGN(std::string key, KeyOf(w, location));
  objectstore::ListOptions opts;
  opts.prefix = key + "/";
  opts.max_keys = 1;
  TM_ASSIGN(auto page, objects_.List(storage::TableBucketName(w.id), opts));
  if (page.objects.empty()) return location;
  return location + "-" + crypto::HexEncode(random_.Bytes(4));
}

Result<Json> CatalogService::ReadMetadataFile(const metastore::Warehouse& w,
                                              const std::string& location) {
  TM_ASSIGN(Json metadata, files_.ReadJson(w, location));
  if (!metadata.contains("format-version")) {
    return Fail(BadRequest(location + " is not Iceberg table metadata"));
  }
  return metadata;
}

std::string CatalogService::RefreshEndpoint(const metastore::Warehouse& w,
                                            const TableIdent& ident) {
  return "v1/w-" + w.id + "/namespaces/" + UrlEncode(JoinNsWire(ident.ns)) + "/tables/" +
         UrlEncode(ident.name) + "/credentials";
}

void CatalogService::AttachCredentials(LoadedTable& table, const CatalogPrincipal& caller,
                                       const metastore::Warehouse& w, const TableIdent& ident,
                                       const std::string& location, bool vend) {
  if (!vend || caller.anonymous) {
    table.config = files_.BaseConfig();
    // PyIceberg and DuckDB then read the published bucket with unsigned requests.
    if (caller.anonymous) table.config["s3.anonymous"] = "true";
    return;
  }
  StorageCredential c = files_.Vend(caller, w, location, RefreshEndpoint(w, ident), "");
  // PyIceberg ignores storage-credentials when metadata-location is null (stage-create),
  // so the same session also goes into config (a credential's config is the base
  // config plus the session).
  table.config = c.config;
  table.credentials.push_back(std::move(c));
}

Result<LoadedTable> CatalogService::CreateTable(const CatalogPrincipal& caller,
                                                const metastore::Warehouse& w, const Namespace& ns,
                                                const Json& request, bool vend,
                                                const AlsoInCreate& also) {
  // ---- validate
  TM_TRY(RequireWrite(caller));
  if (!request.is_object() || !request.contains("name") || !request["name"].is_string()) {
    return Fail(BadRequest("name is required"));
  }
  TableIdent ident{ns, request["name"].get<std::string>()};
  if (!ValidName(ident.name)) return Fail(BadRequest("Invalid table name '" + ident.name + "'"));
  if (!request.contains("schema") || !request["schema"].is_object()) {
    return Fail(BadRequest("schema is required"));
  }
  TM_TRY(meta_.catalog().GetNamespace(w.id, ns));
  auto existing = meta_.catalog().GetEntry(w.id, ns, ident.name);
  if (existing) return Fail(NameTaken("table", existing->kind, ident));
  // Json::value() throws on a type mismatch (a 500); a wrongly typed field is the
  // client's mistake, and a location silently ignored would put the table elsewhere.
  if (request.contains("location") && !request["location"].is_null() &&
      !request["location"].is_string()) {
    return Fail(BadRequest("location must be a string"));
  }
  if (request.contains("stage-create") && !request["stage-create"].is_null() &&
      !request["stage-create"].is_boolean()) {
    return Fail(BadRequest("stage-create must be a boolean"));
  }
  std::string location;
  if (request.contains("location") && request["location"].is_string() &&
      !request["location"].get<std::string>().empty()) {
    location = request["location"].get<std::string>();
    while (location.ends_with("/")) location.pop_back();
    TM_TRY(KeyOf(w, location));
    TM_TRY(CheckOutsideGenericTables(meta_, w, location));  // a fast refusal
  } else {
    TM_ASSIGN(location, FreeDefaultLocation(w, ident));
  }
  TM_ASSIGN(Json metadata,
            iceberg::NewTableMetadata(request, location, random_.Uuid(), clock_.NowMillis()));
  LoadedTable result;
  result.metadata_json = metadata.dump();
  bool staged = request.contains("stage-create") && request["stage-create"].is_boolean() &&
                request["stage-create"].get<bool>();
  if (staged && !metadata["properties"].contains("created-at")) {
    // The reference catalog stamps a staged create (CatalogHandlers.stageTableCreate); the
    // client sends its properties back with the commit that creates the table.
    metadata["properties"]["created-at"] = FormatIso8601(clock_.NowMillis());
    result.metadata_json = metadata.dump();
  }
  if (!staged) {
    // ---- apply
    TM_ASSIGN(result.metadata_location, files_.WriteMetadata(w, location, 0, metadata));
    metastore::TableEntry entry{w.id,
                                ns,
                                ident.name,
                                "table",
                                metadata.value("table-uuid", ""),
                                location,
                                result.metadata_location,
                                result.metadata_json,
                                clock_.NowMillis(),
                                clock_.NowMillis()};
    TM_TRY(CreateEntry(
        entry,
        [&](metastore::Stores& stores) { return CheckOutsideGenericTables(stores, w, location); },
        also));
    KeepVersionHint(w, ns, ident.name);
  }
  AttachCredentials(result, caller, w, ident, metadata.value("location", location), vend);
  return result;
}

Result<LoadedTable> CatalogService::LoadTable(const CatalogPrincipal& caller,
                                              const metastore::Warehouse& w,
                                              const TableIdent& ident, bool vend, bool refs_only,
                                              const TableHead* head) {
  Result<metastore::TableEntry> entry = Fail(ErrorCode::kNotFound, "no table");
  if (head && head->ident.ns == ident.ns && head->ident.name == ident.name) {
    if (head->entry) entry = *head->entry;
  } else {
    entry = meta_.catalog().GetEntryHead(w.id, ident.ns, ident.name);
  }
  if (!entry || entry->kind != "table") {
    if (!entry && entry.error().code != ErrorCode::kNotFound) return Fail(entry.error());
    // Engines rely on NoSuchTable even when the namespace is missing (Spark metadata tables).
    return Fail(Error{
        ErrorCode::kNotFound,
        "Table does not exist: " + JoinDots(ident.ns) + "." + ident.name,
        {}}.With("missing", "table"));
  }
  LoadedTable result;
  result.metadata_location = std::move(entry->metadata_location);
  // The stored document is served as it is; only snapshots=refs needs it parsed.
  if (auto cached = CachedMetadata(result.metadata_location)) {
    result.shared_metadata = std::move(cached);
  } else {
    auto full = meta_.catalog().GetEntry(w.id, ident.ns, ident.name);
    if (!full || full->kind != "table") {
      return Fail(Error{
          ErrorCode::kNotFound,
          "Table does not exist: " + JoinDots(ident.ns) + "." + ident.name,
          {}}.With("missing", "table"));
    }
    result.metadata_location = full->metadata_location;
    result.metadata_json = std::move(full->metadata_json);
    CacheMetadata(result.metadata_location, result.metadata_json);
  }
  if (refs_only) {
    const std::string what = "table " + JoinDots(ident.ns) + "." + ident.name;
    TM_ASSIGN(Json metadata, ParseStored(result.metadata_text(), what));
    if (metadata.contains("snapshots")) {
      const Json* refs = iceberg::Member(metadata, "refs");
      if ((refs && !refs->is_object()) || !metadata["snapshots"].is_array()) {
        return Fail(Error{ErrorCode::kInternal,
                          "The stored metadata of " + what + " is corrupt: refs or snapshots",
                          {}});
      }
      std::set<int64_t> referenced;
      if (refs) {
        for (const auto& [name, ref] : refs->items()) {
          TM_ASSIGN(int64_t id, StoredInt(ref, "snapshot-id", -1, what));
          referenced.insert(id);
        }
      }
      Json kept = Json::array();
      for (const auto& s : metadata["snapshots"]) {
        TM_ASSIGN(int64_t id, StoredInt(s, "snapshot-id", -2, what));
        if (referenced.count(id)) kept.push_back(s);
      }
      metadata["snapshots"] = std::move(kept);
      result.metadata_json = metadata.dump();
      result.shared_metadata.reset();
    }
  }
  AttachCredentials(result, caller, w, ident, entry->location, vend);
  return result;
}

std::shared_ptr<const std::string> CatalogService::CachedMetadata(const std::string& location) {
  std::lock_guard lock(metadata_cache_mu_);
  auto it = metadata_cache_.find(location);
  return it == metadata_cache_.end() ? nullptr : it->second;
}

void CatalogService::CacheMetadata(const std::string& location, const std::string& text) {
  if (location.empty() || text.size() > kMetadataCacheBytes / 4) return;
  std::lock_guard lock(metadata_cache_mu_);
  if (metadata_cache_bytes_ + text.size() > kMetadataCacheBytes) {
    metadata_cache_.clear();
    metadata_cache_bytes_ = 0;
  }
  if (metadata_cache_.emplace(location, std::make_shared<const std::string>(text)).second) {
    metadata_cache_bytes_ += text.size();
  }
}

Result<LoadedTable> CatalogService::RegisterTable(const CatalogPrincipal& caller,
                                                  const metastore::Warehouse& w,
                                                  const Namespace& ns, const std::string& name,
                                                  const std::string& metadata_location,
                                                  bool overwrite) {
  TM_TRY(RequireWrite(caller));
  if (!ValidName(name)) return Fail(BadRequest("Invalid table name '" + name + "'"));
  TM_TRY(meta_.catalog().GetNamespace(w.id, ns));
  TM_ASSIGN(Json metadata, ReadMetadataFile(w, metadata_location));
  // The file is client-written: check the types before reading them (value() throws).
  if (!metadata.contains("location") || !metadata["location"].is_string() ||
      (metadata.contains("table-uuid") && !metadata["table-uuid"].is_string())) {
    return Fail(
        BadRequest(metadata_location + " is not Iceberg table metadata (location, table-uuid)"));
  }
  std::string location = metadata.value("location", "");
  TM_TRY(KeyOf(w, location));
  metastore::TableEntry entry{w.id,
                              ns,
                              name,
                              "table",
                              metadata.value("table-uuid", ""),
                              location,
                              metadata_location,
                              metadata.dump(),
                              clock_.NowMillis(),
                              clock_.NowMillis()};
  auto existing = meta_.catalog().GetEntry(w.id, ns, name);
  std::string expected;
  if (existing) {
    if (!overwrite || existing->kind != "table") {
      return Fail(NameTaken("table", existing->kind, TableIdent{ns, name}));
    }
    expected = existing->metadata_location;
  }
  TM_TRY(meta_.catalog().SwapMetadata({metastore::MetadataSwap{w.id, ns, name, expected, entry}}));
  KeepVersionHint(w, ns, name);
  LoadedTable result{metadata_location, std::move(entry.metadata_json), {}, {}};
  AttachCredentials(result, caller, w, TableIdent{ns, name}, location, true);
  return result;
}

Result<std::vector<LoadedTable>> CatalogService::Commit(const CatalogPrincipal& caller,
                                                        const metastore::Warehouse& w,
                                                        const std::vector<TableChange>& changes) {
  TM_TRY(RequireWrite(caller));
  if (changes.empty()) return Fail(BadRequest("No table changes"));
  for (const auto& c : changes) {
    if (!c.requirements.is_array() || !c.updates.is_array()) {
      return Fail(BadRequest("requirements and updates must be arrays"));
    }
    if (!ValidName(c.ident.name)) return Fail(BadRequest("Invalid table name"));
    if (c.origin == CommitOrigin::kClient) TM_TRY(RefuseMaintenanceMarks(c.updates));
  }
  // The rebase's worker runs share one deadline, however often the commit is retried.
  const auto rebase_deadline = std::chrono::steady_clock::now() +
                               (rebaser_ ? rebaser_->Budget() : std::chrono::milliseconds(0));
  auto prepare = [&]() -> Result<std::vector<EntryChange>> {
    std::vector<EntryChange> prepared;
    for (const TableChange& c : changes) {
      bool create = false;
      for (const auto& r : c.requirements) {
        // Compared as JSON: value("type", "") would throw on a non-string type (a 500);
        // CheckRequirement below answers that with a 400.
        if (r.is_object() && r.contains("type") && r["type"] == "assert-create") create = true;
      }
      auto entry = meta_.catalog().GetEntry(w.id, c.ident.ns, c.ident.name);
      const Json* current = nullptr;
      Json current_doc;
      if (entry) {
        if (entry->kind != "table") {
          // The reference's words for a create (or update) that meets a view.
          if (create) return Fail(NameTaken("table", entry->kind, c.ident));
          return Fail(Error{ErrorCode::kConflict, "Requirement failed: table already exists", {}});
        }
        TM_ASSIGN(current_doc, ParseStored(entry->metadata_json,
                                           "table " + JoinDots(c.ident.ns) + "." + c.ident.name));
        current = &current_doc;
      } else if (entry.error().code != ErrorCode::kNotFound) {
        return Fail(entry.error());
      } else if (!create) {
        return Fail(Error{
            ErrorCode::kNotFound,
            "Table does not exist: " + JoinDots(c.ident.ns) + "." + c.ident.name,
            {}}.With("missing", "table"));
      }
      if (create) {
        if (c.requirements.size() != 1) {
          return Fail(BadRequest("assert-create must be the only requirement of a create"));
        }
        TM_TRY(meta_.catalog().GetNamespace(w.id, c.ident.ns));
      }
      // A requirement that fails only because maintenance moved the branch is rebased
      // (src/maintenance/commit_rebase.h, through CommitRebaser); any other failure stands.
      std::optional<TableChange> rebased;
      for (const auto& r : c.requirements) {
        auto held = iceberg::CheckRequirement(current, r);
        if (held) continue;
        if (current && held.error().code == ErrorCode::kConflict &&
            c.origin == CommitOrigin::kClient && rebaser_) {
          TM_ASSIGN(rebased, rebaser_->Rebase(w, *current, c, rebase_deadline));
        }
        if (!rebased) return Fail(held.error());
        for (const auto& again : rebased->requirements) {
          TM_TRY(iceberg::CheckRequirement(current, again));
        }
        files_.counters().commit_rebases.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      const TableChange& effective = rebased ? *rebased : c;
      Json base = current ? current_doc : Json::object();
      TM_ASSIGN(Json next, iceberg::ApplyUpdates(base, effective.updates, clock_.NowMillis()));
      if (c.guard) TM_TRY(c.guard(base, next));
      // `next` carries the stored document's members: read them by type.
      const std::string what = "table " + JoinDots(c.ident.ns) + "." + c.ident.name;
      TM_ASSIGN(std::string location, StoredString(next, "location", "", what));
      if (location.empty()) {
        location = DefaultLocation(w, c.ident);
        next["location"] = location;
      }
      TM_TRY(KeyOf(w, location));
      EntryChange change;
      change.expected_metadata_location = entry ? entry->metadata_location : "";
      if (current && *current == next) {
        change.changed = false;
        change.next = std::move(next);
        prepared.push_back(std::move(change));
        continue;
      }
      if (current) {
        TM_ASSIGN(int64_t last_updated, StoredInt(*current, "last-updated-ms", 0, what));
        iceberg::AppendMetadataLog(next, entry->metadata_location, last_updated);
      }
      TM_ASSIGN(std::string uuid, StoredString(next, "table-uuid", "", what));
      change.replacement = metastore::TableEntry{w.id,
                                                 c.ident.ns,
                                                 c.ident.name,
                                                 "table",
                                                 uuid,
                                                 location,
                                                 "",
                                                 "",
                                                 entry ? entry->created_ms : clock_.NowMillis(),
                                                 clock_.NowMillis()};
      change.next = std::move(next);
      prepared.push_back(std::move(change));
    }
    return prepared;
  };
  TM_ASSIGN(auto published, CommitOptimistically(meta_.catalog(), files_, w,
                                                 options_.commit_retries, "table", prepare));
  std::vector<LoadedTable> results;
  for (auto& p : published) {
    results.push_back(
        LoadedTable{std::move(p.metadata_location), std::move(p.metadata_json), {}, {}});
  }
  for (const TableChange& c : changes) KeepVersionHint(w, c.ident.ns, c.ident.name);
  if (commit_observer_) {
    for (const TableChange& c : changes) {
      if (c.origin == CommitOrigin::kClient) commit_observer_(w, c.ident);
    }
  }
  return results;
}

Result<void> CatalogService::CheckLocationFree(metastore::Stores& stores,
                                               const metastore::Warehouse& w,
                                               const TableIdent& self,
                                               const std::string& location) {
  TM_ASSIGN(std::string key, KeyOf(w, location));
  std::string prefix = key + "/";
  // No index by location: walk every namespace. Only purges and explicit locations pay.
  std::vector<Namespace> pending = {Namespace{}};
  while (!pending.empty()) {
    Namespace parent = std::move(pending.back());
    pending.pop_back();
    TM_ASSIGN(auto children, stores.catalog().ListNamespaces(w.id, parent));
    for (auto& child : children) {
      for (const char* kind : {"table", "view", "generic"}) {
        TM_ASSIGN(auto entries, stores.catalog().ListEntries(w.id, child.levels, kind));
        for (const auto& e : entries) {
          if (e.namespace_levels == self.ns && e.name == self.name) continue;
          auto other_key = KeyOf(w, e.location);
          if (!other_key) continue;
          std::string other = *other_key + "/";
          if (other.starts_with(prefix) || prefix.starts_with(other)) {
            return Fail(Error{
                ErrorCode::kConflict,
                "Location " + location + " overlaps the location of " + KindNoun(e.kind) + " " +
                    JoinDots(e.namespace_levels) + "." + e.name,
                {}}.With("overlaps", JoinDots(e.namespace_levels) + "." + e.name));
          }
        }
      }
      pending.push_back(std::move(child.levels));
    }
  }
  return {};
}

Result<void> CatalogService::CheckOutsideGenericTables(metastore::Stores& stores,
                                                       const metastore::Warehouse& w,
                                                       const std::string& location) {
  TM_ASSIGN(std::string key, KeyOf(w, location));
  std::string prefix = key + "/";
  TM_ASSIGN(auto generic, stores.catalog().ListEntriesOfKind(w.id, "generic"));
  for (const auto& e : generic) {
    auto other_key = KeyOf(w, e.location);
    if (!other_key) continue;
    std::string other = *other_key + "/";
    if (other.starts_with(prefix) || prefix.starts_with(other)) {
      return Fail(Error{ErrorCode::kConflict,
                        "Location " + location + " overlaps the base location of generic table " +
                            JoinDots(e.namespace_levels) + "." + e.name,
                        {}});
    }
  }
  return {};
}

Result<void> CatalogService::CreateEntry(
    const metastore::TableEntry& entry,
    const std::function<Result<void>(metastore::Stores&)>& check, const AlsoInCreate& also) {
  return metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_TRY(check(txn));
    TM_TRY(txn.catalog().SwapMetadata({metastore::MetadataSwap{
        entry.warehouse_id, entry.namespace_levels, entry.name, "", entry}}));
    if (also) TM_TRY(also(txn, entry));
    return {};
  });
}

Result<void> CatalogService::CheckSolePrefix(const metastore::Warehouse& w, const TableIdent& self,
                                             const std::string& prefix) {
  std::string location = WarehouseFiles::Root(w) + prefix;
  while (location.ends_with("/")) location.pop_back();
  auto free = CheckLocationFree(meta_, w, self, location);
  if (!free && free.error().code == ErrorCode::kConflict) {
    return Fail(BadRequest("Cannot purge " + JoinDots(self.ns) + "." + self.name +
                           ": its location overlaps that of " + free.error().Detail("overlaps") +
                           ", whose files the purge would delete; drop it without purgeRequested"));
  }
  return free;
}

Result<void> CatalogService::DropTable(const CatalogPrincipal& caller,
                                       const metastore::Warehouse& w, const TableIdent& ident,
                                       bool purge) {
  TM_TRY(RequireDelete(caller));
  auto missing = [&] {
    return Fail(Error{
        ErrorCode::kNotFound,
        "Table does not exist: " + JoinDots(ident.ns) + "." + ident.name,
        {}}.With("missing", "table"));
  };
  auto entry = meta_.catalog().GetEntry(w.id, ident.ns, ident.name);
  if (!entry && entry.error().code != ErrorCode::kNotFound) return Fail(entry.error());
  if (!entry || entry->kind != "table") return missing();
  // The purge task deletes every object under the location, not only the files the
  // metadata references as the reference does: only a table that owns its location alone
  // is the catalog's to purge (not an explicit location around other tables, a
  // registered copy, a renamed twin).
  TM_ASSIGN(std::string key, KeyOf(w, entry->location));
  auto sole = CheckSolePrefix(w, ident, key + "/");
  if (purge && !sole) return Fail(sole.error());
  if (!sole && sole.error().code != ErrorCode::kInvalidInput) return Fail(sole.error());
  bool managed = sole.has_value();
  // A drop without purgeRequested purges a managed table too (as Lakekeeper does):
  // engines that purge themselves (Spark's DROP TABLE … PURGE) may stop half-way, and a
  // user's purge must finish or leave nothing. That purge waits until every session for
  // the table has expired (those vended before the drop, and those the drop record
  // serves, which end one lifetime after the drop), so it never deletes a manifest
  // under a client's running purge.
  const int64_t lifetime_ms = files_.session_seconds() * 1000;
  metastore::CatalogStore::DropFollowUp follow_up =
      [&](const metastore::TableEntry& e) -> Result<std::optional<metastore::NewTask>> {
    DropRecord record{w.id, ident, e.location, caller.identity, clock_.NowMillis()};
    auto dropped_key = KeyOf(w, e.location);
    if (managed && dropped_key) {
      return metastore::NewTask{
          kPurgePrefixTask, DropTaskPayload(record, WarehouseFiles::Bucket(w), *dropped_key + "/"),
          purge ? 0 : lifetime_ms + kPurgeGraceMs};
    }
    return metastore::NewTask{kDropRecordTask, DropTaskPayload(record, "", ""), lifetime_ms};
  };
  auto dropped = meta_.catalog().DropEntry(w.id, ident.ns, ident.name, "table", follow_up);
  if (!dropped) {
    if (dropped.error().code == ErrorCode::kNotFound) return missing();
    return Fail(dropped.error());
  }
  return {};
}

Result<void> CatalogService::RenameTable(const CatalogPrincipal& caller,
                                         const metastore::Warehouse& w, const TableIdent& from,
                                         const TableIdent& to) {
  TM_TRY(RequireWrite(caller));
  if (!ValidName(to.name)) return Fail(BadRequest("Invalid table name '" + to.name + "'"));
  auto r = meta_.catalog().RenameEntry(w.id, from.ns, from.name, to.ns, to.name, "table");
  if (!r && r.error().code == ErrorCode::kAlreadyExists) {
    // Name what is there: the name space is shared with views and generic tables.
    std::string kind = r.error().Detail("existing_kind");
    return Fail(RenameTargetTaken(from, to, kind.empty() ? "table" : kind));
  }
  if (!r && r.error().code == ErrorCode::kNotFound && r.error().Detail("missing") == "entry") {
    return Fail(Error{
        ErrorCode::kNotFound,
        "Table does not exist: " + JoinDots(from.ns) + "." + from.name,
        {}}.With("missing", "table"));
  }
  return r;
}

Result<std::vector<StorageCredential>> CatalogService::TableCredentials(
    const CatalogPrincipal& caller, const metastore::Warehouse& w, const TableIdent& ident) {
  if (caller.anonymous) {
    return Fail(
        Forbidden("A published catalog's files are read without credentials; sign in "
                  "for a storage session."));
  }
  auto table = LoadTable(caller, w, ident, true, false);
  if (table) return table->credentials;
  if (table.error().code != ErrorCode::kNotFound) return Fail(table.error());
  TM_ASSIGN(std::optional<DropRecord> dropped, RecentDropBy(caller, ident));
  if (!dropped) return Fail(table.error());
  // The dropper's purge is still running: a session for the dropped location (writable,
  // so it may delete), refreshed at the same endpoint. It ends with the window, so no
  // session for the dropped location outlives the lifetime after the drop, when the
  // catalog's own purge starts.
  return std::vector<StorageCredential>{
      files_.Vend(caller, w, dropped->location, RefreshEndpoint(w, ident), "",
                  dropped->dropped_ms + files_.session_seconds() * 1000)};
}

Result<std::optional<DropRecord>> CatalogService::RecentDropBy(const CatalogPrincipal& caller,
                                                               const TableIdent& ident) {
  const int64_t now = clock_.NowMillis();
  const int64_t window_ms = files_.session_seconds() * 1000;
  std::optional<DropRecord> newest;
  for (const char* kind : {kPurgePrefixTask, kDropRecordTask}) {
    TM_ASSIGN(auto tasks, meta_.tasks().ListOfKind(kind));
    for (const auto& task : tasks) {
      auto record = ParseDropRecord(task.payload_json, task.id);
      if (!record) {
        if (record.error().code == ErrorCode::kNotFound) continue;  // no record to serve
        return Fail(record.error());
      }
      if (!ServesDroppedRefresh(*record, caller, ident, now, window_ms)) continue;
      if (!newest || record->dropped_ms >= newest->dropped_ms) newest = std::move(*record);
    }
  }
  return newest;
}

}  // namespace tablemere::catalog
