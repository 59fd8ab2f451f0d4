// Lakekeeper generic tables (Lance, Delta, CSV, Parquet): the catalog keeps identity,
// location and governance; engines read and write the format directly with vended
// sessions scoped to the table's base location. Generic tables share one name space
// with Iceberg tables and views in each namespace.
#pragma once

#include "catalog/catalog_service.h"

namespace tablemere::catalog {

struct LoadedGenericTable {
  Json table;  // GenericTableData
  std::map<std::string, std::string> config;
  std::vector<StorageCredential> credentials;
};

struct GenericTableSummary {
  TableIdent ident;
  std::string id;
  std::string format;
};

class GenericTableService {
 public:
  GenericTableService(CatalogService& catalog, const Clock& clock, Random& random)
      : catalog_(catalog), clock_(clock), random_(random) {}

  Result<std::vector<GenericTableSummary>> List(const metastore::Warehouse& w, const Namespace& ns);
  // Errors: kInvalidInput (name, format, base-location outside the warehouse),
  // kConflict (base-location overlapping another entry's), kAlreadyExists naming what is
  // there, kNotFound (missing=namespace).
  Result<LoadedGenericTable> Create(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                                    const Namespace& ns, const Json& request, bool vend);
  Result<LoadedGenericTable> Load(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                                  const TableIdent& ident, bool vend);
  // kConflict while the table is protected. The files are purged by the task runner.
  Result<void> Drop(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                    const TableIdent& ident);
  Result<void> Rename(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                      const TableIdent& from, const TableIdent& to);
  // `referenced_by`: the chain of views the caller came through; each must exist. The
  // vend and the chain are recorded in the audit log.
  Result<std::vector<StorageCredential>> Credentials(const CatalogPrincipal& caller,
                                                     const metastore::Warehouse& w,
                                                     const TableIdent& ident,
                                                     const std::vector<TableIdent>& referenced_by,
                                                     const std::string& request_id);
  Result<LoadedGenericTable> SetProtected(const CatalogPrincipal& caller,
                                          const metastore::Warehouse& w, const TableIdent& ident,
                                          bool protect);

 private:
  Result<metastore::TableEntry> Entry(const metastore::Warehouse& w, const TableIdent& ident);
  Result<LoadedGenericTable> Loaded(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                                    const TableIdent& ident, const metastore::TableEntry& entry,
                                    bool vend);

  CatalogService& catalog_;
  const Clock& clock_;
  Random& random_;
};

}  // namespace tablemere::catalog
