// The control plane's view of a warehouse's Iceberg tables (POST /v1/tables, GET
// /v1/namespaces, /v1/tables, /v1/table, POST /v1/credentials): the caller's level on the
// warehouse (accounts) picks the warehouse identity it acts as — t-<uuid> for write
// holders, t-<uuid>-ro for read holders — and the calls go through the same
// CatalogService the engines reach.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "accounts/account_service.h"
#include "catalog/catalog_service.h"

namespace tablemere::catalog {

struct NewTableRequest {
  Namespace ns;
  std::string name;
  Json schema;  // an Iceberg struct schema with field ids
  int format_version = 2;
};

struct CreatedTable {
  TableIdent ident;
  std::string table_uuid;
  std::string location;
  int format_version = 2;
};

struct TableSummary {
  TableIdent ident;
  std::string table_uuid;
  std::string location;
  std::string metadata_location;  // the current metadata.json (s3://…)
  int format_version = 0;
  Json schema_fields = Json::array();  // [{id, name, type, required}]
  Json identifier_field_ids = Json::array();
  Json partition_spec = Json::array();
  int snapshots = 0;
  std::optional<int64_t> current_snapshot_id;
  std::optional<int64_t> rows, data_files, delete_files;
  std::string rows_source;  // "snapshot_summary" | "empty" | "unknown"
};

struct TableNamespaces {
  std::vector<Namespace> searched;
  std::vector<TableIdent> tables;
};

struct VendedCredentials {
  TableIdent ident;
  std::string location;
  std::string identity;
  StorageCredential credential;
  int64_t expires_ms = 0;
};

class ControlTables {
 public:
  ControlTables(CatalogService& catalog, const Clock& clock) : catalog_(catalog), clock_(clock) {}

  // The namespace is created on demand. Errors: kPermissionDenied (forbidden: read
  // holders), kInvalidInput (missing_field, invalid_value), catalog errors (with detail
  // catalog_error: their Iceberg answer is rendered by the adapter).
  // `also` runs in the transaction that creates the table, given what the call answers
  // with; its failure undoes the create.
  using AlsoInCreate = std::function<Result<void>(metastore::Stores&, const CreatedTable&)>;
  Result<CreatedTable> Create(const accounts::WarehouseAccess& access,
                              const NewTableRequest& request, const AlsoInCreate& also = {});
  // Every namespace of the warehouse, sorted.
  Result<std::vector<Namespace>> Namespaces(const accounts::WarehouseAccess& access);
  // The tables of one namespace, or of all when `ns` is empty. Errors: kNotFound
  // (namespace_not_found, available).
  Result<TableNamespaces> Tables(const accounts::WarehouseAccess& access, const Namespace& ns);
  // Errors: kNotFound (namespace_not_found, table_not_found with available).
  Result<TableSummary> Describe(const accounts::WarehouseAccess& access, const TableIdent& ident);
  // A write session for one table. Errors: kPermissionDenied (forbidden: read holders).
  Result<VendedCredentials> Credentials(const accounts::WarehouseAccess& access,
                                        const TableIdent& ident);

  // Writes the version hint of every table of a warehouse just published (catalog
  // readers without a catalog need it); returns how many were written.
  Result<int> WriteVersionHints(const metastore::Warehouse& w) {
    return catalog_.WriteVersionHints(w);
  }

  // The warehouse identity the access level picks (read-only below write); the control
  // plane and maintenance act on the catalog as it.
  static CatalogPrincipal PrincipalFor(const accounts::WarehouseAccess& access);

 private:
  Result<void> RequireNamespace(const metastore::Warehouse& w, const Namespace& ns);
  Result<void> RequireTable(const metastore::Warehouse& w, const TableIdent& ident);

  CatalogService& catalog_;
  const Clock& clock_;
};

// Marks a failure that came from the catalog itself, so the control API renders it as
// catalog_error with the catalog's own status, type and message.
inline constexpr char kCatalogErrorDetail[] = "catalog_error";

}  // namespace tablemere::catalog
