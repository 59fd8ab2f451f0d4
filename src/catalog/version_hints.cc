// CatalogService: version-hint.text for the tables of published warehouses (see
// catalog_service.h). Readers without a catalog try "<hint>.metadata.json" in the
// table's metadata/ folder (DuckDB: version_name_format "v%s%s.metadata.json,
// %s%s.metadata.json"; PyIceberg: "{hint}.metadata.json" unless numeric), and neither trims
// the file, so it holds exactly the file's stem.
#include <cstdio>

#include "catalog/catalog_service.h"
#include "common/strings.h"

namespace tablemere::catalog {
namespace {

constexpr std::string_view kSuffix = ".metadata.json";

}  // namespace

std::string CatalogService::VersionHintLocation(const std::string& location,
                                                const std::string& metadata_location) {
  const std::string dir = WarehouseFiles::Canonical(location) + "/metadata/";
  const std::string file = WarehouseFiles::Canonical(metadata_location);
  if (!file.starts_with(dir) || !file.ends_with(kSuffix)) return "";
  if (file.find('/', dir.size()) != std::string::npos) return "";
  return dir + "version-hint.text";
}

Result<bool> CatalogService::WriteVersionHint(const metastore::Warehouse& w, const Namespace& ns,
                                              const std::string& name) {
  // A slower writer may put an older hint over a newer one: each writer reads the pointer
  // again after writing and writes again until the hint it left is the current one, so
  // the last to finish always leaves the newest.
  for (int attempt = 0; attempt < 8; attempt++) {
    auto entry = meta_.catalog().GetEntryHead(w.id, ns, name);
    if (!entry) {
      if (entry.error().code == ErrorCode::kNotFound) return false;  // dropped meanwhile
      return Fail(entry.error());
    }
    if (entry->kind != "table") return false;
    const std::string hint = VersionHintLocation(entry->location, entry->metadata_location);
    if (hint.empty()) return false;
    const std::string file = WarehouseFiles::Canonical(entry->metadata_location);
    const std::string stem = file.substr(file.rfind('/') + 1);
    TM_TRY(files_.WriteBytes(w, hint, stem.substr(0, stem.size() - kSuffix.size()), "text/plain"));
    auto again = meta_.catalog().GetEntryHead(w.id, ns, name);
    if (!again) {
      if (again.error().code == ErrorCode::kNotFound) return true;
      return Fail(again.error());
    }
    if (again->metadata_location == entry->metadata_location) return true;
  }
  return Fail(ErrorCode::kUnavailable,
              "the table kept changing while its version hint was written");
}

void CatalogService::KeepVersionHint(const metastore::Warehouse& w, const Namespace& ns,
                                     const std::string& name) {
  if (w.published_ms == 0) return;
  auto written = WriteVersionHint(w, ns, name);
  if (!written) {
    std::fprintf(stderr, "catalog: the version hint of %s.%s in warehouse %s was not written: %s\n",
                 JoinDots(ns).c_str(), name.c_str(), w.id.str().c_str(),
                 written.error().message.c_str());
  }
}

Result<int> CatalogService::WriteVersionHints(const metastore::Warehouse& w) {
  TM_ASSIGN(auto tables, meta_.catalog().ListEntriesOfKind(w.id.str(), "table"));
  int written = 0;
  for (const auto& t : tables) {
    TM_ASSIGN(bool wrote, WriteVersionHint(w, t.namespace_levels, t.name));
    written += wrote ? 1 : 0;
  }
  return written;
}

}  // namespace tablemere::catalog
