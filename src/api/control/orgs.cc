// GET /v1/orgs, PATCH /v1/orgs/{org_id}, and the claimed domains
// (POST /v1/orgs/{org_id}/domains, DELETE /v1/orgs/{org_id}/domains/{domain}).
#include "api/control/routes.h"
#include "common/strings.h"

namespace tablemere::api::control {

Json OrgJson(const accounts::OrgView& v) {
  Json domains = Json::array();
  for (const auto& d : v.domains) {
    domains.push_back({{"domain", d.domain}, {"verified_via", d.verified_via}});
  }
  return {{"org_id", v.org.id.str()},
          {"name", v.org.name},
          {"handle", v.org.handle},
          {"status", v.org.status},
          {"role", metastore::Name(v.role)},
          {"domain_join", v.org.domain_join},
          {"domains", domains},
          {"members", v.members},
          {"created_at", FormatIso8601(v.org.created_ms)}};
}

void BindOrgs(Binder& b, Context& ctx) {
  b.Authed("GET", "/v1/orgs",
           [&ctx](Request&, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto orgs, ctx.accounts.orgs().OrgViews(caller));
             Json list = Json::array();
             for (const auto& v : orgs) list.push_back(OrgJson(v));
             return Response::Json(200, Json{{"organizations", list}}.dump());
           });
  b.Authed("PATCH", "/v1/orgs/{org_id}",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto r, Parse<wire::UpdateOrg>(req));
             accounts::OrgUpdate update;
             update.name = r.name;
             update.domain_join = r.domain_join;
             TM_ASSIGN(auto v, ctx.accounts.orgs().UpdateOrg(caller, params.at("org_id"), update,
                                                             req.request_id));
             return Response::Json(200, OrgJson(v).dump());
           });
  b.Authed("POST", "/v1/orgs/{org_id}/domains",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(Json body, Body(req));
             TM_ASSIGN(std::string domain, RequiredString(body, "domain"));
             TM_ASSIGN(auto v, ctx.accounts.orgs().ClaimDomain(caller, params.at("org_id"), domain,
                                                               req.request_id));
             return Response::Json(201, OrgJson(v).dump());
           });
  b.Authed("DELETE", "/v1/orgs/{org_id}/domains/{domain}",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto v,
                       ctx.accounts.orgs().ReleaseDomain(caller, params.at("org_id"),
                                                         params.at("domain"), req.request_id));
             Json out = OrgJson(v);
             out["removed"] = ToLower(params.at("domain"));
             return Response::Json(200, out.dump());
           });
}

}  // namespace tablemere::api::control
