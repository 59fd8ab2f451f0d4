#include "catalog/control_tables.h"

#include <algorithm>
#include <functional>

#include "common/strings.h"
#include "iceberg/table_metadata.h"

namespace tablemere::catalog {
namespace {

using metastore::Level;

Error Coded(ErrorCode code, const std::string& wire, const std::string& message) {
  return Error{code, message, {}}.With("code", wire);
}

// A catalog failure travels unchanged, marked so the adapter renders its Iceberg answer.
Error FromCatalog(Error e) {
  e.With(kCatalogErrorDetail, "1");
  return e;
}

std::string Dotted(const Namespace& ns) { return JoinDots(ns); }

}  // namespace

CatalogPrincipal ControlTables::PrincipalFor(const accounts::WarehouseAccess& access) {
  const bool read_only = access.level != Level::kWrite;
  const auto& w = access.warehouse;
  return CatalogPrincipal{accounts::IdentityName(w.id, read_only), w.id, read_only,
                          w.credential_generation, 0};
}

Result<void> ControlTables::RequireNamespace(const metastore::Warehouse& w, const Namespace& ns) {
  auto found = catalog_.metastore().catalog().GetNamespace(w.id, ns);
  if (found) return {};
  if (found.error().code != ErrorCode::kNotFound) return Fail(found.error());
  TM_ASSIGN(auto all, Namespaces(accounts::WarehouseAccess{w, Level::kRead, ""}));
  std::vector<std::string> names;
  for (const auto& n : all) names.push_back(Dotted(n));
  return Fail(Coded(ErrorCode::kNotFound, "namespace_not_found",
                    "No namespace '" + Dotted(ns) + "' in this catalog")
                  .With("available", Join(names, ","))
                  .With("remedy", "tablemere namespace list shows them."));
}

Result<void> ControlTables::RequireTable(const metastore::Warehouse& w, const TableIdent& ident) {
  TM_TRY(RequireNamespace(w, ident.ns));
  auto entry = catalog_.metastore().catalog().GetEntryHead(w.id, ident.ns, ident.name);
  if (entry && entry->kind == "table") return {};
  if (!entry && entry.error().code != ErrorCode::kNotFound) return Fail(entry.error());
  TM_ASSIGN(auto tables, catalog_.ListTables(w, ident.ns));
  std::vector<std::string> names;
  for (const auto& t : tables) names.push_back(t.name);
  return Fail(Coded(ErrorCode::kNotFound, "table_not_found",
                    "No table '" + ident.name + "' in namespace '" + Dotted(ident.ns) + "'")
                  .With("available", Join(names, ","))
                  .With("remedy", "tablemere table list shows them."));
}

namespace {

// What a create answers with, from the table's metadata document.
CreatedTable CreatedFrom(const NewTableRequest& request, const std::string& metadata_text) {
  Json metadata = Json::parse(metadata_text, nullptr, false);
  CreatedTable out{{request.ns, request.name}, "", "", request.format_version};
  if (metadata.is_object()) {
    out.table_uuid = metadata.value("table-uuid", "");
    out.location = metadata.value("location", "");
    out.format_version = metadata.value("format-version", request.format_version);
  }
  return out;
}

}  // namespace

Result<CreatedTable> ControlTables::Create(const accounts::WarehouseAccess& access,
                                           const NewTableRequest& request,
                                           const AlsoInCreate& also) {
  // ---- validate and authorise
  if (request.ns.empty()) {
    return Fail(Coded(ErrorCode::kInvalidInput, "missing_field", "namespace is required")
                    .With("field", "namespace"));
  }
  if (request.name.empty()) {
    return Fail(
        Coded(ErrorCode::kInvalidInput, "missing_field", "name is required").With("field", "name"));
  }
  if (!request.schema.is_object()) {
    return Fail(Coded(ErrorCode::kInvalidInput, "missing_field",
                      "schema (an Iceberg struct schema with field ids) is required")
                    .With("field", "schema"));
  }
  if (request.format_version != 2 && request.format_version != 3) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "format_version must be 2 or 3")
                    .With("field", "format_version"));
  }
  if (access.level != Level::kWrite) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                      "Creating a table needs write on the catalog")
                    .With("remedy", "Ask an admin for write: tablemere catalog grant"));
  }
  // ---- apply: the namespace on demand, then the table, through the catalog
  const auto& w = access.warehouse;
  const CatalogPrincipal principal = PrincipalFor(access);
  auto ns_exists = catalog_.metastore().catalog().GetNamespace(w.id, request.ns);
  if (!ns_exists) {
    if (ns_exists.error().code != ErrorCode::kNotFound) return Fail(ns_exists.error());
    // Parents first, as engines create nested namespaces.
    for (size_t depth = 1; depth <= request.ns.size(); depth++) {
      Namespace prefix(request.ns.begin(), request.ns.begin() + static_cast<long>(depth));
      auto created = catalog_.CreateNamespace(principal, w, prefix, Json::object());
      if (!created && created.error().code != ErrorCode::kAlreadyExists) {
        return Fail(FromCatalog(created.error()));
      }
    }
  }
  Json create = {{"name", request.name},
                 {"schema", request.schema},
                 {"properties", {{"format-version", std::to_string(request.format_version)}}}};
  CatalogService::AlsoInCreate in_create;
  if (also) {
    in_create = [&](metastore::Stores& stores, const metastore::TableEntry& entry) {
      return also(stores, CreatedFrom(request, entry.metadata_json));
    };
  }
  auto loaded = catalog_.CreateTable(principal, w, request.ns, create, /*vend=*/false, in_create);
  if (!loaded) return Fail(FromCatalog(loaded.error()));
  return CreatedFrom(request, loaded->metadata_text());
}

Result<std::vector<Namespace>> ControlTables::Namespaces(const accounts::WarehouseAccess& access) {
  std::vector<Namespace> out;
  std::function<Result<void>(const Namespace&)> walk =
      [&](const Namespace& parent) -> Result<void> {
    TM_ASSIGN(auto children, catalog_.ListNamespaces(access.warehouse, parent));
    for (const auto& child : children) {
      out.push_back(child);
      TM_TRY(walk(child));
    }
    return {};
  };
  TM_TRY(walk({}));
  std::sort(out.begin(), out.end());
  return out;
}

Result<TableNamespaces> ControlTables::Tables(const accounts::WarehouseAccess& access,
                                              const Namespace& ns) {
  TableNamespaces out;
  if (ns.empty()) {
    TM_ASSIGN(out.searched, Namespaces(access));
  } else {
    TM_TRY(RequireNamespace(access.warehouse, ns));
    out.searched.push_back(ns);
  }
  for (const auto& n : out.searched) {
    TM_ASSIGN(auto tables, catalog_.ListTables(access.warehouse, n));
    for (auto& t : tables) out.tables.push_back(std::move(t));
  }
  return out;
}

Result<TableSummary> ControlTables::Describe(const accounts::WarehouseAccess& access,
                                             const TableIdent& ident) {
  TM_TRY(RequireTable(access.warehouse, ident));
  auto loaded = catalog_.LoadTable(PrincipalFor(access), access.warehouse, ident, false, false);
  if (!loaded) return Fail(FromCatalog(loaded.error()));
  Json m = Json::parse(loaded->metadata_text(), nullptr, false);
  if (!m.is_object()) {
    return Fail(ErrorCode::kInternal, "the table's stored metadata is not a JSON object");
  }
  TableSummary s;
  s.ident = ident;
  s.table_uuid = m.value("table-uuid", "");
  s.location = m.value("location", "");
  s.metadata_location = loaded->metadata_location;
  s.format_version = m.value("format-version", 0);
  // The current schema's top-level fields, and its identifier fields.
  int64_t schema_id = m.value("current-schema-id", int64_t{0});
  for (const auto& schema : m.value("schemas", Json::array())) {
    if (!schema.is_object() || schema.value("schema-id", int64_t{-1}) != schema_id) continue;
    for (const auto& f : schema.value("fields", Json::array())) {
      if (!f.is_object()) continue;
      s.schema_fields.push_back({{"id", f.value("id", 0)},
                                 {"name", f.value("name", "")},
                                 {"type", f.contains("type") ? f["type"] : Json(nullptr)},
                                 {"required", f.value("required", false)}});
    }
    s.identifier_field_ids = schema.value("identifier-field-ids", Json::array());
  }
  int64_t spec_id = m.value("default-spec-id", int64_t{0});
  for (const auto& spec : m.value("partition-specs", Json::array())) {
    if (spec.is_object() && spec.value("spec-id", int64_t{-1}) == spec_id) {
      s.partition_spec = spec.value("fields", Json::array());
    }
  }
  Json snapshots = m.value("snapshots", Json::array());
  s.snapshots = snapshots.is_array() ? static_cast<int>(snapshots.size()) : 0;
  if (m.contains("current-snapshot-id") && m["current-snapshot-id"].is_number_integer() &&
      m["current-snapshot-id"].get<int64_t>() >= 0) {
    s.current_snapshot_id = m["current-snapshot-id"].get<int64_t>();
  }
  // Counts come from the current snapshot's summary when its writer left one.
  s.rows_source = s.current_snapshot_id ? "unknown" : "empty";
  if (!s.current_snapshot_id) s.rows = s.data_files = s.delete_files = 0;
  for (const auto& snap : snapshots) {
    if (!s.current_snapshot_id || !snap.is_object() ||
        snap.value("snapshot-id", int64_t{-1}) != *s.current_snapshot_id) {
      continue;
    }
    const Json summary = snap.value("summary", Json::object());
    s.rows = iceberg::SummaryCount(summary, "total-records");
    s.data_files = iceberg::SummaryCount(summary, "total-data-files");
    s.delete_files = iceberg::SummaryCount(summary, "total-delete-files");
    if (s.rows) s.rows_source = "snapshot_summary";
  }
  return s;
}

Result<VendedCredentials> ControlTables::Credentials(const accounts::WarehouseAccess& access,
                                                     const TableIdent& ident) {
  if (access.level != Level::kWrite) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                      "Vended sessions are read/write, so only write holders get them")
                    .With("level", metastore::Name(access.level))
                    .With("remedy",
                          "Use the read-only catalog credential of GET /v1/connection (tablemere "
                          "connect), or ask an admin for write (tablemere catalog grant)."));
  }
  TM_TRY(RequireTable(access.warehouse, ident));
  const CatalogPrincipal principal = PrincipalFor(access);
  auto loaded = catalog_.LoadTable(principal, access.warehouse, ident, false, false);
  if (!loaded) return Fail(FromCatalog(loaded.error()));
  auto creds = catalog_.TableCredentials(principal, access.warehouse, ident);
  if (!creds) return Fail(FromCatalog(creds.error()));
  if (creds->empty()) return Fail(ErrorCode::kInternal, "the catalog vended no credential");
  Json m = Json::parse(loaded->metadata_text(), nullptr, false);
  VendedCredentials out{ident, m.is_object() ? m.value("location", "") : "", principal.identity,
                        creds->front(), 0};
  auto expiry = out.credential.config.find("s3.session-token-expires-at-ms");
  if (expiry != out.credential.config.end()) {
    out.expires_ms = ParseInt(expiry->second).value_or(0);
  }
  return out;
}

}  // namespace tablemere::catalog
