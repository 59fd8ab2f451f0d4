// GET /v1/orgs: the caller's organisations and its role in each.
#include "api/control/routes.h"

namespace tablemere::api::control {

void BindOrgs(Binder& b, Context& ctx) {
  b.Authed("GET", "/v1/orgs",
           [&ctx](Request&, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto orgs, ctx.accounts.Orgs(caller));
             Json list = Json::array();
             for (const auto& [org, role] : orgs) {
               list.push_back({{"org_id", org.id.str()},
                               {"name", org.name},
                               {"handle", org.handle},
                               {"status", "active"},
                               {"role", metastore::Name(role)},
                               {"domain_join", false},
                               {"domains", Json::array()},
                               {"created_at", FormatIso8601(org.created_ms)}});
             }
             return Response::Json(200, Json{{"organizations", list}}.dump());
           });
}

}  // namespace tablemere::api::control
