#include "storage/access.h"

#include "common/strings.h"

namespace tablemere::storage {

std::string TableBucketName(const std::string& warehouse_id) { return "w-" + warehouse_id; }
std::string BlobBucketName(const std::string& warehouse_id) { return "b-" + warehouse_id; }

std::string WarehouseOfBucket(const std::string& bucket) {
  if (bucket.size() > 2 && (bucket.starts_with("w-") || bucket.starts_with("b-"))) {
    return bucket.substr(2);
  }
  return "";
}

bool IsTableBucket(const std::string& bucket) { return bucket.starts_with("w-"); }

namespace {
bool IsDataFile(const std::string& name) {
  for (const char* ext : {".parquet", ".orc", ".avro", ".puffin", ".lance"}) {
    if (name.ends_with(ext)) return true;
  }
  return false;
}
bool IsMetadataFile(const std::string& name) {
  return name.ends_with(".metadata.json") || name.ends_with(".metadata.json.gz") ||
         name.ends_with(".gz.metadata.json") || name.ends_with(".avro") ||
         name.ends_with(".stats") || name.ends_with(".puffin") || name.ends_with(".parquet") ||
         name == "version-hint.text";
}
}  // namespace

Result<void> CheckTableBucketKey(const std::string& key, const std::string& blob_bucket) {
  auto refuse = [&](const std::string& why) {
    return Fail(Error{ErrorCode::kInvalidInput,
                      "Table buckets accept only Iceberg table files under "
                      "<namespace>/<table>/(data|metadata)/ (" +
                          why + "). Put other objects in the blob bucket " + blob_bucket + ".",
                      {}}
                    .With("s3_code", "InvalidArgument"));
  };
  std::vector<std::string> parts = Split(key, '/');
  // Directory markers (pyarrow writes "<…>/data/" and friends as empty objects).
  bool marker = key.ends_with("/");
  if (marker) parts.pop_back();
  for (const auto& p : parts) {
    if (p.empty() || p == "." || p == "..") return refuse("empty or relative path segment");
  }
  if (marker) return {};
  // Find the data|metadata segment: at least <namespace>/<table> before it, a file after.
  for (size_t i = 2; i + 1 < parts.size(); i++) {
    const std::string& name = parts.back();
    if (parts[i] == "data" && IsDataFile(name)) return {};
    if (parts[i] == "metadata" && i + 2 == parts.size() && IsMetadataFile(name)) return {};
  }
  return refuse("'" + key + "' is not a data or metadata file");
}

}  // namespace tablemere::storage
