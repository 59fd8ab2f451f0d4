// The Lakekeeper generic-table API wire adapter, served on the catalog listener under
// /lakekeeper/v1/{prefix}/…, with the same catalog tokens as the Iceberg API.
#pragma once

#include <memory>

#include "catalog/catalog_service.h"
#include "catalog/generic_table_service.h"
#include "http/message.h"

namespace tablemere::api::lakekeeper {

class LakekeeperApi {
 public:
  LakekeeperApi(catalog::CatalogService& catalog, catalog::GenericTableService& tables);
  ~LakekeeperApi();
  http::Response Handle(http::Request& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tablemere::api::lakekeeper
