// AgentService: agents (tokens) of an organisation.
#include <nlohmann/json.hpp>

#include "accounts/agent_service.h"

#include "accounts/errors.h"
#include "common/crypto.h"

namespace tablemere::accounts {
namespace {

using metastore::Level;
using metastore::PrincipalKind;
using metastore::Role;

// An agent's name is read in lists and typed on command lines.
constexpr size_t kMaxAgentName = 100;

Error AgentNotFound(const std::string& id) {
  return Coded(ErrorCode::kNotFound, "agent_not_found", "No agent " + id + " in this organisation")
      .With("remedy", "tablemere agent list shows the organisation's agents.");
}

Result<Role> AgentRole(const std::string& role) {
  // Agents take the two roles by name (the "owner" alias is for member-role changes).
  if (role.empty() || role == "member") return Role::kMember;
  if (role == "admin") return Role::kAdmin;
  return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "role must be admin or member")
                  .With("field", "role"));
}

Result<std::string> AgentName(const std::string& name) {
  if (name.empty() || name.size() > kMaxAgentName) {
    return Fail(
        Coded(ErrorCode::kInvalidInput, "invalid_value", "name is required (1-100 characters)")
            .With("field", "name"));
  }
  return name;
}

}  // namespace

Result<std::vector<std::pair<metastore::Grant, std::string>>> AgentService::CheckedGrants(
    const Caller& caller, const MyOrg& mine, const PrincipalId& agent_id,
    const std::vector<AgentGrantRequest>& grants) {
  const bool admin = mine.role == Role::kAdmin;
  int64_t now = clock_.NowMillis();
  std::vector<std::pair<metastore::Grant, std::string>> out;
  for (const auto& g : grants) {
    auto level = metastore::ParseLevel(g.level);
    if (!level || *level == Level::kNone) {
      return Fail(
          Coded(ErrorCode::kInvalidInput, "invalid_value", "grant level must be read or write")
              .With("field", "grants"));
    }
    auto access = access_.Access(caller, g.warehouse, /*include_unheld=*/admin);
    if (!access || access->warehouse.org_id != mine.org.id) {
      return Fail(Coded(ErrorCode::kNotFound, "warehouse_not_found",
                        "Warehouse " + g.warehouse + " is not in this organisation.")
                      .With("remedy", "tablemere catalog list shows the organisation's catalogs."));
    }
    if (!admin && !metastore::AtLeast(access->level, *level)) {
      return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                        "You cannot grant a level above your own.")
                      .With("your_level", metastore::Name(access->level))
                      .With("requested", metastore::Name(*level)));
    }
    out.emplace_back(
        metastore::Grant{access->warehouse.id, agent_id, *level, caller.principal.id, now},
        access->warehouse.name);
  }
  return out;
}

Result<AgentResult> AgentService::CreateAgent(const Caller& caller, const std::string& org_id,
                                              const std::string& name_text,
                                              const std::string& role_text,
                                              const std::vector<AgentGrantRequest>& grants,
                                              bool with_key, const AlsoInCreate& also) {
  // ---- validate and authorise
  TM_ASSIGN(std::string name, AgentName(name_text));
  TM_ASSIGN(Role agent_role, AgentRole(role_text));
  TM_ASSIGN(auto mine, access_.ResolveOrg(caller, org_id));
  if (mine.role != Role::kAdmin && agent_role == Role::kAdmin) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "insufficient_role",
                      "Only an admin can create an admin token."));
  }
  AgentResult result;
  int64_t now = clock_.NowMillis();
  result.agent = metastore::Principal{.id = PrincipalId("a_" + crypto::HexEncode(random_.Bytes(8))),
                                      .kind = PrincipalKind::kAgent,
                                      .display_name = name,
                                      .org_id = mine.org.id,
                                      .role = agent_role,
                                      .created_by = caller.principal.id,
                                      .created_ms = now};
  TM_ASSIGN(result.grants, CheckedGrants(caller, mine, result.agent.id, grants));
  // ---- apply: the agent, its key, membership, grants and the audit event together
  metastore::ApiKey key;
  if (with_key) {
    IssuedApiKey issued = api_keys_.Mint(result.agent.id);
    result.api_key = std::move(issued.api_key);
    key = std::move(issued.record);
  }
  auto stored =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        TM_TRY(txn.principals().CreatePrincipal(result.agent));
        if (with_key) TM_TRY(txn.principals().CreateApiKey(key));
        TM_TRY(txn.orgs().PutMember({mine.org.id, result.agent.id, agent_role, now, "agent"}));
        for (const auto& [g, wname] : result.grants) TM_TRY(txn.warehouses().PutGrant(g));
        if (also) TM_TRY(also(txn, result));
        return audit_.RecordIn(
            txn, metastore::AuditEvent{0, now, caller.principal.id, mine.org.id, "agent.create",
                                       "agent", result.agent.id, "", "{}"});
      });
  if (!stored) {
    if (stored.error().code == ErrorCode::kAlreadyExists) {
      return Fail(Coded(ErrorCode::kAlreadyExists, "already_exists",
                        "An agent named '" + name + "' exists in this organisation."));
    }
    return Fail(stored.error());
  }
  return result;
}

Result<AgentView> AgentService::ViewOfAgent(const metastore::Principal& agent) {
  AgentView v{agent, {}, ""};
  TM_ASSIGN(auto grants, meta_.warehouses().GrantsOf(agent.id));
  for (const auto& g : grants) {
    if (g.level == Level::kNone) continue;
    TM_ASSIGN(auto w, meta_.warehouses().FindWarehouse(g.warehouse_id));
    v.grants.emplace_back(g, w.name);
  }
  auto creator = meta_.principals().FindPrincipal(agent.created_by);
  if (creator) v.created_by_display = creator->display_name;
  TM_ASSIGN(auto keys, meta_.principals().ApiKeysOf(agent.id));
  for (const auto& k : keys) v.last_used_ms = std::max(v.last_used_ms, k.last_used_ms);
  return v;
}

Result<std::vector<AgentView>> AgentService::Agents(const Caller& caller, const std::string& org) {
  TM_ASSIGN(auto mine, access_.ResolveOrg(caller, org));
  TM_ASSIGN(auto agents, meta_.principals().AgentsOf(mine.org.id));
  std::vector<AgentView> out;
  for (const auto& a : agents) {
    TM_ASSIGN(auto v, ViewOfAgent(a));
    out.push_back(std::move(v));
  }
  return out;
}

Result<MyAgent> AgentService::EditableAgent(const Caller& caller, const std::string& org,
                                            const std::string& agent_id) {
  TM_ASSIGN(auto mine, access_.ResolveOrg(caller, org));
  auto agent = meta_.principals().FindPrincipal(PrincipalId(agent_id));
  if (!agent || agent->kind != PrincipalKind::kAgent || agent->org_id != mine.org.id) {
    return Fail(AgentNotFound(agent_id));
  }
  // An admin, or the member who created it; a token never edits itself unless an admin.
  const bool admin = mine.role == Role::kAdmin;
  if (!admin && agent->created_by != caller.principal.id) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                      "Only an admin or the member who created this agent changes it"));
  }
  return MyAgent{std::move(mine), std::move(*agent)};
}

Result<AgentView> AgentService::UpdateAgent(const Caller& caller, const std::string& org,
                                            const std::string& agent_id, const AgentUpdate& update,
                                            const std::string& request_id) {
  if (!update.name && !update.role && !update.grants) {
    return Fail(Coded(ErrorCode::kInvalidInput, "missing_field",
                      "Send at least one of name, role, grants"));
  }
  TM_ASSIGN(auto target, EditableAgent(caller, org, agent_id));
  metastore::Principal next = target.agent;
  const Role previous_role = next.role;
  if (update.name) {
    TM_ASSIGN(next.display_name, AgentName(*update.name));
  }
  if (update.role) {
    TM_ASSIGN(next.role, AgentRole(*update.role));
    if (next.role == Role::kAdmin && target.mine.role != Role::kAdmin) {
      return Fail(Coded(ErrorCode::kPermissionDenied, "insufficient_role",
                        "Only an admin can make an admin token."));
    }
  }
  std::optional<std::vector<std::pair<metastore::Grant, std::string>>> grants;
  if (update.grants) {
    TM_ASSIGN(grants, CheckedGrants(caller, target.mine, next.id, *update.grants));
  }
  auto stored =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        // The change applies to the row as it is now: a suspension or revocation made
        // meanwhile (on any replica) stays.
        auto current = txn.principals().FindPrincipal(next.id);
        if (!current) {
          if (current.error().code == ErrorCode::kNotFound) return Fail(AgentNotFound(agent_id));
          return Fail(current.error());
        }
        // Only the fields asked for change: a role set meanwhile (PATCH of its membership)
        // stands when this update only renames.
        if (update.name) current->display_name = next.display_name;
        if (update.role) current->role = next.role;
        next = *current;
        TM_TRY(txn.principals().UpdatePrincipal(next));
        if (update.role) {
          TM_TRY(txn.orgs().PutMember({target.mine.org.id, next.id, next.role, 0, "agent"}));
        }
        if (grants) {
          // The list replaces the agent's grants.
          TM_ASSIGN(auto current, txn.warehouses().GrantsOf(next.id));
          for (const auto& g : current)
            TM_TRY(txn.warehouses().DeleteGrant(g.warehouse_id, next.id));
          for (const auto& [g, wname] : *grants) TM_TRY(txn.warehouses().PutGrant(g));
        }
        return audit_.RecordIn(
            txn,
            metastore::AuditEvent{0, 0, caller.principal.id, target.mine.org.id, "agent.update",
                                  "agent", next.id, request_id,
                                  nlohmann::json{{"previous_role", metastore::Name(previous_role)},
                                                 {"role", metastore::Name(next.role)}}
                                      .dump()});
      });
  if (!stored && stored.error().code == ErrorCode::kAlreadyExists) {
    return Fail(Coded(ErrorCode::kAlreadyExists, "already_exists",
                      "An agent named '" + next.display_name + "' exists in this organisation."));
  }
  TM_TRY(stored);
  return ViewOfAgent(next);
}

Result<metastore::Principal> AgentService::RevokeAgent(const Caller& caller, const std::string& org,
                                                       const std::string& agent_id,
                                                       const std::string& request_id) {
  TM_ASSIGN(auto target, EditableAgent(caller, org, agent_id));
  metastore::Principal next;
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    // Suspends the row as it is now: a rename made meanwhile stays.
    auto current = txn.principals().FindPrincipal(target.agent.id);
    if (!current) {
      if (current.error().code == ErrorCode::kNotFound) return Fail(AgentNotFound(agent_id));
      return Fail(current.error());
    }
    next = std::move(*current);
    next.suspended = true;
    TM_TRY(txn.principals().UpdatePrincipal(next));
    TM_TRY(txn.principals().RevokeAllApiKeys(next.id, clock_.NowMillis()));
    return audit_.RecordIn(
        txn, metastore::AuditEvent{0, 0, caller.principal.id, target.mine.org.id, "agent.revoke",
                                   "agent", next.id, request_id, "{}"});
  }));
  return next;
}

}  // namespace tablemere::accounts
