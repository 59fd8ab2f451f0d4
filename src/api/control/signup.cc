// POST /v1/signup (the one-call signup of local stacks) and GET /v1/handles/{handle}
// (the signup form's handle check).
#include "accounts/handles.h"
#include "api/control/routes.h"

namespace tablemere::api::control {

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
    TM_ASSIGN(auto result, ctx.accounts.Signup(r));
    accounts::WarehouseAccess access{result.warehouse, metastore::Level::kWrite, "admin"};
    TM_ASSIGN(auto connection, ctx.accounts.BuildConnection(access, r.engine));
    Json out = {
        {"api_key", result.api_key},
        {"api_key_note", "Shown once. Only its hash is stored; keep it somewhere safe."},
        {"principal_id", result.principal.id.str()},
        {"project_id", result.project.id.str()},
        {"warehouse_id", result.warehouse.id.str()},
        {"organization",
         {{"org_id", result.org.id.str()}, {"role", "admin"}, {"joined_via", "signup"}}},
        {"connection", ConnectionJson(connection)},
        {"next", Json::array({"Run the connection recipe in your engine",
                              "GET /v1/connection?engine=pyiceberg for another engine"})},
        {"terms",
         {{"version", "local"}, {"accepted", true}, {"url", ctx.accounts.urls().api + "/terms"}}},
    };
    return Response::Json(201, out.dump());
  });

  b.Open("GET", "/v1/handles/{handle}",
         [&ctx](Request&, const PathParams& params) -> Result<Response> {
           TM_ASSIGN(auto h, ctx.accounts.CheckHandleAvailable(params.at("handle")));
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
