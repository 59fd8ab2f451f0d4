#include "api/wire/control.h"

namespace tablemere::api::wire {
namespace {

// Sets `name` only when the value is non-empty: an absent field means "the default".
void PutIf(Json& j, const char* name, const std::string& value) {
  if (!value.empty()) j[name] = value;
}

Json GrantsJson(const std::vector<AgentGrant>& grants) {
  Json list = Json::array();
  for (const auto& g : grants)
    list.push_back({{"warehouse_id", g.warehouse_id}, {"level", g.level}});
  return list;
}

// [{warehouse_id, level}, …]; `warehouse` is read as another name for warehouse_id.
Result<std::vector<AgentGrant>> GrantsOf(const Json& j) {
  std::vector<AgentGrant> grants;
  const Json& list = j.at("grants");
  if (!list.is_array()) return Fail(FieldError("invalid_value", "grants", "grants must be a list"));
  for (const auto& g : list) {
    if (!g.is_object()) {
      return Fail(FieldError("invalid_value", "grants", "each grant is {warehouse_id, level}"));
    }
    AgentGrant grant;
    TM_ASSIGN(grant.warehouse_id, StringField(g, "warehouse_id"));
    if (grant.warehouse_id.empty()) {
      TM_ASSIGN(grant.warehouse_id, StringField(g, "warehouse"));
    }
    TM_ASSIGN(grant.level, StringField(g, "level"));
    grants.push_back(std::move(grant));
  }
  return grants;
}

// The pre-contract agent bodies named warehouses, not grants: "warehouses" or
// "warehouse_ids", a list of ids, each read as a write grant (API reference). Returns the
// field's name ("" when neither is present); with "grants" too the body is ambiguous.
Result<std::string> LegacyGrantsOf(const Json& j, std::vector<AgentGrant>& grants) {
  std::string field;
  for (const char* name : {"warehouses", "warehouse_ids"}) {
    if (!j.contains(name) || j[name].is_null()) continue;
    if (!field.empty() || (j.contains("grants") && !j["grants"].is_null())) {
      return Fail(
          FieldError("invalid_value", name,
                     std::string(name) + " is the deprecated form of grants; send grants alone"));
    }
    field = name;
    if (!j[name].is_array()) {
      return Fail(FieldError("invalid_value", name, field + " must be a list of warehouse ids"));
    }
    for (const auto& id : j[name]) {
      if (!id.is_string() || id.get<std::string>().empty()) {
        return Fail(FieldError("invalid_value", name, field + " must be a list of warehouse ids"));
      }
      grants.push_back({id.get<std::string>(), "write"});
    }
  }
  return field;
}

}  // namespace

Json CreateProject::ToJson() const {
  Json j = {{"name", name}};
  PutIf(j, "provider", provider);
  PutIf(j, "region", region);
  PutIf(j, "org_id", org_id);
  return j;
}

Result<CreateProject> CreateProject::FromJson(const Json& j) {
  CreateProject r;
  TM_ASSIGN(r.name, StringField(j, "name"));
  TM_ASSIGN(r.provider, StringField(j, "provider"));
  TM_ASSIGN(r.region, StringField(j, "region"));
  TM_ASSIGN(r.org_id, StringField(j, "org_id"));
  return r;
}

Json CreateWarehouse::ToJson() const {
  Json j = {{"name", name}};
  PutIf(j, "project_id", project);
  return j;
}

Result<CreateWarehouse> CreateWarehouse::FromJson(const Json& j) {
  CreateWarehouse r;
  // The reference names the field project_id; `project` is read too.
  TM_ASSIGN(r.project, StringField(j, "project_id"));
  if (r.project.empty()) {
    TM_ASSIGN(r.project, StringField(j, "project"));
  }
  TM_ASSIGN(r.name, StringField(j, "name"));
  return r;
}

Json Confirm::ToJson() const { return {{"confirm", confirm}}; }

Result<Confirm> Confirm::FromJson(const Json& j) {
  Confirm r;
  TM_ASSIGN(r.confirm, StringField(j, "confirm"));
  return r;
}

Json Publish::ToJson() const {
  Json j = {{"confirm", confirm}};
  if (anonymous_catalog) j["anonymous_catalog"] = true;
  return j;
}

Result<Publish> Publish::FromJson(const Json& j) {
  Publish r;
  TM_ASSIGN(r.confirm, StringField(j, "confirm"));
  TM_ASSIGN(auto open, BoolField(j, "anonymous_catalog"));
  r.anonymous_catalog = open.value_or(false);
  return r;
}

Json SetGrant::ToJson() const { return {{"level", level}}; }

Result<SetGrant> SetGrant::FromJson(const Json& j) {
  SetGrant r;
  TM_ASSIGN(r.level, StringField(j, "level"));
  return r;
}

Json CreateAgent::ToJson() const {
  Json j = {{"name", name}, {"grants", GrantsJson(grants)}};
  PutIf(j, "role", role);
  return j;
}

Result<CreateAgent> CreateAgent::FromJson(const Json& j) {
  CreateAgent r;
  if (j.contains("grants") && !j["grants"].is_null()) {
    TM_ASSIGN(r.grants, GrantsOf(j));
  }
  TM_ASSIGN(r.legacy_field, LegacyGrantsOf(j, r.grants));
  TM_ASSIGN(r.name, StringField(j, "name"));
  TM_ASSIGN(r.role, StringField(j, "role"));
  return r;
}

Json UpdateAgent::ToJson() const {
  Json j = Json::object();
  if (name) j["name"] = *name;
  if (role) j["role"] = *role;
  if (grants) j["grants"] = GrantsJson(*grants);
  return j;
}

Result<UpdateAgent> UpdateAgent::FromJson(const Json& j) {
  UpdateAgent r;
  TM_ASSIGN(r.name, OptionalString(j, "name"));
  TM_ASSIGN(r.role, OptionalString(j, "role"));
  if (j.contains("grants")) {
    TM_ASSIGN(auto grants, GrantsOf(j));
    r.grants = std::move(grants);
  }
  std::vector<AgentGrant> legacy;
  TM_ASSIGN(r.legacy_field, LegacyGrantsOf(j, legacy));
  if (!r.legacy_field.empty()) r.grants = std::move(legacy);
  return r;
}

Json CreateApiKey::ToJson() const {
  Json j = Json::object();
  PutIf(j, "label", label);
  return j;
}

Result<CreateApiKey> CreateApiKey::FromJson(const Json& j) {
  CreateApiKey r;
  TM_ASSIGN(r.label, StringField(j, "label"));
  return r;
}

Json Invite::ToJson() const {
  Json j = {{"email", email}};
  PutIf(j, "role", role);
  return j;
}

Result<Invite> Invite::FromJson(const Json& j) {
  Invite r;
  TM_ASSIGN(r.email, RequiredString(j, "email"));
  TM_ASSIGN(r.role, StringField(j, "role"));
  return r;
}

Json UpdateOrg::ToJson() const {
  Json j = Json::object();
  if (name) j["name"] = *name;
  if (domain_join) j["domain_join"] = *domain_join;
  return j;
}

Result<UpdateOrg> UpdateOrg::FromJson(const Json& j) {
  UpdateOrg r;
  TM_ASSIGN(r.name, OptionalString(j, "name"));
  TM_ASSIGN(r.domain_join, BoolField(j, "domain_join"));
  return r;
}

Json SetRole::ToJson() const { return {{"role", role}}; }

Result<SetRole> SetRole::FromJson(const Json& j) {
  SetRole r;
  TM_ASSIGN(r.role, RequiredString(j, "role"));
  return r;
}

Json SignupStart::ToJson() const {
  Json j = {{"email", email}};
  PutIf(j, "workspace", workspace);
  PutIf(j, "full_name", full_name);
  PutIf(j, "organization_name", organization_name);
  PutIf(j, "handle", handle);
  return j;
}

Json SignupVerify::ToJson() const {
  Json j = {{"email", email}, {"accept_terms", accept_terms}};
  PutIf(j, "code", code);
  PutIf(j, "workspace", workspace);
  PutIf(j, "engine", engine);
  return j;
}

Json Recover::ToJson() const {
  Json j = {{"email", email}};
  PutIf(j, "code", code);
  return j;
}

Json DeviceStart::ToJson() const {
  Json j = {{"client", client}};
  PutIf(j, "hostname", hostname);
  PutIf(j, "client_name", client_name);
  PutIf(j, "requested_level", requested_level);
  if (!warehouse_ids.empty()) j["warehouse_ids"] = warehouse_ids;
  return j;
}

Json CreateTable::ToJson() const {
  Json j = {{"warehouse_id", warehouse},
            {"namespace", ns},
            {"name", name},
            {"format_version", format_version}};
  if (!schema.is_null()) j["schema"] = schema;
  return j;
}

Json TableCredentials::ToJson() const {
  return {{"warehouse_id", warehouse}, {"namespace", ns}, {"name", table}};
}

std::optional<ErrorEnvelope> ErrorEnvelope::FromJson(const Json& body) {
  if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) {
    return std::nullopt;
  }
  const Json& e = body["error"];
  ErrorEnvelope env;
  env.code = e.value("code", "");
  env.message = e.value("message", "");
  env.request_id = e.value("request_id", "");
  env.remedy = e.value("remedy", "");
  env.raw = body;
  return env;
}

}  // namespace tablemere::api::wire
