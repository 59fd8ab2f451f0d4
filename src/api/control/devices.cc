// The CLI's device login (RFC 8628): POST /v1/auth/device, GET /v1/auth/device/pending,
// POST /v1/auth/device/approve, POST /v1/auth/device/token.
#include "accounts/devices.h"
#include "api/control/routes.h"

namespace tablemere::api::control {

void BindDevices(Binder& b, Context& ctx) {
  b.Open("POST", "/v1/auth/device", [&ctx](Request& req, const PathParams&) -> Result<Response> {
    TM_ASSIGN(Json body, Body(req));
    accounts::DeviceRequest r;
    TM_ASSIGN(r.client, StringField(body, "client"));
    TM_ASSIGN(r.hostname, StringField(body, "hostname"));
    TM_ASSIGN(r.client_name, StringField(body, "client_name"));
    TM_ASSIGN(r.requested_level, StringField(body, "requested_level"));
    if (body.contains("warehouse_ids")) {
      if (!body["warehouse_ids"].is_array()) {
        return Fail(Error{ErrorCode::kInvalidInput, "warehouse_ids must be a list", {}}
                        .With("code", "invalid_value")
                        .With("field", "warehouse_ids"));
      }
      for (const auto& w : body["warehouse_ids"]) {
        if (w.is_string()) r.warehouse_ids.push_back(w.get<std::string>());
      }
    }
    r.address = req.remote_address;
    TM_ASSIGN(auto started, ctx.devices.Start(r));
    const auto& g = started.grant;
    const std::string uri = ctx.accounts.urls().api + "/app/device";
    Json out = {{"device_code", started.device_code},
                {"user_code", g.user_code},
                {"verification_uri", uri},
                {"verification_uri_complete", uri + "?user_code=" + g.user_code},
                {"expires_in", (g.expires_ms - g.created_ms) / 1000},
                {"interval", g.interval_s},
                {"client_name", g.client_name},
                {"requested_level", metastore::Name(g.requested_level)},
                {"warehouse_ids", Json::parse(g.warehouse_ids_json)}};
    return Response::Json(200, out.dump());
  });

  b.Authed(
      "GET", "/v1/auth/device/pending",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(auto p, ctx.devices.Pending(caller, QueryMap(req)["user_code"]));
        Json warehouses = Json::array();
        for (const auto& w : p.warehouses) {
          warehouses.push_back({{"warehouse_id", w.warehouse.id.str()},
                                {"name", w.warehouse.name},
                                {"level", metastore::Name(w.level)},
                                {"my_level", metastore::Name(w.mine.level)},
                                {"my_via", w.mine.level_via},
                                {"capped", w.capped},
                                {"pending", true}});
        }
        Json out = {
            {"user_code", p.grant.user_code},
            {"client", p.grant.client},
            {"hostname", p.grant.hostname},
            {"client_name", p.grant.client_name},
            {"requested_level", metastore::Name(p.grant.requested_level)},
            {"level", metastore::Name(p.level)},
            {"organization",
             {{"org_id", p.org.id.str()}, {"name", p.org.name}, {"handle", p.org.handle}}},
            {"warehouses", warehouses},
            {"expires_in",
             std::max<int64_t>(0, (p.grant.expires_ms - ctx.accounts.clock().NowMillis()) / 1000)}};
        return Response::Json(200, out.dump());
      });

  b.Authed(
      "POST", "/v1/auth/device/approve",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(Json body, Body(req));
        accounts::DeviceApproval a;
        TM_ASSIGN(a.user_code, RequiredString(body, "user_code"));
        if (body.contains("level")) {
          TM_ASSIGN(std::string level, StringField(body, "level"));
          a.level = level;
        }
        if (body.contains("warehouse_ids") && body["warehouse_ids"].is_array()) {
          for (const auto& w : body["warehouse_ids"]) {
            if (w.is_string()) a.warehouse_ids.push_back(w.get<std::string>());
          }
        }
        TM_ASSIGN(auto deny, BoolField(body, "deny"));
        a.deny = deny.value_or(false);
        TM_ASSIGN(auto r, ctx.devices.Approve(caller, a, req.request_id));
        Json out = {{"approved", r.approved},
                    {"user_code", r.grant.user_code},
                    {"client", r.grant.client},
                    {"hostname", r.grant.hostname},
                    {"client_name", r.grant.client_name},
                    {"label", "cli " + r.grant.hostname},
                    {"requested_level", metastore::Name(r.grant.requested_level)}};
        if (r.agent) {
          Json warehouses = GrantsJson(r.agent->grants);
          std::string level = "read";
          for (const auto& [g, name] : r.agent->grants) {
            if (g.level == metastore::Level::kWrite) level = "write";
          }
          out["connection"] = {{"name", r.agent->agent.display_name},
                               {"level", level},
                               {"org_id", r.org.id.str()},
                               {"warehouses", warehouses}};
          out["note"] = "The CLI receives the agent's key at its next poll.";
        } else {
          out["note"] = "The login was refused; the CLI is told so at its next poll.";
        }
        return Response::Json(200, out.dump());
      });

  b.Open("POST", "/v1/auth/device/token",
         [&ctx](Request& req, const PathParams&) -> Result<Response> {
           TM_ASSIGN(Json body, Body(req));
           TM_ASSIGN(std::string device_code, RequiredString(body, "device_code"));
           TM_ASSIGN(auto t, ctx.devices.Poll(device_code));
           const auto& agent = t.agent.agent;
           Json out = {
               {"api_key", t.key.api_key},
               {"key_id", t.key.record.key_id},
               {"label", t.key.record.label},
               {"principal_id", agent.id.str()},
               {"kind", "agent"},
               {"token_type", "api_key"},
               {"connection",
                {{"agent_id", agent.id.str()},
                 {"name", agent.display_name},
                 {"org_id", agent.org_id.str()},
                 {"role", metastore::Name(agent.role)},
                 {"warehouses", GrantsJson(t.agent.grants)},
                 {"created_by", agent.created_by.str()},
                 {"grants", GrantsJson(t.agent.grants)}}},
               {"note",
                "The key of a new agent, shown once. Revoking the agent (tablemere agent revoke) "
                "revokes this connection."}};
           return Response::Json(200, out.dump());
         });
}

}  // namespace tablemere::api::control
