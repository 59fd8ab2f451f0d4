// GET /v1/usage: every limit with its current value and headroom, storage per
// organisation and per catalog (from the latest sample of each), and POST
// /internal/usage (the operator's metering: a warehouse's footprint, reported or
// measured now).
#include "api/control/routes.h"
#include "common/strings.h"

namespace tablemere::api::control {
namespace {

Json Counter(int64_t current, int64_t limit) {
  return {
      {"current", current}, {"limit", limit}, {"headroom", std::max<int64_t>(0, limit - current)}};
}

Json StorageJson(const accounts::StorageUsage& u, int64_t limit) {
  Json s = Counter(u.bytes, limit);
  s["unmetered"] = u.warehouses_metered == 0;
  s["measured_at"] = TimeOrNull(u.measured_ms);
  s["complete"] = u.warehouses_metered == u.warehouses;
  s["scope"] = "organization";
  s["scope_id"] = u.org_id.str();
  s["warehouses_metered"] = u.warehouses_metered;
  s["warehouses"] = u.warehouses;
  s["over_limit"] = u.bytes > limit;
  return s;
}

// The public tier: published catalogs' table buckets, against their own allowance.
Json PublicJson(const accounts::StorageUsage& u, int64_t limit) {
  Json s = Counter(u.public_bytes, limit);
  s["scope"] = "organization";
  s["scope_id"] = u.org_id.str();
  s["over_limit"] = u.public_bytes > limit;
  return s;
}

Json TrafficFields(Json out, const accounts::BucketTraffic& t, int intervals) {
  out["requests"] = t.requests;
  out["requests_failed"] = t.requests_failed;
  out["bytes_in"] = t.bytes_in;
  out["bytes_out"] = t.bytes_out;
  out["intervals"] = intervals;
  return out;
}

Json HistoryJson(const accounts::WarehouseHistory& h) {
  Json rows = Json::array();
  for (const auto& r : h.rows) {
    rows.push_back(TrafficFields({{"day", r.day},
                                  {"bytes", r.last.table_bytes + r.last.blob_bytes},
                                  {"objects", r.last.table_objects + r.last.blob_objects},
                                  {"blob_bytes", r.last.blob_bytes},
                                  {"blob_objects", r.last.blob_objects},
                                  {"complete", true},
                                  {"measured_at", FormatIso8601(r.last.at_ms)},
                                  {"samples", r.samples}},
                                 r.traffic, r.intervals));
  }
  return rows;
}

Json WarehouseStorageJson(const accounts::WarehouseUsage& w) {
  const auto& s = w.sample;
  const auto& h = w.history;
  const bool published = w.warehouse.published_ms != 0;
  Json out = {{"warehouse_id", w.warehouse.id.str()},
              {"name", w.warehouse.name},
              {"tier", published ? "public" : "private"},
              {"public", published},
              {"read_only", w.warehouse.read_only_ms != 0},
              {"unmetered", !s.has_value()},
              {"history", HistoryJson(h)},
              {"trend", nullptr},
              {"traffic", nullptr}};
  if (h.first && h.last) {
    const auto bytes = [](const metastore::UsageSample& x) { return x.table_bytes + x.blob_bytes; };
    const auto objects = [](const metastore::UsageSample& x) {
      return x.table_objects + x.blob_objects;
    };
    out["trend"] = {{"days", h.days},
                    {"from", FormatIso8601(h.first->at_ms)},
                    {"to", FormatIso8601(h.last->at_ms)},
                    {"bytes_from", bytes(*h.first)},
                    {"bytes_to", bytes(*h.last)},
                    {"bytes_delta", bytes(*h.last) - bytes(*h.first)},
                    {"objects_delta", objects(*h.last) - objects(*h.first)},
                    {"days_measured", h.rows.size()}};
  }
  if (h.intervals > 0) {
    out["traffic"] = TrafficFields({{"days", h.days},
                                    {"resets", h.resets},
                                    {"since", FormatIso8601(h.traffic_since_ms)},
                                    {"to", FormatIso8601(h.traffic_to_ms)},
                                    {"source", "tablemere-s3 per-bucket counters"}},
                                   h.traffic, h.intervals);
  } else {
    out["traffic_note"] =
        "Traffic appears once two consecutive hourly samples carry the S3 listener's "
        "per-bucket counters. No object keys and no query contents are collected.";
  }
  if (s) {
    out["bytes"] = s->table_bytes + s->blob_bytes;
    out["objects"] = s->table_objects + s->blob_objects;
    out["measured_at"] = FormatIso8601(s->at_ms);
    out["buckets"] = {{"table", "w-" + w.warehouse.id.str()},
                      {"blob", "b-" + w.warehouse.id.str()}};
    out["table_bytes"] = s->table_bytes;
    out["blob_bytes"] = s->blob_bytes;
    out["blob_objects"] = s->blob_objects;
    out["complete"] = true;
  } else {
    out["bytes"] = nullptr;
    out["objects"] = nullptr;
    out["measured_at"] = nullptr;
    out["complete"] = false;
  }
  return out;
}

}  // namespace

void BindUsage(Binder& b, Context& ctx) {
  b.Authed(
      "GET", "/v1/usage",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        auto q = QueryMap(req);
        int days = 7;
        if (!q["days"].empty()) {
          auto n = ParseInt(q["days"]);
          if (!n || *n < 1 || *n > 30) {
            return Fail(Error{ErrorCode::kInvalidInput, "days must be 1..30", {}}
                            .With("code", "invalid_value")
                            .With("field", "days"));
          }
          days = static_cast<int>(*n);
        }
        TM_ASSIGN(auto report, ctx.accounts.usage().Usage(caller, q["project_id"], days));
        const auto& l = ctx.accounts.limits();
        Json limits = {{"storage_bytes", l.storage_bytes},
                       {"objects", l.objects},
                       {"tables", l.tables},
                       {"namespaces", l.namespaces},
                       {"warehouses", l.warehouses_per_project},
                       {"catalog_operations_per_month", l.catalog_operations_per_month},
                       {"commits_per_month", l.commits_per_month},
                       {"min_seconds_between_commits", l.min_seconds_between_commits},
                       {"snapshot_retention_days", l.snapshot_retention_days},
                       {"max_snapshots_per_table", l.max_snapshots_per_table}};
        Json projects = Json::array();
        for (const auto& p : report.projects) {
          Json ids = Json::array();
          Json per = Json::array();
          const accounts::StorageUsage* org_storage = nullptr;
          for (const auto& [o, role] : report.orgs) {
            if (o.org_id == p.project.org_id) org_storage = &o;
          }
          for (const auto& w : p.warehouses) {
            ids.push_back(w.id.str());
            if (org_storage == nullptr) continue;
            for (const auto& wu : org_storage->per_warehouse) {
              if (wu.warehouse.id == w.id) per.push_back(WarehouseStorageJson(wu));
            }
          }
          Json entry = {{"project_id", p.project.id.str()},
                        {"name", p.project.name},
                        {"org_id", p.project.org_id.str()},
                        {"warehouses", Counter(static_cast<int64_t>(p.warehouses.size()),
                                               l.warehouses_per_project)},
                        {"warehouse_ids", ids},
                        {"warehouse_storage", per}};
          if (org_storage) {
            entry["storage_bytes"] = StorageJson(*org_storage, l.storage_bytes);
            entry["public_storage_bytes"] = PublicJson(*org_storage, l.public_storage_bytes);
          }
          projects.push_back(entry);
        }
        Json orgs = Json::array();
        for (const auto& [o, role] : report.orgs) {
          orgs.push_back({{"org_id", o.org_id.str()},
                          {"storage_bytes", StorageJson(o, l.storage_bytes)},
                          {"public_storage_bytes", PublicJson(o, l.public_storage_bytes)},
                          {"role", metastore::Name(role)}});
        }
        // ?warehouse_id=<id or name>: that warehouse's view alone (its storage and traffic
        // by day), after the same access check as every warehouse route (404 naming both
        // forms for one the caller cannot see).
        std::string only = q.count("warehouse_id") ? q["warehouse_id"] : q["warehouse"];
        if (!only.empty()) {
          TM_ASSIGN(auto access, ctx.accounts.access().HeldAccess(caller, only));
          for (const auto& p : projects) {
            for (const auto& s : p["warehouse_storage"]) {
              if (s.value("warehouse_id", "") == access.warehouse.id.str()) {
                return Response::Json(200, s.dump());
              }
            }
          }
          return Fail(
              Error{ErrorCode::kNotFound, "No usage is recorded for this warehouse", {}}.With(
                  "code", "warehouse_not_found"));
        }
        Json out = {{"principal_id", caller.principal.id.str()},
                    {"kind", metastore::Name(caller.principal.kind)},
                    {"display_name", caller.principal.display_name},
                    {"limits", limits},
                    {"history_days", days},
                    {"projects", projects},
                    {"organizations", orgs},
                    {"note",
                     "Storage is the latest sample of every catalog, summed per "
                     "organisation; 'unmetered' until a catalog's first sample."}};
        return Response::Json(200, out.dump());
      });
}

}  // namespace tablemere::api::control
