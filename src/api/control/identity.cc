// The API's own identity: GET /.well-known/openid-configuration, GET /jwks.json and
// POST /v1/tokens (an API key for a 900 s RS256 access token).
#include "api/control/routes.h"
#include "identity/signing_keys.h"

namespace tablemere::api::control {

void BindIdentity(Binder& b, Context& ctx) {
  b.Open("GET", "/.well-known/openid-configuration",
         [&ctx](Request&, const PathParams&) -> Result<Response> {
           const std::string api = ctx.accounts.urls().api;
           Json out = {
               {"issuer", api},
               {"jwks_uri", api + "/jwks.json"},
               {"token_endpoint", api + "/v1/tokens"},
               {"grant_types_supported", Json::array({"client_credentials"})},
               {"response_types_supported", Json::array({"token"})},
               {"subject_types_supported", Json::array({"public"})},
               {"id_token_signing_alg_values_supported", Json::array({"RS256"})},
               {"token_endpoint_auth_methods_supported", Json::array({"client_secret_post"})}};
           return Response::Json(200, out.dump());
         });
  b.Open("GET", "/jwks.json", [&ctx](Request&, const PathParams&) -> Result<Response> {
    auto* keys = ctx.accounts.auth().signing_keys();
    if (keys == nullptr) return Response::Json(200, R"({"keys":[]})");
    return Response::Json(200, keys->JwksJson());
  });
  b.Open("POST", "/v1/tokens", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    TM_ASSIGN(std::string api_key, StringField(body, "api_key"));
    TM_ASSIGN(auto token, ctx.accounts.auth().IssueToken(api_key, req.remote_address));
    Json out = {{"access_token", token.access_token},
                {"token_type", "Bearer"},
                {"expires_in", token.expires_in_s},
                {"principal_id", token.principal_id.str()}};
    return Response::Json(200, out.dump());
  });
}

}  // namespace tablemere::api::control
