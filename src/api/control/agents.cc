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

// The note answering a body that used the pre-contract warehouse list.
std::string Deprecation(const std::string& field) {
  return "'" + field +
         "' is deprecated and was read as write grants on those warehouses; send "
         "grants: [{warehouse_id, level: read|write}] instead (tablemere agent create "
         "--grant CATALOG:LEVEL).";
}

std::vector<accounts::AgentGrantRequest> GrantRequests(const std::vector<wire::AgentGrant>& in) {
  std::vector<accounts::AgentGrantRequest> out;
  for (const auto& g : in) out.push_back({g.warehouse_id, g.level});
  return out;
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
             TM_ASSIGN(auto r, Parse<wire::CreateAgent>(req));
             TM_ASSIGN(auto agent,
                       ctx.accounts.agents().CreateAgent(caller, params.at("org_id"), r.name,
                                                         r.role, GrantRequests(r.grants)));
             auto parsed = accounts::ParseApiKey(agent.api_key);
             Json out = AgentJson({agent.agent, agent.grants, caller.principal.display_name});
             out["api_key"] = agent.api_key;
             out["key_id"] = parsed ? parsed->key_id : "";
             out["note"] = "The api_key is shown once; only its hash is stored.";
             if (!r.legacy_field.empty()) out["deprecation"] = Deprecation(r.legacy_field);
             return Response::Json(201, out.dump());
           });
  b.Authed(
      "GET", "/v1/orgs/{org_id}/agents",
      [&ctx](Request&, const PathParams& params,
             const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto org, ctx.accounts.access().ResolveOrg(caller, params.at("org_id")));
        TM_ASSIGN(auto agents, ctx.accounts.agents().Agents(caller, params.at("org_id")));
        Json list = Json::array();
        for (const auto& a : agents) list.push_back(AgentJson(a));
        return Response::Json(200, Json{{"org_id", org.org.id.str()}, {"agents", list}}.dump());
      });
  b.Authed("PATCH", "/v1/orgs/{org_id}/agents/{agent_id}",
           [&ctx](Request& req, const PathParams& params,
                  const accounts::Caller& caller) -> Result<Response> {
             TM_ASSIGN(auto r, Parse<wire::UpdateAgent>(req));
             accounts::AgentUpdate update;
             update.name = r.name;
             update.role = r.role;
             if (r.grants) update.grants = GrantRequests(*r.grants);
             TM_ASSIGN(auto v, ctx.accounts.agents().UpdateAgent(caller, params.at("org_id"),
                                                                 params.at("agent_id"), update,
                                                                 req.request_id));
             Json out = AgentJson(v);
             if (!r.legacy_field.empty()) out["deprecation"] = Deprecation(r.legacy_field);
             return Response::Json(200, out.dump());
           });
  b.Authed(
      "DELETE", "/v1/orgs/{org_id}/agents/{agent_id}",
      [&ctx](Request& req, const PathParams& params,
             const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto agent,
                  ctx.accounts.agents().RevokeAgent(caller, params.at("org_id"),
                                                    params.at("agent_id"), req.request_id));
        return Response::Json(200, Json{{"agent_id", agent.id.str()}, {"revoked", true}}.dump());
      });
}

}  // namespace tablemere::api::control
