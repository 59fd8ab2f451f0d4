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
    return Fail(Error{
        ErrorCode::kInvalidInput,
        "Table buckets accept only Iceberg table files under "
        "<namespace>/<table>/(data|metadata)/ (" +
            why + "). Put other objects in the blob bucket " + blob_bucket + ".",
        {}}.With("s3_code", "InvalidArgument"));
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

bool IsSupportedGenericFormat(const std::string& format) {
  return format == "lance" || format == "delta" || format == "csv" || format == "parquet";
}

Result<void> CheckGenericTableKey(const std::string& relative_key, const std::string& format,
                                  const std::string& blob_bucket) {
  const std::string& k = relative_key;
  for (const auto& part : Split(k, '/')) {
    if (part == "." || part == "..") {
      return Fail(
          Error{ErrorCode::kInvalidInput, "Relative path segments are not allowed.", {}}.With(
              "s3_code", "InvalidArgument"));
    }
  }
  if (k.empty() || k.ends_with("/")) return {};  // directory markers
  bool ok = false;
  if (format == "lance") {
    ok = k.ends_with(".lance") || k.starts_with("_versions/") || k.starts_with("_transactions/") ||
         k.starts_with("_indices/") || k.starts_with("_deletions/") || k.starts_with("_refs/") ||
         k == "_latest.manifest";
  } else if (format == "delta") {
    ok = k.starts_with("_delta_log/") || k.ends_with(".parquet") ||
         k.starts_with("_change_data/") ||
         (k.find("deletion_vector_") != std::string::npos && k.ends_with(".bin"));
  } else if (format == "csv") {
    ok = k.ends_with(".csv") || k.ends_with(".csv.gz") || k.ends_with(".tsv");
  } else if (format == "parquet") {
    ok = k.ends_with(".parquet");
  }
  if (ok) return {};
  return Fail(Error{
      ErrorCode::kInvalidInput,
      "This location belongs to a " + format + " generic table, which accepts only " + format +
          " files; '" + k + "' is not one. Put other objects in the blob bucket " + blob_bucket +
          ".",
      {}}.With("s3_code", "InvalidArgument"));
}

Result<void> CheckWarehouseKey(const std::string& key, const std::string& blob_bucket,
                               const std::vector<GenericLocation>& generic) {
  for (const auto& g : generic) {
    if (key.starts_with(g.prefix)) {
      return CheckGenericTableKey(key.substr(g.prefix.size()), g.format, blob_bucket);
    }
    // The marker of the base location itself ("…/table/") is fine too.
    if (key + "/" == g.prefix || key == g.prefix) return {};
  }
  return CheckTableBucketKey(key, blob_bucket);
}

}  // namespace tablemere::storage
