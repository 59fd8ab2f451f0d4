// GET /v1/warehouses/{id}/grants, PUT and DELETE …/grants/{principal_id}: who holds what
// on a catalog, explicit grants and the implicit ones with their `via`.
#include "api/control/routes.h"

namespace tablemere::api::control {
namespace {

Json GrantJson(const accounts::GrantView& g) {
  return {{"principal_id", g.principal_id.str()},
          {"kind", metastore::Name(g.kind)},
          {"display", g.display},
          {"level", metastore::Name(g.level)},
          {"via", g.via},
          {"granted_by", g.granted_by.empty() ? Json(nullptr) : Json(g.granted_by.str())},
          {"granted_at", TimeOrNull(g.granted_ms)}};
}

}  // namespace

void BindGrants(Binder& b, Context& ctx) {
  b.Authed("GET", "/v1/warehouses/{warehouse_id}/grants",
           [&ctx](Request&, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto grants,
                       ctx.accounts.grants().Grants(caller, params.at("warehouse_id")));
             Json list = Json::array();
             for (const auto& g : grants) list.push_back(GrantJson(g));
             return Response::Json(200, list.dump());
           });
  b.Authed("PUT", "/v1/warehouses/{warehouse_id}/grants/{principal_id}",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto r, Parse<wire::SetGrant>(req));
             TM_ASSIGN(auto g, ctx.accounts.grants().PutGrant(caller, params.at("warehouse_id"),
                                                              params.at("principal_id"), r.level,
                                                              req.request_id));
             Json out = GrantJson(g);
             out["warehouse_id"] = g.warehouse_id.str();
             return Response::Json(200, out.dump());
           });
  b.Authed("DELETE", "/v1/warehouses/{warehouse_id}/grants/{principal_id}",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto r, ctx.accounts.grants().RevokeGrant(caller, params.at("warehouse_id"),
                                                                 params.at("principal_id"),
                                                                 req.request_id));
             Json out = {
                 {"warehouse_id", r.before.warehouse_id.str()},
                 {"principal_id", r.before.principal_id.str()},
                 {"kind", metastore::Name(r.before.kind)},
                 {"display", r.before.display},
                 {"revoked", {{"level", metastore::Name(r.before.level)}, {"via", r.before.via}}},
                 {"level", metastore::Name(r.after.level)},
                 {"via", r.after.via.empty() ? Json(nullptr) : Json(r.after.via)}};
             return Response::Json(200, out.dump());
           });
}

}  // namespace tablemere::api::control
