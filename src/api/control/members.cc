// The members of an organisation (GET/PATCH/DELETE /v1/orgs/{org_id}/members…) and its
// invitations (POST /v1/orgs/{org_id}/invitations, POST /v1/orgs/invitations/accept).
#include "api/control/routes.h"

namespace tablemere::api::control {

// An invitation is redeemable for a week (API reference).
constexpr int kInvitationSeconds = 7 * 24 * 3600;

void BindMembers(Binder& b, Context& ctx) {
  b.Authed(
      "GET", "/v1/orgs/{org_id}/members",
      [&ctx](Request&, const PathParams& params,
             const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto org, ctx.accounts.access().ResolveOrg(caller, params.at("org_id")));
        TM_ASSIGN(auto members, ctx.accounts.orgs().Members(caller, params.at("org_id")));
        Json list = Json::array();
        for (const auto& m : members) {
          list.push_back(
              {{"principal_id", m.principal.id.str()},
               {"role", metastore::Name(m.membership.role)},
               {"created_at", TimeOrNull(m.membership.created_ms ? m.membership.created_ms
                                                                 : m.principal.created_ms)},
               {"display_name", m.principal.display_name},
               {"email", m.principal.email.empty() ? Json(nullptr) : Json(m.principal.email)},
               {"kind", metastore::Name(m.principal.kind)}});
        }
        return Response::Json(200, Json{{"org_id", org.org.id.str()}, {"members", list}}.dump());
      });
  b.Authed("PATCH", "/v1/orgs/{org_id}/members/{member_id}",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto r, Parse<wire::SetRole>(req));
             TM_ASSIGN(auto m, ctx.accounts.orgs().SetMemberRole(caller, params.at("org_id"),
                                                                 params.at("member_id"), r.role,
                                                                 req.request_id));
             Json out = {{"org_id", m.membership.org_id.str()},
                         {"principal_id", m.principal.id.str()},
                         {"role", metastore::Name(m.membership.role)}};
             return Response::Json(200, out.dump());
           });
  b.Authed("DELETE", "/v1/orgs/{org_id}/members/{member_id}",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto r,
                       ctx.accounts.orgs().RemoveMember(caller, params.at("org_id"),
                                                        params.at("member_id"), req.request_id));
             Json out = {{"org_id", r.org_id.str()},
                         {"principal_id", r.principal_id.str()},
                         {"removed", true},
                         {"left", r.left}};
             return Response::Json(200, out.dump());
           });
  b.Authed("POST", "/v1/orgs/{org_id}/invitations",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto r, Parse<wire::Invite>(req));
             TM_ASSIGN(auto inv, ctx.accounts.orgs().Invite(caller, params.at("org_id"), r.email,
                                                            r.role, req.request_id));
             Json out = {
                 {"org_id", inv.invitation.org_id.str()},
                 {"email", inv.invitation.email},
                 {"role", metastore::Name(inv.invitation.role)},
                 {"token", inv.token},
                 {"mailed", false},
                 {"expires_in", kInvitationSeconds},
                 {"accept_with", "tablemere org accept --token " + inv.token},
                 {"note",
                  "The token is shown once. If the address signs up later, the invitation is "
                  "applied automatically."}};
             return Response::Json(201, out.dump());
           });
  b.Authed(
      "POST", "/v1/orgs/invitations/accept",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(Json body, Body(req));
        TM_ASSIGN(std::string token, StringField(body, "token"));
        TM_ASSIGN(auto v, ctx.accounts.orgs().AcceptInvitation(caller, token, req.request_id));
        return Response::Json(200, OrgJson(v).dump());
      });
}

}  // namespace tablemere::api::control
