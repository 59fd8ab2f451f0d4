// The Iceberg REST catalog wire adapter (Apache Iceberg REST spec 1.11): routes,
// request parsing, and the mapping of catalog results and errors to the spec's JSON.
#pragma once

#include <memory>

#include "catalog/catalog_service.h"
#include "catalog/scan_plan_service.h"
#include "catalog/view_service.h"
#include "http/message.h"

namespace tablemere::api::iceberg {

class IcebergRestApi {
 public:
  IcebergRestApi(catalog::CatalogService& catalog, catalog::ViewService& views,
                 catalog::ScanPlanService& plans);
  ~IcebergRestApi();
  http::Response Handle(http::Request& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tablemere::api::iceberg
