// The catalog's names the maintenance jobs use (maintenance stands on the catalog: it
// loads tables and commits through it; the catalog includes nothing of maintenance).
#pragma once

#include "catalog/catalog_service.h"
#include "catalog/commit_rebaser.h"
#include "catalog/control_tables.h"
#include "catalog/manifest_files.h"
#include "iceberg/delete_index.h"

namespace tablemere::maintenance {

using catalog::BadRequest;
using catalog::CatalogPrincipal;
using catalog::CatalogService;
using catalog::CommitOrigin;
using catalog::ControlTables;
using catalog::Json;
using catalog::kMaintenanceSummaryKey;
using catalog::kMaxManifestBytes;
using catalog::LoadedTable;
using catalog::Namespace;
using catalog::ReadManifestFile;
using catalog::RefuseMaintenanceMarks;
using catalog::TableChange;
using catalog::TableIdent;
using catalog::WarehouseFiles;
using PathRange = iceberg::PathBounds;

}  // namespace tablemere::maintenance
