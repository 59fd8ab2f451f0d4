// The control API's request bodies as typed structs, shared by the server (which parses
// them with FromJson) and by its clients, the CLI and the MCP server (which build them
// and send ToJson). One struct per request body of tablemere-api.md that a client sends;
// field names are the wire names. Responses are read by clients through `Answer` and the
// typed views below, so a renamed field breaks the build, not a user.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/wire/fields.h"

namespace tablemere::api::wire {

// POST /v1/projects
struct CreateProject {
  std::string name, provider, region, org_id;
  Json ToJson() const;
  static Result<CreateProject> FromJson(const Json& j);
};

// POST /v1/warehouses. `project` is a project id or name ("" = the default project).
struct CreateWarehouse {
  std::string project, name;
  Json ToJson() const;
  static Result<CreateWarehouse> FromJson(const Json& j);
};

// DELETE /v1/warehouses/{id}, POST /v1/warehouses/{id}/public, DELETE /v1/me: the name
// (or address) typed out.
struct Confirm {
  std::string confirm;
  Json ToJson() const;
  static Result<Confirm> FromJson(const Json& j);
};

// POST /v1/warehouses/{id}/public: storage-level publishing; anonymous_catalog also opens
// the REST catalog to anonymous list and load (our addition, off unless asked for).
struct Publish {
  std::string confirm;
  bool anonymous_catalog = false;
  Json ToJson() const;
  static Result<Publish> FromJson(const Json& j);
};

// PUT /v1/warehouses/{id}/grants/{principal}
struct SetGrant {
  std::string level;
  Json ToJson() const;
  static Result<SetGrant> FromJson(const Json& j);
};

// One grant of an agent: a warehouse id or name and read|write.
struct AgentGrant {
  std::string warehouse_id, level;
};

// POST /v1/orgs/{org}/agents
struct CreateAgent {
  std::string name, role;
  std::vector<AgentGrant> grants;
  // Set when the body used the deprecated "warehouses"/"warehouse_ids" list (read into
  // grants as write grants): the field's name, for the answer's deprecation note.
  std::string legacy_field;
  Json ToJson() const;
  static Result<CreateAgent> FromJson(const Json& j);
};

// PATCH /v1/orgs/{org}/agents/{id}: absent fields stay as they are; grants replace.
struct UpdateAgent {
  std::optional<std::string> name, role;
  std::optional<std::vector<AgentGrant>> grants;
  std::string legacy_field;  // as CreateAgent's
  Json ToJson() const;
  static Result<UpdateAgent> FromJson(const Json& j);
};

// POST /v1/api-keys
struct CreateApiKey {
  std::string label;
  Json ToJson() const;
  static Result<CreateApiKey> FromJson(const Json& j);
};

// POST /v1/orgs/{org}/invitations
struct Invite {
  std::string email, role;
  Json ToJson() const;
  static Result<Invite> FromJson(const Json& j);
};

// PATCH /v1/orgs/{org}
struct UpdateOrg {
  std::optional<std::string> name;
  std::optional<bool> domain_join;
  Json ToJson() const;
  static Result<UpdateOrg> FromJson(const Json& j);
};

// PATCH /v1/orgs/{org}/members/{id}
struct SetRole {
  std::string role;
  Json ToJson() const;
  static Result<SetRole> FromJson(const Json& j);
};

// POST /v1/signup/start (the signup form's fields are optional)
struct SignupStart {
  std::string email, workspace, full_name, organization_name, handle;
  Json ToJson() const;
};

// POST /v1/signup/verify and the one-call POST /v1/signup (no code)
struct SignupVerify {
  std::string email, code, workspace, engine;
  bool accept_terms = false;
  Json ToJson() const;
};

// POST /v1/recover/start (code empty) and /v1/recover/verify
struct Recover {
  std::string email, code;
  Json ToJson() const;
};

// POST /v1/auth/device
struct DeviceStart {
  std::string client = "cli", hostname, client_name, requested_level;
  std::vector<std::string> warehouse_ids;
  Json ToJson() const;
};

// POST /v1/tables: a table in a warehouse's namespace, with an Iceberg schema.
struct CreateTable {
  std::string warehouse, ns, name;
  Json schema;
  int format_version = 2;
  Json ToJson() const;
};

// POST /v1/credentials
struct TableCredentials {
  std::string warehouse, ns, table;
  Json ToJson() const;
};

// The error envelope every control-plane failure carries: {"error": {code, message, …}}.
struct ErrorEnvelope {
  std::string code, message, request_id, remedy;
  Json raw;  // the whole body, as the server sent it
  // nullopt when `body` is not an error envelope.
  static std::optional<ErrorEnvelope> FromJson(const Json& body);
};

}  // namespace tablemere::api::wire
