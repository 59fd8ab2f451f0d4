// What the maintenance jobs and the commit rebase share about Iceberg's manifest files:
// reading one (manifest lists and manifests are Avro containers, bounded in size) and
// telling which data file a position delete file targets.
#pragma once

#include <optional>
#include <string>

#include "avro/container.h"
#include "catalog/catalog_support.h"
#include "iceberg/delete_index.h"

namespace tablemere::catalog {

// Manifest lists and manifests are small; a larger one is refused rather than loaded.
inline constexpr size_t kMaxManifestBytes = 256u << 20;

Result<avro::Container> ReadManifestFile(WarehouseFiles& files, const metastore::Warehouse& w,
                                         const std::string& location);

// The bounds of a position delete file's file_path column (canonical paths), when known:
// every data file it names is within them.
using PathRange = iceberg::PathBounds;
std::optional<PathRange> PositionDeletePaths(const Json& data_file);

// The one data file a position delete file (a manifest entry's data_file, as JSON) targets:
// its referenced_data_file, or its file_path column's bounds when they are equal; "" when
// it cannot be told (it may then target any file of its partition).
std::string PositionDeleteTarget(const Json& data_file);

}  // namespace tablemere::catalog
