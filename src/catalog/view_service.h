// Iceberg views: list, create, load, replace (commit with view requirements and
// updates), drop, rename and register. View metadata files go to the table bucket under
// the view's location, like table metadata; the metadata pointer is swapped with the
// same compare-and-swap as tables. Views share one name space with tables and generic
// tables in each namespace.
#pragma once

#include "catalog/catalog_service.h"

namespace tablemere::catalog {

struct LoadedView {
  std::string metadata_location;
  Json metadata;
  std::map<std::string, std::string> config;
};

class ViewService {
 public:
  ViewService(CatalogService& catalog, const Clock& clock, Random& random, int commit_retries)
      : catalog_(catalog), clock_(clock), random_(random), commit_retries_(commit_retries) {}

  Result<std::vector<TableIdent>> List(const metastore::Warehouse& w, const Namespace& ns);
  // Errors: kAlreadyExists naming what is there, kNotFound (missing=namespace).
  Result<LoadedView> Create(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                            const Namespace& ns, const Json& request);
  // kNotFound (missing=view) when there is no view of that name.
  Result<LoadedView> Load(const metastore::Warehouse& w, const TableIdent& ident);
  // Requirements failing are kConflict; a lost race is retried server-side.
  Result<LoadedView> Replace(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                             const TableIdent& ident, const Json& requirements,
                             const Json& updates);
  Result<void> Drop(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                    const TableIdent& ident);
  Result<void> Rename(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                      const TableIdent& from, const TableIdent& to);
  Result<LoadedView> Register(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                              const Namespace& ns, const std::string& name,
                              const std::string& metadata_location);

 private:
  Result<metastore::TableEntry> Entry(const metastore::Warehouse& w, const TableIdent& ident);

  CatalogService& catalog_;
  const Clock& clock_;
  Random& random_;
  int commit_retries_;
};

}  // namespace tablemere::catalog
