#include "catalog/manifest_files.h"

#include <map>

#include "common/crypto.h"

namespace tablemere::catalog {
namespace {

// The reserved field id of a position delete file's file_path column, and the id DuckDB
// 1.5 keys its bounds by (2147483646, one hundred off the spec's).
constexpr const char* kDeleteFilePathIds[] = {"2147483546", "2147483646"};

// A map<int, bytes> of a data file (an array of {key, value}) as id -> hex.
std::map<std::string, std::string> Bounds(const Json& file, const char* name) {
  std::map<std::string, std::string> out;
  auto it = file.find(name);
  if (it == file.end() || !it->is_array()) return out;
  for (const auto& kv : *it) {
    if (kv.contains("key") && kv.contains("value") && kv["value"].is_string()) {
      out[kv["key"].dump()] = kv["value"].get<std::string>();
    }
  }
  return out;
}

}  // namespace

Result<avro::Container> ReadManifestFile(WarehouseFiles& files, const metastore::Warehouse& w,
                                         const std::string& location) {
  TM_ASSIGN(std::string bytes, files.ReadBytes(w, location, kMaxManifestBytes));
  return avro::ReadContainer(bytes);
}

std::optional<PathRange> PositionDeletePaths(const Json& file) {
  auto lower = Bounds(file, "lower_bounds"), upper = Bounds(file, "upper_bounds");
  for (const char* id : kDeleteFilePathIds) {
    auto lo = lower.find(id), hi = upper.find(id);
    if (lo == lower.end() || hi == upper.end()) continue;
    auto first = crypto::HexDecode(lo->second), last = crypto::HexDecode(hi->second);
    if (!first || !last) return std::nullopt;
    return PathRange{WarehouseFiles::Canonical(*first), WarehouseFiles::Canonical(*last)};
  }
  return std::nullopt;
}

std::string PositionDeleteTarget(const Json& file) {
  auto ref = file.find("referenced_data_file");
  if (ref != file.end() && ref->is_string()) return WarehouseFiles::Canonical(*ref);
  auto range = PositionDeletePaths(file);
  return range && range->first == range->last ? range->first : "";
}

}  // namespace tablemere::catalog
