// The 23 tools of the reference's tool table. Each validates its arguments, resolves
// names where the API wants ids (never guessing: an ambiguous name is an error listing
// the candidates), and makes its API calls now. A handler never sees or returns the key.
#include "mcp/tools.h"

#include "api/wire/control.h"
#include "client/operations.h"

namespace tablemere::mcp {
namespace {

using client::ApiClient;
using client::Call;
using client::Failure;
using client::LocalFailure;
using client::Outcome;
using client::Request;

// ------------------------------------------------------------------ schemas
Json Str(const std::string& description) {
  return {{"type", "string"}, {"description", description}};
}
Json Enum(const std::string& description, std::initializer_list<const char*> values) {
  Json v = Json::array();
  for (const char* s : values) v.push_back(s);
  return {{"type", "string"}, {"description", description}, {"enum", v}};
}
Json Object(Json properties, std::initializer_list<const char*> required = {}) {
  Json r = Json::array();
  for (const char* s : required) r.push_back(s);
  return {{"type", "object"},
          {"properties", properties.is_null() ? Json::object() : properties},
          {"required", r},
          {"additionalProperties", false}};
}

const char* kWarehouseArg = "the catalog's warehouse_id or its name";
const char* kOrgArg = "org_id or handle; omit for your only organisation";

Json GrantsSchema() {
  return {{"type", "array"},
          {"description", "grants as [{warehouse, level}]"},
          {"items", Object({{"warehouse", Str(kWarehouseArg)},
                            {"level", Enum("read or write", {"read", "write"})}},
                           {"warehouse", "level"})}};
}

// ------------------------------------------------------------------ arguments
// A string argument: "" when absent; a Failure when present with another type.
std::expected<std::string, Failure> Arg(const Json& args, const char* name, bool required) {
  auto it = args.find(name);
  if (it == args.end() || it->is_null()) {
    if (!required) return std::string();
    return std::unexpected(LocalFailure("missing_field", std::string(name) + " is required"));
  }
  if (!it->is_string() || (required && it->get<std::string>().empty())) {
    return std::unexpected(
        LocalFailure("invalid_value", std::string(name) + " must be a non-empty string"));
  }
  return it->get<std::string>();
}

#define TM_ARG(var, args, name, required)                    \
  auto var##_arg = Arg(args, name, required);                \
  if (!var##_arg) return std::unexpected(var##_arg.error()); \
  const std::string& var = *var##_arg

std::string Path(const Json& warehouse, const std::string& tail = "") {
  return "/v1/warehouses/" + ApiClient::Escape(warehouse.value("warehouse_id", "")) + tail;
}

// Grants [{warehouse, level}] with each warehouse resolved to its id.
std::expected<std::vector<api::wire::AgentGrant>, Failure> Grants(const ApiClient& api,
                                                                  const Json& list) {
  if (!list.is_array()) {
    return std::unexpected(
        LocalFailure("invalid_value", "grants must be a list of {warehouse, level}"));
  }
  std::vector<api::wire::AgentGrant> out;
  for (const auto& g : list) {
    if (!g.is_object()) {
      return std::unexpected(LocalFailure("invalid_value", "each grant is {warehouse, level}"));
    }
    TM_ARG(warehouse, g, "warehouse", true);
    TM_ARG(level, g, "level", true);
    auto w = client::ResolveWarehouse(api, warehouse);
    if (!w) return std::unexpected(w.error());
    out.push_back({(*w).value("warehouse_id", ""), level});
  }
  return out;
}

// ------------------------------------------------------------------ handlers
Outcome Whoami(const ApiClient& api, const Json&) { return client::Whoami(api); }

Outcome Usage(const ApiClient& api, const Json& args) {
  TM_ARG(warehouse, args, "warehouse", false);
  return client::UsageOf(api, warehouse, 7);
}

Outcome ListWarehouses(const ApiClient& api, const Json& args) {
  TM_ARG(project, args, "project", false);
  return client::ListCatalogs(api, project);
}

Outcome CreateWarehouse(const ApiClient& api, const Json& args) {
  TM_ARG(name, args, "name", true);
  TM_ARG(project, args, "project", false);
  TM_ARG(key, args, "idempotency_key", false);
  api::wire::CreateWarehouse body{project, name};
  return Request(api, Call{.method = "POST",
                           .path = "/v1/warehouses",
                           .body = body.ToJson(),
                           .idempotency_key = key.empty() ? client::NewIdempotencyKey() : key});
}

Outcome DeleteWarehouse(const ApiClient& api, const Json& args) {
  TM_ARG(warehouse, args, "warehouse", true);
  TM_ARG(confirm, args, "confirm", true);
  auto w = client::ResolveWarehouse(api, warehouse);
  if (!w) return w;
  // Checked here before anything is sent; the API checks again.
  if (auto refused = client::CheckConfirmation(*w, confirm)) return std::unexpected(*refused);
  return Request(
      api,
      Call{.method = "DELETE", .path = Path(*w), .body = api::wire::Confirm{confirm}.ToJson()});
}

Outcome Connection(const ApiClient& api, const Json& args) {
  TM_ARG(warehouse, args, "warehouse", true);
  TM_ARG(engine, args, "engine", false);
  auto w = client::ResolveWarehouse(api, warehouse);
  if (!w) return w;
  return Request(api, Call{.path = "/v1/connection",
                           .query = {{"warehouse_id", (*w).value("warehouse_id", "")},
                                     {"engine", engine.empty() ? "duckdb" : engine}}});
}

Outcome TableCredentials(const ApiClient& api, const Json& args) {
  TM_ARG(warehouse, args, "warehouse", true);
  TM_ARG(ns, args, "namespace", true);
  TM_ARG(table, args, "table", true);
  auto w = client::ResolveWarehouse(api, warehouse);
  if (!w) return w;
  api::wire::TableCredentials body{(*w).value("warehouse_id", ""), ns, table};
  return Request(api, Call{.method = "POST", .path = "/v1/credentials", .body = body.ToJson()});
}

Outcome GrantsList(const ApiClient& api, const Json& args) {
  TM_ARG(warehouse, args, "warehouse", true);
  auto w = client::ResolveWarehouse(api, warehouse);
  if (!w) return w;
  auto grants = Request(api, Call{.path = Path(*w, "/grants")});
  if (!grants) return grants;
  return Json{{"warehouse_id", (*w)["warehouse_id"]}, {"name", (*w)["name"]}, {"grants", *grants}};
}

Outcome GrantsSet(const ApiClient& api, const Json& args) {
  TM_ARG(warehouse, args, "warehouse", true);
  TM_ARG(principal, args, "principal", true);
  TM_ARG(level, args, "level", true);
  auto w = client::ResolveWarehouse(api, warehouse);
  if (!w) return w;
  return Request(api, Call{.method = "PUT",
                           .path = Path(*w, "/grants/" + ApiClient::Escape(principal)),
                           .body = api::wire::SetGrant{level}.ToJson()});
}

Outcome GrantsRevoke(const ApiClient& api, const Json& args) {
  TM_ARG(warehouse, args, "warehouse", true);
  TM_ARG(principal, args, "principal", true);
  auto w = client::ResolveWarehouse(api, warehouse);
  if (!w) return w;
  return Request(
      api, Call{.method = "DELETE", .path = Path(*w, "/grants/" + ApiClient::Escape(principal))});
}

// Runs `fn` with the organisation's route prefix.
Outcome InOrg(const ApiClient& api, const Json& args,
              const std::function<Outcome(const std::string&)>& fn) {
  TM_ARG(org, args, "org", false);
  auto path = client::OrgPath(api, org);
  if (!path) return std::unexpected(path.error());
  return fn(*path);
}

Outcome TokensList(const ApiClient& api, const Json& args) {
  return InOrg(api, args,
               [&](const std::string& org) { return Request(api, Call{.path = org + "/agents"}); });
}

Outcome TokensCreate(const ApiClient& api, const Json& args) {
  TM_ARG(name, args, "name", true);
  TM_ARG(role, args, "role", false);
  if (!args.contains("grants") || !args["grants"].is_array() || args["grants"].empty()) {
    return std::unexpected(LocalFailure("missing_field",
                                        "grants needs at least one {warehouse, level}",
                                        "A token holds exactly the grants given"));
  }
  auto grants = Grants(api, args["grants"]);
  if (!grants) return std::unexpected(grants.error());
  api::wire::CreateAgent body{name, role, *grants};
  return InOrg(api, args, [&](const std::string& org) {
    return Request(api, Call{.method = "POST", .path = org + "/agents", .body = body.ToJson()});
  });
}

Outcome TokensUpdate(const ApiClient& api, const Json& args) {
  TM_ARG(token, args, "token", true);
  TM_ARG(name, args, "name", false);
  TM_ARG(role, args, "role", false);
  api::wire::UpdateAgent body;
  if (!name.empty()) body.name = name;
  if (!role.empty()) body.role = role;
  if (args.contains("grants") && !args["grants"].is_null()) {
    auto grants = Grants(api, args["grants"]);
    if (!grants) return std::unexpected(grants.error());
    body.grants = *grants;
  }
  return InOrg(api, args, [&](const std::string& org) {
    return Request(api, Call{.method = "PATCH",
                             .path = org + "/agents/" + ApiClient::Escape(token),
                             .body = body.ToJson()});
  });
}

Outcome TokensRevoke(const ApiClient& api, const Json& args) {
  TM_ARG(token, args, "token", true);
  return InOrg(api, args, [&](const std::string& org) {
    return Request(api,
                   Call{.method = "DELETE", .path = org + "/agents/" + ApiClient::Escape(token)});
  });
}

Outcome MembersList(const ApiClient& api, const Json& args) {
  return InOrg(api, args, [&](const std::string& org) {
    return Request(api, Call{.path = org + "/members"});
  });
}

Outcome MembersInvite(const ApiClient& api, const Json& args) {
  TM_ARG(email, args, "email", true);
  TM_ARG(role, args, "role", false);
  return InOrg(api, args, [&](const std::string& org) {
    return Request(api, Call{.method = "POST",
                             .path = org + "/invitations",
                             .body = api::wire::Invite{email, role}.ToJson()});
  });
}

Outcome MembersSetRole(const ApiClient& api, const Json& args) {
  TM_ARG(principal, args, "principal", true);
  TM_ARG(role, args, "role", true);
  return InOrg(api, args, [&](const std::string& org) {
    return Request(api, Call{.method = "PATCH",
                             .path = org + "/members/" + ApiClient::Escape(principal),
                             .body = api::wire::SetRole{role}.ToJson()});
  });
}

Outcome MembersRemove(const ApiClient& api, const Json& args) {
  TM_ARG(principal, args, "principal", true);
  return InOrg(api, args, [&](const std::string& org) {
    return Request(
        api, Call{.method = "DELETE", .path = org + "/members/" + ApiClient::Escape(principal)});
  });
}

Outcome OrgGet(const ApiClient& api, const Json& args) {
  TM_ARG(org, args, "org", false);
  auto orgs = Request(api, Call{.path = "/v1/orgs"});
  if (!orgs || org.empty()) return orgs;
  for (const auto& o : (*orgs)["organizations"]) {
    if (o.value("org_id", "") == org || o.value("handle", "") == org) return o;
  }
  return std::unexpected(LocalFailure("org_not_found",
                                      "You are not a member of an organisation '" + org + "'",
                                      "org_get without org lists yours"));
}

Outcome OrgRename(const ApiClient& api, const Json& args) {
  TM_ARG(name, args, "name", true);
  api::wire::UpdateOrg body;
  body.name = name;
  return InOrg(api, args, [&](const std::string& org) {
    return Request(api, Call{.method = "PATCH", .path = org, .body = body.ToJson()});
  });
}

Outcome Audit(const ApiClient& api, const Json& args) {
  TM_ARG(org, args, "org", false);
  TM_ARG(since, args, "since", false);
  TM_ARG(action, args, "action", false);
  Call call{.path = "/v1/audit"};
  if (!org.empty()) {
    auto resolved = client::ResolveOrg(api, org);
    if (!resolved) return resolved;
    call.query.emplace_back("org_id", (*resolved).value("org_id", ""));
  }
  if (!since.empty()) call.query.emplace_back("since", since);
  if (!action.empty()) call.query.emplace_back("action", action);
  if (args.contains("limit") && !args["limit"].is_null()) {
    if (!args["limit"].is_number_integer()) {
      return std::unexpected(LocalFailure("invalid_value", "limit must be an integer"));
    }
    call.query.emplace_back("limit", std::to_string(args["limit"].get<int64_t>()));
  }
  return Request(api, call);
}

Outcome TermsStatus(const ApiClient& api, const Json&) {
  return Request(api, Call{.path = "/v1/terms"});
}

Outcome TermsAccept(const ApiClient& api, const Json&) {
  auto terms = Request(api, Call{.path = "/v1/terms"});
  if (!terms) return terms;
  return Request(api, Call{.method = "POST",
                           .path = "/v1/terms/accept",
                           .body = Json{{"version", (*terms).value("current_version", "")}}});
}

std::vector<Tool> Build() {
  const Json wh = Str(kWarehouseArg);
  const Json org = Str(kOrgArg);
  return {
      {"whoami",
       "Who the key belongs to: principal id, organisations and role in each, projects, "
       "catalogs with your level, limits, Terms status.",
       Object({}), true, false, Whoami},
      {"usage",
       "Every limit with its current value and headroom; storage bytes per organisation "
       "and catalog. With warehouse: that catalog's storage and traffic by day.",
       Object({{"warehouse", wh}}), true, false, Usage},
      {"list_warehouses",
       "The catalogs the key can see, grouped by project, with locations, "
       "catalog URI and your level on each.",
       Object({{"project", Str("project_id or project name; omit for every project")}}), true,
       false, ListWarehouses},
      {"create_warehouse",
       "Create a catalog (an Iceberg REST catalog with its own storage), in "
       "the organisation's default project unless one is named.",
       Object({{"name", Str("the new catalog's name")},
               {"project", Str("project_id or project name")},
               {"idempotency_key", Str("any string; a retry with the same key returns the same "
                                       "catalog (one is generated if omitted)")}},
              {"name"}),
       false, false, CreateWarehouse},
      {"delete_warehouse",
       "IRREVERSIBLE: delete a catalog with every table, both buckets, both "
       "identities, grants and usage. confirm must be the catalog's exact "
       "name, typed by the person. Admins only.",
       Object({{"warehouse", wh}, {"confirm", Str("the catalog's exact name")}},
              {"warehouse", "confirm"}),
       false, true, DeleteWarehouse},
      {"connection",
       "The paste-ready recipe (DuckDB SQL, PyIceberg, Spark conf) to connect your "
       "own engine to a catalog, with the identity matching your level.",
       Object({{"warehouse", wh},
               {"engine", Enum("the engine (default duckdb)",
                               {"duckdb", "pyiceberg", "spark", "snowflake"})}},
              {"warehouse"}),
       true, false, Connection},
      {"table_credentials", "Short-lived S3 credentials scoped to one table's prefix.",
       Object({{"warehouse", wh},
               {"namespace", Str("the table's namespace (dotted for nested)")},
               {"table", Str("the table's name")}},
              {"warehouse", "namespace", "table"}),
       true, false, TableCredentials},
      {"grants_list",
       "Who holds read or write on a catalog, and via what (membership, creator, "
       "admin, grant).",
       Object({{"warehouse", wh}}, {"warehouse"}), true, false, GrantsList},
      {"grants_set", "Give a member or a token read or write on a catalog.",
       Object({{"warehouse", wh},
               {"principal", Str("principal_id of the member or token")},
               {"level", Enum("the level", {"read", "write"})}},
              {"warehouse", "principal", "level"}),
       false, false, GrantsSet},
      {"grants_revoke", "Remove a grant on a catalog.",
       Object({{"warehouse", wh}, {"principal", Str("principal_id of the member or token")}},
              {"warehouse", "principal"}),
       false, true, GrantsRevoke},
      {"tokens_list", "The organisation's tokens (agents): id, name, grants, creator, last use.",
       Object({{"org", org}}), true, false, TokensList},
      {"tokens_create",
       "Create a token (agent) holding exactly the grants given; its key is "
       "returned once: store it where it belongs, not in the chat.",
       Object({{"name", Str("the token's name")},
               {"grants", GrantsSchema()},
               {"role", Enum("organisation role (default member)", {"admin", "member"})},
               {"org", org}},
              {"name", "grants"}),
       false, false, TokensCreate},
      {"tokens_update", "Rename a token, replace its grants and/or change its role.",
       Object({{"token", Str("the token's agent_id")},
               {"name", Str("new name")},
               {"grants", GrantsSchema()},
               {"role", Enum("new organisation role", {"admin", "member"})},
               {"org", org}},
              {"token"}),
       false, false, TokensUpdate},
      {"tokens_revoke", "Revoke a token: every key of it stops at once.",
       Object({{"token", Str("the token's agent_id")}, {"org", org}}, {"token"}), false, true,
       TokensRevoke},
      {"members_list", "The organisation's members with role and join date.",
       Object({{"org", org}}), true, false, MembersList},
      {"members_invite",
       "Invite an address as admin or member; the invitation token is returned "
       "once.",
       Object({{"email", Str("the address to invite")},
               {"role", Enum("role (default member)", {"member", "admin"})},
               {"org", org}},
              {"email"}),
       false, false, MembersInvite},
      {"members_set_role", "Make a member admin or member; the last admin cannot be demoted.",
       Object({{"principal", Str("the member's principal_id")},
               {"role", Enum("the new role", {"admin", "member"})},
               {"org", org}},
              {"principal", "role"}),
       false, false, MembersSetRole},
      {"members_remove", "Remove a member from the organisation.",
       Object({{"principal", Str("the member's principal_id")}, {"org", org}}, {"principal"}),
       false, true, MembersRemove},
      {"org_get", "Your organisation(s): name, handle, your role, domains, member count.",
       Object({{"org", Str("org_id or handle; omit for all of yours")}}), true, false, OrgGet},
      {"org_rename", "Rename the organisation (admins).",
       Object({{"name", Str("the new name")}, {"org", org}}, {"name"}), false, false, OrgRename},
      {"audit", "Who did what: your own events, or the organisation's (admins) with org.",
       Object({{"org", Str("org_id or handle: the organisation's events")},
               {"since", Str("24h, 7d, 30m, or an ISO-8601 timestamp")},
               {"action", Str("one action, e.g. credentials.vend, or a prefix like org.*")},
               {"limit", {{"type", "integer"}, {"description", "at most this many (max 1000)"}}}}),
       true, false, Audit},
      {"terms_status", "The Terms of Service version in force and whether you accepted it.",
       Object({}), true, false, TermsStatus},
      {"terms_accept", "Record acceptance of the Terms in force, after the person has read them.",
       Object({}), false, false, TermsAccept},
  };
}

}  // namespace

const std::vector<Tool>& Tools() {
  static const std::vector<Tool> tools = Build();
  return tools;
}

}  // namespace tablemere::mcp
