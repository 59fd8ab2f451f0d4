// The agents (tokens) of an organisation: POST/GET /v1/orgs/{org_id}/agents and
// PATCH/DELETE /v1/orgs/{org_id}/agents/{agent_id}.
#include "api/control/routes.h"

namespace tablemere::api::control {
namespace {

Json AgentJson(const accounts::AgentView& v) {
  Json legacy = Json::array();
  for (const auto& [g, wname] : v.grants) legacy.push_back(g.warehouse_id.str());
  return {{"agent_id", v.agent.id.str()},
          {"name", v.agent.display_name},
          {"org_id", v.agent.org_id.str()},
          {"role", metastore::Name(v.agent.role)},
          {"grants", GrantsJson(v.grants)},
          {"created_by", v.agent.created_by.str()},
          {"created_by_display", v.created_by_display},
          {"created_at", FormatIso8601(v.agent.created_ms)},
          {"last_used_at", TimeOrNull(v.last_used_ms)},
          {"suspended", v.agent.suspended},
          {"warehouses", legacy}};
}

// The grants list of a create or update body: [{warehouse_id, level}, …].
Result<std::vector<accounts::AgentGrantRequest>> GrantsOf(const Json& body) {
  std::vector<accounts::AgentGrantRequest> grants;
  auto invalid = [](const std::string& m) {
    return Fail(Error{ErrorCode::kInvalidInput, m, {}}
                    .With("code", "invalid_value")
                    .With("field", "grants"));
  };
  if (!body["grants"].is_array()) return invalid("grants must be a list");
  for (const auto& g : body["grants"]) {
    if (!g.is_object()) return invalid("each grant is {warehouse_id, level}");
    TM_ASSIGN(std::string warehouse, StringField(g, "warehouse_id"));
    TM_ASSIGN(std::string level, StringField(g, "level"));
    grants.push_back({warehouse, level});
  }
  return grants;
}

}  // namespace

Json GrantsJson(const std::vector<std::pair<metastore::Grant, std::string>>& grants) {
  Json gl = Json::array();
  for (const auto& [g, wname] : grants) {
    gl.push_back({{"warehouse_id", g.warehouse_id.str()},
                  {"name", wname},
                  {"level", metastore::Name(g.level)}});
  }
  return gl;
}

void BindAgents(Binder& b, Context& ctx) {
  b.Authed("POST", "/v1/orgs/{org_id}/agents",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(Json body, Body(req));
             std::vector<accounts::AgentGrantRequest> grants;
             if (body.contains("grants")) {
               TM_ASSIGN(grants, GrantsOf(body));
             }
             TM_ASSIGN(std::string name, StringField(body, "name"));
             TM_ASSIGN(std::string role, StringField(body, "role"));
             TM_ASSIGN(auto agent,
                       ctx.accounts.CreateAgent(caller, params.at("org_id"), name, role, grants));
             auto parsed = accounts::ParseApiKey(agent.api_key);
             Json out = AgentJson({agent.agent, agent.grants, caller.principal.display_name});
             out["api_key"] = agent.api_key;
             out["key_id"] = parsed ? parsed->key_id : "";
             out["note"] = "The api_key is shown once; only its hash is stored.";
             return Response::Json(201, out.dump());
           });
  b.Authed(
      "GET", "/v1/orgs/{org_id}/agents",
      [&ctx](Request&, const PathParams& params,
             const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto org, ctx.accounts.ResolveOrg(caller, params.at("org_id")));
        TM_ASSIGN(auto agents, ctx.accounts.Agents(caller, params.at("org_id")));
        Json list = Json::array();
        for (const auto& a : agents) list.push_back(AgentJson(a));
        return Response::Json(200, Json{{"org_id", org.org.id.str()}, {"agents", list}}.dump());
      });
  b.Authed("PATCH", "/v1/orgs/{org_id}/agents/{agent_id}",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(Json body, Body(req));
             accounts::AgentUpdate update;
             if (body.contains("name")) {
               TM_ASSIGN(std::string name, StringField(body, "name"));
               update.name = name;
             }
             if (body.contains("role")) {
               TM_ASSIGN(std::string role, StringField(body, "role"));
               update.role = role;
             }
             if (body.contains("grants")) {
               TM_ASSIGN(auto grants, GrantsOf(body));
               update.grants = std::move(grants);
             }
             TM_ASSIGN(auto v,
                       ctx.accounts.UpdateAgent(caller, params.at("org_id"), params.at("agent_id"),
                                                update, req.request_id));
             return Response::Json(200, AgentJson(v).dump());
           });
  b.Authed(
      "DELETE", "/v1/orgs/{org_id}/agents/{agent_id}",
      [&ctx](Request& req, const PathParams& params,
             const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto agent, ctx.accounts.RevokeAgent(caller, params.at("org_id"),
                                                       params.at("agent_id"), req.request_id));
        return Response::Json(200, Json{{"agent_id", agent.id.str()}, {"revoked", true}}.dump());
      });
}

}  // namespace tablemere::api::control
