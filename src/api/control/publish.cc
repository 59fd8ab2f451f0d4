// POST and DELETE /v1/warehouses/{id}/public: publishing a warehouse's table bucket for
// anonymous reads (and, only with anonymous_catalog: true, its catalog for anonymous list
// and load), and taking it back.
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
  const bool catalog_open = on && w.catalog_public_ms != 0;
  out["anonymous_catalog"] = catalog_open;
  out["anonymous_catalog_at"] = TimeOrNull(w.catalog_public_ms);
  if (on) {
    out["public_url"] = ctx.accounts.urls().s3 + "/" + bucket + "/";
    std::string note =
        "Anyone may now read every object of the table bucket without credentials (data "
        "files and every retained metadata file, at their public URLs; tablemere catalog "
        "public-url --table NS.TABLE prints a table's). Writes stay refused. ";
    if (catalog_open) {
      out["catalog"] = {{"uri", ctx.accounts.urls().catalog}, {"warehouse", bucket}};
      note +=
          "The REST catalog also lists and loads its tables with no token (anonymous_catalog; "
          "publish again without it to close the catalog). ";
    } else {
      note +=
          "The REST catalog stays private (send anonymous_catalog: true to also open it for "
          "anonymous list and load). ";
    }
    out["note"] = note + "Undo with DELETE /v1/warehouses/" + w.id.str() + "/public.";
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
             TM_ASSIGN(auto r, Parse<wire::Publish>(req));
             TM_ASSIGN(auto p, ctx.accounts.warehouses().SetPublic(
                                   caller, params.at("warehouse_id"), true, r.anonymous_catalog,
                                   r.confirm, req.request_id));
             Json out = PublishedJson(ctx, p);
             // Readers without a catalog find each table's current metadata through its
             // version hint; from now on every commit keeps it current.
             auto hints = ctx.tables.WriteVersionHints(p.warehouse);
             if (hints) {
               out["version_hints_written"] = *hints;
             } else {
               out["warning"] = "The tables' version-hint.text files could not all be written (" +
                                hints.error().message +
                                "); each is written again at its table's next commit, or "
                                "publish again.";
             }
             return Response::Json(200, out.dump());
           });

  b.Authed("DELETE", "/v1/warehouses/{warehouse_id}/public",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto p,
                       ctx.accounts.warehouses().SetPublic(caller, params.at("warehouse_id"), false,
                                                           false, "", req.request_id));
             return Response::Json(200, PublishedJson(ctx, p).dump());
           });
}

}  // namespace tablemere::api::control
