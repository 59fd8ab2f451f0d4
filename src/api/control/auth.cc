// Login and sessions: POST /v1/auth/signup (the signup form), /v1/auth/password/set,
// /v1/auth/login, /v1/auth/refresh, /v1/auth/logout, GET and DELETE /v1/auth/sessions,
// /v1/auth/password/reset/start, /v1/auth/password/reset, /v1/auth/password/change.
#include "accounts/sessions.h"
#include "api/control/routes.h"
#include "common/strings.h"

namespace tablemere::api::control {
namespace {

accounts::ClientInfo ClientOf(const Request& req) {
  return {req.headers.Get("User-Agent").value_or(""), req.remote_address};
}

Json OrgJsonOf(const metastore::Organization& o) {
  return {{"org_id", o.id.str()}, {"name", o.name}, {"handle", o.handle}};
}

// The session shape shared by every route that opens or refreshes one.
Json SessionJson(const accounts::SessionGrant& g) {
  Json org = nullptr;
  if (g.org) {
    org = OrgJsonOf(g.org->org);
    org["role"] = metastore::Name(g.org->role);
    org["joined_via"] = g.joined_via;
  }
  Json out = {{"access_token", g.access_token},
              {"token_type", "Bearer"},
              {"expires_in", g.expires_in_s},
              {"refresh_token", g.refresh_token},
              {"refresh_expires_in", g.refresh_expires_in_s},
              {"session_id", g.session.id},
              {"principal_id", g.principal.id.str()},
              {"principal",
               {{"principal_id", g.principal.id.str()},
                {"kind", metastore::Name(g.principal.kind)},
                {"email", g.principal.email},
                {"display_name", g.principal.display_name}}},
              {"organization", org},
              {"terms", {{"version", accounts::kTermsVersion}, {"accepted", g.terms_accepted}}},
              {"next", Json::array({"Send Authorization: Bearer <access_token> to the API",
                                    "POST /v1/auth/refresh with the refresh_token before "
                                    "expires_in runs out"})}};
  if (!g.return_to.empty()) out["return_to"] = g.return_to;
  return out;
}

Result<std::pair<std::string, std::string>> TokenAndPassword(Request& req) {
  TM_ASSIGN(Json body, Body(req));
  TM_ASSIGN(std::string token, RequiredString(body, "token"));
  TM_ASSIGN(std::string password, RequiredString(body, "password"));
  return std::pair{token, password};
}

}  // namespace

void BindAuth(Binder& b, Context& ctx) {
  b.Open("POST", "/v1/auth/signup", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    accounts::FormSignup form;
    TM_ASSIGN(form.email, RequiredString(body, "email"));
    TM_ASSIGN(form.full_name, StringField(body, "full_name"));
    TM_ASSIGN(form.organization_name, StringField(body, "organization_name"));
    TM_ASSIGN(form.handle, StringField(body, "handle"));
    TM_ASSIGN(form.return_to, StringField(body, "return_to"));
    TM_ASSIGN(auto s, ctx.sessions.StartFormSignup(form, req.remote_address));
    Json out = {
        {"email", s.landing.email},
        {"delivery", s.delivery},
        {"note", DeliveryNote(s.delivery, "set-password link")},
        {"expires_in", s.expires_in_s},
        {"terms",
         {{"version", accounts::kTermsVersion}, {"url", ctx.accounts.urls().api + "/terms"}}},
        {"next", "Open the link mailed to " + s.landing.email + " to set your password"},
        {"return_to", s.return_to.empty() ? Json(nullptr) : Json(s.return_to)}};
    if (s.landing.pending_org) {
      out["organization"] = OrgJsonOf(*s.landing.pending_org);
      out["organization"]["status"] = "pending";
    }
    if (s.landing.will_join) out["will_join"] = OrgJsonOf(*s.landing.will_join);
    return Response::Json(202, out.dump());
  });

  b.Open("POST", "/v1/auth/password/set",
         [&ctx](Request& req, const PathParams&) -> Result<Response> {
           TM_ASSIGN(auto tp, TokenAndPassword(req));
           TM_ASSIGN(auto g, ctx.sessions.SetFirstPassword(tp.first, tp.second, ClientOf(req)));
           return Response::Json(200, SessionJson(g).dump());
         });

  b.Open("POST", "/v1/auth/login", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    TM_ASSIGN(std::string email, RequiredString(body, "email"));
    TM_ASSIGN(std::string password, RequiredString(body, "password"));
    TM_ASSIGN(auto g, ctx.sessions.Login(email, password, ClientOf(req)));
    return Response::Json(200, SessionJson(g).dump());
  });

  b.Open("POST", "/v1/auth/refresh", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    TM_ASSIGN(std::string refresh, RequiredString(body, "refresh_token"));
    TM_ASSIGN(auto g, ctx.sessions.Refresh(refresh));
    return Response::Json(200, SessionJson(g).dump());
  });

  b.Open("POST", "/v1/auth/logout", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    TM_ASSIGN(std::string refresh, StringField(body, "refresh_token"));
    std::string session_id;
    if (!refresh.empty()) {
      TM_ASSIGN(session_id, ctx.sessions.LogoutByRefresh(refresh));
    } else {
      auto auth = req.headers.Get("Authorization");
      if (!auth || !StartsWith(ToLower(*auth), "bearer ")) {
        return Fail(Error{ErrorCode::kInvalidInput,
                          "Send the session's refresh_token, or its access token in "
                          "Authorization",
                          {}}
                        .With("code", "missing_field")
                        .With("field", "refresh_token"));
      }
      TM_ASSIGN(auto caller,
                ctx.accounts.auth().Authenticate(Trim(auth->substr(7)), req.remote_address));
      TM_ASSIGN(session_id, ctx.sessions.Logout(caller));
    }
    return Response::Json(200, Json{{"revoked", true}, {"session_id", session_id}}.dump());
  });

  b.Authed("GET", "/v1/auth/sessions",
           [&ctx](Request&, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto sessions, ctx.sessions.List(caller));
             Json list = Json::array();
             for (const auto& s : sessions) {
               list.push_back({{"session_id", s.id},
                               {"created_at", TimeOrNull(s.created_ms)},
                               {"last_used_at", TimeOrNull(s.last_used_ms)},
                               {"expires_at", TimeOrNull(s.expires_ms)},
                               {"user_agent", s.user_agent},
                               {"ip", s.ip},
                               {"current", s.id == caller.session_id}});
             }
             return Response::Json(200, Json{{"sessions", list}, {"count", list.size()}}.dump());
           });

  b.Authed("DELETE", "/v1/auth/sessions/{session_id}",
           [&ctx](Request&, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto id, ctx.sessions.Revoke(caller, params.at("session_id")));
             return Response::Json(200, Json{{"session_id", id}, {"revoked", true}}.dump());
           });

  b.Open("POST", "/v1/auth/password/reset/start",
         [&ctx](Request& req, const PathParams&) -> Result<Response> {
           TM_ASSIGN(Json body, Body(req));
           TM_ASSIGN(std::string email, RequiredString(body, "email"));
           TM_ASSIGN(auto s, ctx.sessions.StartReset(email, req.remote_address));
           Json out = {{"email", s.email},
                       {"delivery", s.delivery},
                       {"note", DeliveryNote(s.delivery, "reset link")},
                       {"expires_in", s.expires_in_s},
                       {"next", "If the address has an account, a reset link was mailed to it"}};
           return Response::Json(202, out.dump());
         });

  b.Open("POST", "/v1/auth/password/reset",
         [&ctx](Request& req, const PathParams&) -> Result<Response> {
           TM_ASSIGN(auto tp, TokenAndPassword(req));
           TM_ASSIGN(auto done, ctx.sessions.Reset(tp.first, tp.second, ClientOf(req)));
           Json out = SessionJson(done.grant);
           out["sessions_revoked"] = done.sessions_revoked;
           out["first_password"] = done.first_password;
           return Response::Json(200, out.dump());
         });

  b.Authed(
      "POST", "/v1/auth/password/change",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(Json body, Body(req));
        TM_ASSIGN(std::string current, RequiredString(body, "current_password"));
        TM_ASSIGN(std::string replacement, RequiredString(body, "new_password"));
        TM_ASSIGN(auto changed, ctx.sessions.Change(caller, current, replacement));
        Json out = {{"changed", true},
                    {"other_sessions_revoked", changed.other_sessions_revoked},
                    {"password_changed_at", TimeOrNull(changed.changed_ms)}};
        return Response::Json(200, out.dump());
      });
}

}  // namespace tablemere::api::control
