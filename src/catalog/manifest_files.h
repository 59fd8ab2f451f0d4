// Reading Iceberg's manifest files for the maintenance jobs and the commit rebase:
// manifest lists and manifests are Avro containers, bounded in size (their contents are
// read through iceberg/manifest.h).
#pragma once

#include <optional>
#include <string>

#include "avro/container.h"
#include "catalog/catalog_support.h"

namespace tablemere::catalog {

// Manifest lists and manifests are small; a larger one is refused rather than loaded.
inline constexpr size_t kMaxManifestBytes = 256u << 20;

Result<avro::Container> ReadManifestFile(WarehouseFiles& files, const metastore::Warehouse& w,
                                         const std::string& location);

}  // namespace tablemere::catalog
