// POST /v1/onboard (an organisation, a project and `lake` for a caller that has none, and
// the recipe) and GET /v1/auth/config (what a browser or CLI needs to log a person in).
#include "api/control/routes.h"
#include "identity/oidc.h"

namespace tablemere::api::control {

void BindOnboard(Binder& b, Context& ctx) {
  b.Authed(
      "POST", "/v1/onboard",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(Json body, Body(req));
        accounts::OnboardRequest r;
        TM_ASSIGN(r.engine, StringField(body, "engine"));
        if (r.engine.empty()) r.engine = "duckdb";
        TM_ASSIGN(auto accept, BoolField(body, "accept_terms"));
        r.accept_terms = accept.value_or(false);
        TM_ASSIGN(r.organization_name, StringField(body, "organization_name"));
        TM_ASSIGN(r.handle, StringField(body, "handle"));
        TM_ASSIGN(r.org_id, StringField(body, "org_id"));
        TM_ASSIGN(auto o, ctx.accounts.signup().Onboard(caller, r));
        TM_ASSIGN(auto recipe, ctx.accounts.recipes().BuildConnection(o.access, r.engine));
        Json out = {{"created", o.created},
                    {"warehouse_id", o.access.warehouse.id.str()},
                    {"connection", ConnectionJson(recipe)},
                    {"organization",
                     {{"org_id", o.org.id.str()},
                      {"name", o.org.name},
                      {"handle", o.org.handle},
                      {"status", o.org.status},
                      {"role", metastore::Name(o.role)},
                      {"joined_via", o.created && o.project ? "created" : "member"}}},
                    {"terms",
                     {{"version", accounts::kTermsVersion},
                      {"accepted", true},
                      {"url", ctx.accounts.urls().api + "/terms"}}},
                    {"note", o.created ? "Created a catalog named lake for you."
                                       : "You already have a catalog; nothing was created."}};
        if (o.project) out["project_id"] = o.project->id.str();
        return Response::Json(200, out.dump());
      });

  b.Open("GET", "/v1/auth/config", [&ctx](Request&, const PathParams&) -> Result<Response> {
    const std::string api = ctx.accounts.urls().api;
    Json issuers = Json::array();
    if (auto* external = ctx.accounts.auth().external_issuers()) {
      auto text = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
      for (const auto& i : external->List()) {
        issuers.push_back({{"issuer", i.config.issuer},
                           {"client_id", text(i.config.client_id)},
                           {"authorization_endpoint", text(i.authorization_endpoint)},
                           {"token_endpoint", text(i.token_endpoint)},
                           {"device_authorization_endpoint", text(i.device_authorization_endpoint)},
                           {"jwks_uri", text(i.jwks_uri)}});
      }
    }
    Json out = {{"issuer", api},
                {"password_login", true},
                {"external_issuers", issuers},
                {"api_key_exchange",
                 {{"token_endpoint", api + "/v1/tokens"}, {"jwks_uri", api + "/jwks.json"}}},
                {"device_authorization_endpoint", api + "/v1/auth/device"}};
    return Response::Json(200, out.dump());
  });
}

}  // namespace tablemere::api::control
