// POST /v1/orgs/{org_id}/agents: a machine identity of the organisation with its own key.
#include "api/control/routes.h"

namespace tablemere::api::control {

void BindAgents(Binder& b, Context& ctx) {
  b.Authed(
      "POST", "/v1/orgs/{org_id}/agents",
      [&ctx](Request& req, const PathParams& params,
             const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(Json body, Body(req));
        std::vector<accounts::AgentGrantRequest> grants;
        if (body.contains("grants")) {
          if (!body["grants"].is_array()) {
            return Fail(Error{ErrorCode::kInvalidInput, "grants must be a list", {}}
                            .With("code", "invalid_value")
                            .With("field", "grants"));
          }
          for (const auto& g : body["grants"]) {
            if (!g.is_object()) {
              return Fail(Error{ErrorCode::kInvalidInput, "each grant is {warehouse_id, level}", {}}
                              .With("code", "invalid_value")
                              .With("field", "grants"));
            }
            TM_ASSIGN(std::string warehouse, StringField(g, "warehouse_id"));
            TM_ASSIGN(std::string level, StringField(g, "level"));
            grants.push_back({warehouse, level});
          }
        }
        TM_ASSIGN(std::string name, StringField(body, "name"));
        TM_ASSIGN(std::string role, StringField(body, "role"));
        TM_ASSIGN(auto agent,
                  ctx.accounts.CreateAgent(caller, params.at("org_id"), name, role, grants));
        Json gl = Json::array();
        for (const auto& [g, wname] : agent.grants) {
          gl.push_back({{"warehouse_id", g.warehouse_id.str()},
                        {"name", wname},
                        {"level", metastore::Name(g.level)}});
        }
        auto parsed = accounts::ParseApiKey(agent.api_key);
        Json out = {{"agent_id", agent.agent.id.str()},
                    {"name", agent.agent.display_name},
                    {"org_id", agent.agent.org_id.str()},
                    {"role", metastore::Name(agent.agent.role)},
                    {"grants", gl},
                    {"created_by", agent.agent.created_by.str()},
                    {"created_by_display", caller.principal.display_name},
                    {"created_at", FormatIso8601(agent.agent.created_ms)},
                    {"last_used_at", nullptr},
                    {"suspended", false},
                    {"api_key", agent.api_key},
                    {"key_id", parsed ? parsed->key_id : ""},
                    {"note", "The api_key is shown once; only its hash is stored."}};
        return Response::Json(201, out.dump());
      });
}

}  // namespace tablemere::api::control
