#include "catalog/manifest_files.h"

namespace tablemere::catalog {

Result<avro::Container> ReadManifestFile(WarehouseFiles& files, const metastore::Warehouse& w,
                                         const std::string& location) {
  TM_ASSIGN(std::string bytes, files.ReadBytes(w, location, kMaxManifestBytes));
  return avro::ReadContainer(bytes);
}

}  // namespace tablemere::catalog
