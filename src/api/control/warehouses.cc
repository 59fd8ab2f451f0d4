// GET/POST /v1/warehouses, DELETE /v1/warehouses/{id} and POST …/{id}/rotate: the
// catalogs of a project (a warehouse is one Iceberg catalog with a table bucket and a
// blob bucket).
#include "api/control/routes.h"
#include "storage/access.h"

namespace tablemere::api::control {
namespace {

Json MaintenanceJson() {
  return {{"compaction", true},
          {"target_file_size_mb", 128},
          {"snapshot_retention_days", 7},
          {"max_snapshots", 20},
          {"disableable", false}};
}

}  // namespace

void BindWarehouses(Binder& b, Context& ctx) {
  b.Authed(
      "GET", "/v1/warehouses",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        auto q = QueryMap(req);
        // The reference names the parameter `project`; `project_id` is read too.
        std::string project = q.count("project") ? q["project"] : q["project_id"];
        TM_ASSIGN(auto listing, ctx.accounts.projects().Warehouses(caller, project));
        Json list = Json::array();
        for (const auto& w : listing.warehouses) {
          list.push_back({{"name", w.warehouse.name},
                          {"warehouse_id", w.warehouse.id.str()},
                          {"warehouse", "s3://" + storage::TableBucketName(w.warehouse.id) + "/"},
                          {"created_at", FormatIso8601(w.warehouse.created_ms)},
                          {"public", w.warehouse.published_ms != 0},
                          {"anonymous_catalog",
                           w.warehouse.published_ms != 0 && w.warehouse.catalog_public_ms != 0},
                          {"my_level", metastore::Name(w.my_level)},
                          {"my_via", w.my_via.empty() ? Json(nullptr) : Json(w.my_via)}});
        }
        int count = static_cast<int>(listing.warehouses.size());
        Json out = {{"project", listing.project.project.name},
                    {"project_id", listing.project.project.id.str()},
                    {"catalog_uri", ctx.accounts.urls().catalog},
                    {"warehouses", list},
                    {"limit", listing.limit},
                    {"headroom", std::max(0, listing.limit - count)}};
        return Response::Json(200, out.dump());
      });

  b.Authed(
      "POST", "/v1/warehouses",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto body, Parse<wire::CreateWarehouse>(req));
        accounts::CreateWarehouseRequest r;
        r.project = body.project;
        r.name = body.name;
        r.idempotency_key = IdempotencyKey(req);
        r.request_hash = Fingerprint(body.ToJson());
        r.request_id = req.request_id;
        TM_ASSIGN(auto created, ctx.accounts.warehouses().CreateWarehouse(caller, r));
        const auto& w = created.warehouse;
        std::string bucket = storage::TableBucketName(w.id);
        Json out = {{"warehouse_id", w.id.str()},
                    {"name", w.name},
                    {"project_id", w.project_id.str()},
                    {"project", created.project.project.name},
                    {"provider", created.project.provider},
                    {"region", created.project.region},
                    {"catalog_uri", ctx.accounts.urls().catalog},
                    {"warehouse", "s3://" + bucket + "/"},
                    {"warehouse_name", bucket},
                    {"maintenance", MaintenanceJson()}};
        return Response::Json(201, out.dump());
      });

  b.Authed("DELETE", "/v1/warehouses/{warehouse_id}",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto r, Parse<wire::Confirm>(req));
             TM_ASSIGN(auto d, ctx.accounts.warehouses().DeleteWarehouse(
                                   caller, params.at("warehouse_id"), r.confirm, req.request_id));
             Json out = {{"deleted", true},
                         {"warehouse_id", d.warehouse.id.str()},
                         {"name", d.warehouse.name},
                         {"project_id", d.warehouse.project_id.str()},
                         {"tables_dropped", d.tables_dropped},
                         {"bytes_at_deletion", d.bytes_at_deletion},
                         {"measured_at", FormatIso8601(SystemClock().NowMillis())},
                         {"grants_removed", d.grants_removed},
                         {"usage_samples_removed", d.usage_samples_removed},
                         {"storage", {{"step", d.storage_step}}},
                         {"storage_complete", d.storage_complete},
                         {"note",
                          "Deleted from the live system: the catalog, its tables, both buckets "
                          "and their objects, the grants."}};
             if (!d.storage_complete) {
               out["warning"] =
                   "Some objects could not be deleted yet; the server keeps retrying in the "
                   "background.";
             }
             return Response::Json(200, out.dump());
           });

  b.Authed(
      "POST", "/v1/warehouses/{warehouse_id}/rotate",
      [&ctx](Request&, const PathParams& params,
             const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto w, ctx.accounts.warehouses().Rotate(caller, params.at("warehouse_id")));
        std::string rw = accounts::IdentityName(w.id, false);
        std::string ro = accounts::IdentityName(w.id, true);
        Json out = {
            {"warehouse_id", w.id.str()},
            {"warehouse_name", storage::TableBucketName(w.id)},
            {"catalog_credential",
             {{"client_id", rw}, {"client_secret", ctx.accounts.recipes().SecretOf(w, false)}}},
            {"catalog_credential_ro",
             {{"client_id", ro}, {"client_secret", ctx.accounts.recipes().SecretOf(w, true)}}},
            {"previous_client_id", rw},
            {"previous_revoked", true},
            {"previous_client_id_ro", ro},
            {"previous_revoked_ro", true},
            {"rotated_at", FormatIso8601(ctx.accounts.clock().NowMillis())},
            {"note",
             "The identities keep their names; their secrets changed. Old secrets, the "
             "catalog tokens minted from them and vended storage sessions are refused "
             "now (storage within a second). Fetch fresh recipes with GET /v1/connection."}};
        return Response::Json(200, out.dump());
      });
}

}  // namespace tablemere::api::control
