// The control API's route files share this: the binder, what every handler reaches, and
// the renderings more than one resource returns. Each resource binds its routes in its
// own file (api_keys.cc, projects.cc, warehouses.cc, …); control_api.cc wires them.
#pragma once

#include <functional>

#include "accounts/account_service.h"
#include "accounts/devices.h"
#include "accounts/sessions.h"
#include "accounts/verification.h"
#include "api/common/json_request.h"
#include "api/common/route_binder.h"
#include "api/control/control_api.h"
#include "api/wire/control.h"
#include "catalog/control_tables.h"
#include "common/crypto.h"
#include "maintenance/table_maintenance.h"

namespace tablemere::api::control {

using Binder = RouteBinder<accounts::Caller>;
using http::PathParams;
using http::Request;
using http::Response;

// Request bodies are limited to 1 MB (API reference).
inline constexpr size_t kMaxBody = 1024 * 1024;

struct Context {
  accounts::AccountService& accounts;
  catalog::ControlTables& tables;
  accounts::Verification& verification;
  accounts::DeviceFlow& devices;
  accounts::Sessions& sessions;
  maintenance::TableMaintenance& maintenance;
  ControlApiOptions options;
};

inline Result<Json> Body(Request& req) { return ParseJsonObject(req, kMaxBody); }
// The body as the typed request T of api/wire (T::FromJson), shared with the clients.
template <typename T>
Result<T> Parse(Request& req) {
  TM_ASSIGN(Json body, Body(req));
  return T::FromJson(body);
}
inline std::string IdempotencyKey(const Request& req) {
  return req.headers.Get("Idempotency-Key").value_or("");
}
// The fingerprint an Idempotency-Key is bound to: SHA-256 of the request as the typed
// body reads it, in canonical JSON (sorted keys), so spacing and key order do not count.
inline std::string Fingerprint(const Json& body) {
  return crypto::HexEncode(crypto::Sha256(body.dump()));
}
// A time as the API writes it (ISO-8601 UTC), or null for 0.
Json TimeOrNull(int64_t ms);
// Where a mailed code or link went, for the answers of the flows that mail one: with
// "log" delivery (no SMTP server), the server's own output.
std::string DeliveryNote(const std::string& delivery, const std::string& what);
// The connection recipe of GET /v1/connection (also inside signup answers).
Json ConnectionJson(const accounts::Connection& c);
// The answer of a completed signup (POST /v1/signup, /v1/signup/verify).
Result<Json> SignupJson(Context& ctx, const accounts::SignupResult& result,
                        const std::string& engine);

void BindHealth(Binder& b, Context& ctx);
void BindSignup(Binder& b, Context& ctx);
void BindConnection(Binder& b, Context& ctx);
void BindOrgs(Binder& b, Context& ctx);
void BindAgents(Binder& b, Context& ctx);
void BindAudit(Binder& b, Context& ctx);
void BindApiKeys(Binder& b, Context& ctx);
void BindProjects(Binder& b, Context& ctx);
void BindWarehouses(Binder& b, Context& ctx);
void BindGrants(Binder& b, Context& ctx);
void BindMembers(Binder& b, Context& ctx);
void BindTerms(Binder& b, Context& ctx);
void BindTables(Binder& b, Context& ctx);
void BindVerification(Binder& b, Context& ctx);
void BindInternal(Binder& b, Context& ctx);
void BindIdentity(Binder& b, Context& ctx);
void BindDevices(Binder& b, Context& ctx);
void BindAuth(Binder& b, Context& ctx);
void BindPublish(Binder& b, Context& ctx);
void BindOnboard(Binder& b, Context& ctx);
void BindUsage(Binder& b, Context& ctx);

// An agent's grants as [{warehouse_id, name, level}] (agents and device logins).
Json GrantsJson(const std::vector<std::pair<metastore::Grant, std::string>>& grants);
// An organisation as GET /v1/orgs lists it (also the answer of the routes that change one).
Json OrgJson(const accounts::OrgView& v);

// The control API's one error mapping: Error → status and {"error": {…}}.
Response ErrorResponse(const Request& req, const Error& e);

}  // namespace tablemere::api::control
