// Agents (tokens) of an organisation: create, list, update, revoke (agents.cc). An agent
// is a principal with its own API key, an organisation role and exactly the grants given
// to it; a member creating or editing one is capped by its own grants and role.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accounts/access_service.h"
#include "accounts/api_key_service.h"
#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

struct AgentGrantRequest {
  std::string warehouse;  // id or name
  std::string level;
};

struct AgentView {
  metastore::Principal agent;
  std::vector<std::pair<metastore::Grant, std::string>> grants;  // with warehouse name
  std::string created_by_display;
  int64_t last_used_ms = 0;  // the newest use of any of its keys
};

// PATCH of an agent: absent fields stay; `grants` replaces the list.
struct AgentUpdate {
  std::optional<std::string> name;
  std::optional<std::string> role;
  std::optional<std::vector<AgentGrantRequest>> grants;
};

// An agent the caller may edit, and the caller's standing in its organisation.
struct MyAgent {
  MyOrg mine;
  metastore::Principal agent;
};

struct AgentResult {
  metastore::Principal agent;
  std::vector<std::pair<metastore::Grant, std::string>> grants;  // with warehouse name
  std::string api_key;
};

// Every call names the organisation (kNotFound org_not_found when not the caller's).
class AgentService {
 public:
  AgentService(metastore::Metastore& meta, const Clock& clock, Random& random, AuditRecorder& audit,
               AccessService& access, ApiKeyService& api_keys)
      : meta_(meta),
        clock_(clock),
        random_(random),
        audit_(audit),
        access_(access),
        api_keys_(api_keys) {}

  // Runs inside the transaction that creates an agent (the device approval it comes from).
  using AlsoInCreate = std::function<Result<void>(metastore::Stores&, const AgentResult&)>;
  // `with_key` false: the agent gets its key later (a device login's first poll). `also`
  // fails the whole creation when it fails.
  Result<AgentResult> CreateAgent(const Caller& caller, const std::string& org_id,
                                  const std::string& name, const std::string& role,
                                  const std::vector<AgentGrantRequest>& grants,
                                  bool with_key = true, const AlsoInCreate& also = {});
  Result<std::vector<AgentView>> Agents(const Caller& caller, const std::string& org);
  // Errors: kInvalidInput (missing_field), kPermissionDenied (forbidden, insufficient_role),
  // kNotFound (agent_not_found), kAlreadyExists (already_exists).
  Result<AgentView> UpdateAgent(const Caller& caller, const std::string& org,
                                const std::string& agent_id, const AgentUpdate& update,
                                const std::string& request_id);
  // Every key of the agent revoked and the agent suspended. Errors: kNotFound.
  Result<metastore::Principal> RevokeAgent(const Caller& caller, const std::string& org,
                                           const std::string& agent_id,
                                           const std::string& request_id);

 private:
  Result<AgentView> ViewOfAgent(const metastore::Principal& agent);
  Result<MyAgent> EditableAgent(const Caller& caller, const std::string& org,
                                const std::string& agent_id);
  // Grants an agent is given, each checked against the caller's own level.
  Result<std::vector<std::pair<metastore::Grant, std::string>>> CheckedGrants(
      const Caller& caller, const MyOrg& mine, const PrincipalId& agent_id,
      const std::vector<AgentGrantRequest>& grants);

  metastore::Metastore& meta_;
  const Clock& clock_;
  Random& random_;
  AuditRecorder& audit_;
  AccessService& access_;
  ApiKeyService& api_keys_;
};

}  // namespace tablemere::accounts
