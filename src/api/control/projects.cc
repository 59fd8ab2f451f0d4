// GET/POST /v1/projects: projects are the placement boundary (fixed at creation).
#include "api/control/routes.h"

namespace tablemere::api::control {
namespace {

Json ProjectJson(const accounts::ProjectView& p) {
  return {{"project_id", p.project.id.str()}, {"name", p.project.name},
          {"provider", p.provider},           {"region", p.region},
          {"org_id", p.project.org_id.str()}, {"created_at", FormatIso8601(p.project.created_ms)}};
}

}  // namespace

void BindProjects(Binder& b, Context& ctx) {
  b.Authed("GET", "/v1/projects",
           [&ctx](Request&, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto projects, ctx.accounts.projects().Projects(caller));
             Json list = Json::array();
             for (const auto& p : projects) list.push_back(ProjectJson(p));
             return Response::Json(200, Json{{"projects", list}}.dump());
           });
  b.Authed(
      "POST", "/v1/projects",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto w, Parse<wire::CreateProject>(req));
        accounts::CreateProjectRequest r;
        r.name = w.name;
        r.provider = w.provider;
        r.region = w.region;
        r.org_id = w.org_id;
        r.idempotency_key = IdempotencyKey(req);
        r.request_hash = Fingerprint(w.ToJson());
        r.request_id = req.request_id;
        TM_ASSIGN(auto created, ctx.accounts.projects().CreateProject(caller, r));
        Json out = ProjectJson(created.project);
        out["placement_immutable"] = true;
        return Response::Json(201, out.dump());
      });
}

}  // namespace tablemere::api::control
