// POST /v1/signup (the one-call signup of local stacks) and GET /v1/handles/{handle}
// (the signup form's handle check).
#include "accounts/handles.h"
#include "api/control/routes.h"

namespace tablemere::api::control {

Result<Json> SignupJson(Context& ctx, const accounts::SignupResult& result,
                        const std::string& engine) {
  Json connection = nullptr;
  if (result.warehouse) {
    accounts::WarehouseAccess access{*result.warehouse, metastore::Level::kWrite, "admin"};
    TM_ASSIGN(auto recipe, ctx.accounts.recipes().BuildConnection(access, engine));
    connection = ConnectionJson(recipe);
  } else {
    accounts::Caller caller{result.principal, ""};
    if (auto access = ctx.accounts.access().DefaultWarehouse(caller)) {
      TM_ASSIGN(auto recipe, ctx.accounts.recipes().BuildConnection(*access, engine));
      connection = ConnectionJson(recipe);
    }
  }
  return Json{
      {"api_key", result.api_key},
      {"api_key_note", "Shown once. Only its hash is stored; keep it somewhere safe."},
      {"principal_id", result.principal.id.str()},
      {"project_id", result.project ? Json(result.project->id.str()) : Json(nullptr)},
      {"warehouse_id", connection.is_object() ? connection["warehouse_id"] : Json(nullptr)},
      {"organization",
       {{"org_id", result.org.id.str()},
        {"role", metastore::Name(result.role)},
        {"joined_via", result.joined_via}}},
      {"connection", connection},
      {"next", Json::array({"Run the connection recipe in your engine",
                            "GET /v1/connection?engine=pyiceberg for another engine"})},
      {"terms",
       {{"version", accounts::kTermsVersion},
        {"accepted", true},
        {"url", ctx.accounts.urls().api + "/terms"}}},
  };
}

void BindSignup(Binder& b, Context& ctx) {
  b.Open("POST", "/v1/signup", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    accounts::SignupRequest r;
    TM_ASSIGN(r.email, StringField(body, "email"));
    TM_ASSIGN(r.workspace, StringField(body, "workspace"));
    TM_ASSIGN(r.engine, StringField(body, "engine"));
    if (r.engine.empty()) r.engine = "duckdb";
    auto terms = body.find("accept_terms");
    r.accept_terms = terms != body.end() && terms->is_boolean() && terms->get<bool>();
    TM_ASSIGN(auto result, ctx.accounts.signup().Signup(r));
    TM_ASSIGN(Json out, SignupJson(ctx, result, r.engine));
    return Response::Json(201, out.dump());
  });

  b.Open("GET", "/v1/handles/{handle}",
         [&ctx](Request& req, const PathParams& params) -> Result<Response> {
           TM_ASSIGN(auto h, ctx.accounts.signup().CheckHandleFrom(params.at("handle"),
                                                                   req.remote_address));
           Json out = {{"handle", h.handle},
                       {"valid", h.valid},
                       {"available", h.available},
                       {"reason", h.reason.empty() ? Json(nullptr) : Json(h.reason)},
                       {"suggestion", h.suggestion.empty() ? Json(nullptr) : Json(h.suggestion)},
                       {"pattern", accounts::kHandlePattern}};
           return Response::Json(200, out.dump());
         });
}

}  // namespace tablemere::api::control
