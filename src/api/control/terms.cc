// GET /v1/terms, POST /v1/terms/accept, and DELETE /v1/me (deleting one's own account).
#include "api/control/routes.h"

namespace tablemere::api::control {
namespace {

Json TermsJson(const accounts::TermsView& t, const std::string& api) {
  Json history = Json::array();
  for (const auto& a : t.history) {
    history.push_back(
        {{"version", a.version}, {"accepted_at", FormatIso8601(a.accepted_ms)}, {"via", a.via}});
  }
  return {{"current_version", t.current_version},
          {"terms_url", api + "/terms"},
          {"privacy_url", api + "/privacy"},
          {"accepted_current", t.accepted_current},
          {"history", history}};
}

}  // namespace

void BindTerms(Binder& b, Context& ctx) {
  b.Authed("GET", "/v1/terms",
           [&ctx](Request&, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto t, ctx.accounts.terms().Terms(caller));
             return Response::Json(200, TermsJson(t, ctx.accounts.urls().api).dump());
           });
  b.Authed(
      "POST", "/v1/terms/accept",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(Json body, Body(req));
        TM_ASSIGN(std::string version, StringField(body, "version"));
        TM_ASSIGN(auto t, ctx.accounts.terms().AcceptTerms(caller, version, req.request_id));
        return Response::Json(200, Json{{"accepted", true}, {"version", t.current_version}}.dump());
      });
  b.Authed(
      "DELETE", "/v1/me",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto r, Parse<wire::Confirm>(req));
        TM_ASSIGN(auto d, ctx.accounts.terms().DeleteAccount(caller, r.confirm, req.request_id));
        Json out = {{"deleted", true},
                    {"principal_id", d.principal_id.str()},
                    {"keys_revoked", d.keys_revoked},
                    {"organisations_left_empty", d.orgs_left_empty},
                    {"warehouses_to_purge", d.warehouses_to_purge},
                    {"note",
                     "Your keys are revoked and your memberships removed. Data of "
                     "organisations left without members is erased within 30 days."}};
        return Response::Json(200, out.dump());
      });
}

}  // namespace tablemere::api::control
