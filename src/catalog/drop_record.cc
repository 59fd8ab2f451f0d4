#include "catalog/drop_record.h"

#include "iceberg/json_access.h"

namespace tablemere::catalog {

std::string DropTaskPayload(const DropRecord& record, const std::string& bucket,
                            const std::string& purge_prefix) {
  Json payload = {{"warehouse", record.warehouse_id}, {"namespace", record.ident.ns},
                  {"name", record.ident.name},        {"location", record.location},
                  {"dropped-by", record.dropped_by},  {"dropped-ms", record.dropped_ms}};
  if (!purge_prefix.empty()) {
    payload["bucket"] = bucket;
    payload["prefix"] = purge_prefix;
  }
  return payload.dump();
}

Result<DropRecord> ParseDropRecord(const std::string& payload_json, int64_t task_id) {
  const std::string what = "task " + std::to_string(task_id);
  Json payload = Json::parse(payload_json, nullptr, false);
  if (!payload.is_object()) {
    return Fail(Error{
        ErrorCode::kInternal, "Stored " + what + " has a payload that is not a JSON object", {}});
  }
  if (!payload.contains("dropped-by")) {
    return Fail(Error{ErrorCode::kNotFound, what + " carries no drop record", {}});
  }
  auto corrupt = [&](const Error& e) {
    return Fail(Error{ErrorCode::kInternal, "Stored " + what + " is corrupt: " + e.message, {}});
  };
  DropRecord r;
  auto text = [&](const char* key, std::string& out) -> Result<void> {
    auto v = iceberg::RequireString(payload, key, "drop record");
    if (!v) return corrupt(v.error());
    out = std::move(*v);
    return {};
  };
  TM_TRY(text("warehouse", r.warehouse_id));
  TM_TRY(text("name", r.ident.name));
  TM_TRY(text("location", r.location));
  TM_TRY(text("dropped-by", r.dropped_by));
  auto ms = iceberg::RequireInt(payload, "dropped-ms", "drop record");
  if (!ms) return corrupt(ms.error());
  r.dropped_ms = *ms;
  auto levels = iceberg::RequireArray(payload, "namespace", "drop record");
  if (!levels) return corrupt(levels.error());
  for (const Json& level : **levels) {
    if (!level.is_string()) {
      return Fail(Error{ErrorCode::kInternal,
                        "Stored " + what + " is corrupt: a namespace level is not a string",
                        {}});
    }
    r.ident.ns.push_back(level.get<std::string>());
  }
  return r;
}

bool ServesDroppedRefresh(const DropRecord& record, const CatalogPrincipal& caller,
                          const TableIdent& ident, int64_t now_ms, int64_t window_ms) {
  return record.warehouse_id == caller.warehouse_id && record.dropped_by == caller.identity &&
         !caller.read_only && record.ident.ns == ident.ns && record.ident.name == ident.name &&
         now_ms >= record.dropped_ms && now_ms - record.dropped_ms <= window_ms;
}

}  // namespace tablemere::catalog
