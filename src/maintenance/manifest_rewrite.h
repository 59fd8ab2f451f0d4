// Manifest rewriting: the current snapshot's manifests of each partition spec and content
// (data, deletes) merged into one, keeping only live entries (as EXISTING), committed as a
// `replace` snapshot that changes no data, asserting that main has not moved. Readers then
// open one manifest where a table of many small commits (or a compaction's merged manifest
// of DELETED entries) had many.
#pragma once

#include "catalog/catalog_service.h"
#include "maintenance/catalog_names.h"

namespace tablemere::maintenance {

struct ManifestRewriteResult {
  bool ran = false;
  std::string reason;
  int manifests_before = 0, manifests_after = 0;
  int entries_kept = 0, entries_dropped = 0;  // live ones kept; deletions of the past dropped
  int64_t snapshot_id = -1;
};

// `quiet_ms`: a table committed to more recently than this is left for later (0: now).
Result<ManifestRewriteResult> RewriteManifests(CatalogService& catalog, const Clock& clock,
                                               Random& random, const metastore::Warehouse& w,
                                               const TableIdent& ident, int64_t quiet_ms);

}  // namespace tablemere::maintenance
