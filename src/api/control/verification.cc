// The email-code signup (POST /v1/signup/start, /v1/signup/verify) and key recovery
// (POST /v1/recover/start, /v1/recover/verify).
#include "accounts/verification.h"
#include "api/control/routes.h"

namespace tablemere::api::control {
namespace {

Json OrgBrief(const metastore::Organization& o) {
  return {{"org_id", o.id.str()}, {"name", o.name}, {"handle", o.handle}};
}

}  // namespace

std::string DeliveryNote(const std::string& delivery, const std::string& what) {
  if (delivery != "log") return "The " + what + " is on its way to the address.";
  return "No mail server is configured (log delivery): the message with the " + what +
         " was written to the server's output (the terminal running tablemere-server or "
         "scripts/start.sh), under 'mail (log delivery…)' with its recipient and subject. "
         "Nothing is written for an address that gets no mail.";
}

void BindVerification(Binder& b, Context& ctx) {
  b.Open("POST", "/v1/signup/start", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    accounts::SignupStart r;
    TM_ASSIGN(r.email, RequiredString(body, "email"));
    TM_ASSIGN(r.workspace, StringField(body, "workspace"));
    TM_ASSIGN(r.full_name, StringField(body, "full_name"));
    TM_ASSIGN(r.organization_name, StringField(body, "organization_name"));
    TM_ASSIGN(r.handle, StringField(body, "handle"));
    TM_ASSIGN(auto started, ctx.verification.StartSignup(r));
    const std::string api = ctx.accounts.urls().api;
    Json out = {{"email", started.email},
                {"workspace", started.workspace},
                {"delivery", started.delivery},
                {"terms",
                 {{"version", accounts::kTermsVersion},
                  {"url", api + "/terms"},
                  {"privacy_url", api + "/privacy"},
                  {"note", "Verifying with accept_terms: true accepts this version."}}},
                {"next",
                 "POST /v1/signup/verify {email, code, accept_terms: true} (tablemere signup "
                 "--email … --code … --accept-terms)"},
                {"note", DeliveryNote(started.delivery, "six-digit code")},
                {"expires_in", started.expires_in_s},
                {"code_length", 6}};
    if (started.pending_org) {
      Json org = OrgBrief(*started.pending_org);
      org["status"] = "pending";
      out["organization"] = org;
    }
    if (started.will_join) out["will_join"] = OrgBrief(*started.will_join);
    return Response::Json(202, out.dump());
  });

  b.Open("POST", "/v1/signup/verify", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    accounts::SignupVerify r;
    TM_ASSIGN(r.email, RequiredString(body, "email"));
    TM_ASSIGN(r.code, RequiredString(body, "code"));
    auto terms = body.find("accept_terms");
    r.accept_terms = terms != body.end() && terms->is_boolean() && terms->get<bool>();
    TM_ASSIGN(r.engine, StringField(body, "engine"));
    if (r.engine.empty()) r.engine = "duckdb";
    TM_ASSIGN(auto result, ctx.verification.VerifySignup(r));
    TM_ASSIGN(Json out, SignupJson(ctx, result, r.engine));
    return Response::Json(201, out.dump());
  });

  b.Open("POST", "/v1/recover/start", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    TM_ASSIGN(std::string email, RequiredString(body, "email"));
    TM_ASSIGN(auto started, ctx.verification.StartRecovery(email));
    Json out = {{"email", started.email},
                {"delivery", started.delivery},
                {"note", DeliveryNote(started.delivery, "six-digit code")},
                {"expires_in", started.expires_in_s},
                {"next",
                 "POST /v1/recover/verify {email, code} (tablemere recover --email … "
                 "--code … --save)"}};
    return Response::Json(202, out.dump());
  });

  b.Open("POST", "/v1/recover/verify", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    TM_ASSIGN(std::string email, RequiredString(body, "email"));
    TM_ASSIGN(std::string code, RequiredString(body, "code"));
    TM_ASSIGN(auto recovered, ctx.verification.VerifyRecovery(email, code));
    Json out = {{"api_key", recovered.key.api_key},
                {"key_id", recovered.key.record.key_id},
                {"principal_id", recovered.principal_id.str()},
                {"note",
                 "A new key, shown once. Earlier keys keep working until you revoke them "
                 "(tablemere api-key list / revoke)."}};
    return Response::Json(200, out.dump());
  });
}

}  // namespace tablemere::api::control
