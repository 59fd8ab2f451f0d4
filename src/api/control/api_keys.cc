// POST/GET /v1/api-keys and DELETE /v1/api-keys/{key_id}: the caller's own keys.
#include "api/control/routes.h"

namespace tablemere::api::control {
namespace {

Json KeyJson(const metastore::ApiKey& k) {
  return {{"key_id", k.key_id},
          {"label", k.label},
          {"created_at", FormatIso8601(k.created_ms)},
          {"last_used_at", TimeOrNull(k.last_used_ms)},
          {"revoked_at", k.revoked ? Json(FormatIso8601(k.revoked_ms)) : Json(nullptr)}};
}

}  // namespace

void BindApiKeys(Binder& b, Context& ctx) {
  b.Authed(
      "POST", "/v1/api-keys",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto r, Parse<wire::CreateApiKey>(req));
        TM_ASSIGN(auto issued, ctx.accounts.api_keys().Create(caller, r.label, req.request_id));
        Json out = {{"api_key", issued.api_key},
                    {"key_id", issued.record.key_id},
                    {"label", issued.record.label},
                    {"principal_id", caller.principal.id.str()},
                    {"note", "Shown once. Only its hash is stored; keep it somewhere safe."}};
        return Response::Json(201, out.dump());
      });
  b.Authed("GET", "/v1/api-keys",
           [&ctx](Request&, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto keys, ctx.accounts.api_keys().List(caller));
             Json list = Json::array();
             for (const auto& k : keys) list.push_back(KeyJson(k));
             return Response::Json(200, Json{{"api_keys", list}}.dump());
           });
  b.Authed("DELETE", "/v1/api-keys/{key_id}",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto k,
                       ctx.accounts.api_keys().Revoke(caller, params.at("key_id"), req.request_id));
             return Response::Json(200, Json{{"key_id", k.key_id}, {"revoked", true}}.dump());
           });
}

}  // namespace tablemere::api::control
