// POST and DELETE /v1/warehouses/{id}/public: publishing a warehouse's table bucket for
// anonymous reads (and its catalog for anonymous list and load), and taking it back.
#include "api/control/routes.h"
#include "storage/access.h"

namespace tablemere::api::control {
namespace {

Json PublishedJson(Context& ctx, const accounts::PublishedWarehouse& p) {
  const auto& w = p.warehouse;
  const bool on = w.published_ms != 0;
  const std::string bucket = storage::TableBucketName(w.id);
  Json out = {{"warehouse_id", w.id.str()},
              {"warehouse_name", w.name},
              {"public", on},
              {"tier", on ? "public" : "private"},
              {"changed", p.changed},
              {"published_at", TimeOrNull(w.published_ms)},
              {"bytes", p.bytes}};
  if (on) {
    out["public_url"] = ctx.accounts.urls().s3 + "/" + bucket + "/";
    out["anonymous_catalog"] = {{"uri", ctx.accounts.urls().catalog}, {"warehouse", bucket}};
    out["note"] =
        "Anyone may now read every object of the table bucket without credentials (data "
        "files and every retained metadata file), and list and load its tables through the "
        "catalog with no token. Writes stay refused. Undo with DELETE "
        "/v1/warehouses/" +
        w.id.str() + "/public.";
  } else {
    out["note"] = "Anonymous reads of the table bucket and the catalog are refused from now on.";
  }
  return out;
}

}  // namespace

void BindPublish(Binder& b, Context& ctx) {
  b.Authed("POST", "/v1/warehouses/{warehouse_id}/public",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto r, Parse<wire::Confirm>(req));
             TM_ASSIGN(auto p, ctx.accounts.SetPublic(caller, params.at("warehouse_id"), true,
                                                      r.confirm, req.request_id));
             return Response::Json(200, PublishedJson(ctx, p).dump());
           });

  b.Authed("DELETE", "/v1/warehouses/{warehouse_id}/public",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto p, ctx.accounts.SetPublic(caller, params.at("warehouse_id"), false, "",
                                                      req.request_id));
             return Response::Json(200, PublishedJson(ctx, p).dump());
           });
}

}  // namespace tablemere::api::control
