// GrantService: grants on a warehouse.
#include "accounts/grant_service.h"

#include <nlohmann/json.hpp>

#include "accounts/errors.h"

namespace tablemere::accounts {

using metastore::Level;
using metastore::PrincipalKind;
using metastore::Role;

Result<std::vector<GrantView>> GrantService::Grants(const Caller& caller,
                                                    const std::string& warehouse) {
  TM_ASSIGN(auto resolved, access_.ResolveWarehouse(caller, warehouse));
  const metastore::Warehouse& w = resolved.access.warehouse;
  TM_ASSIGN(auto members, orgs_.ActiveMembers(w.org_id));
  TM_ASSIGN(auto explicit_grants, meta_.warehouses().GrantsOn(w.id));
  std::vector<GrantView> out;
  for (const auto& m : members) {
    auto view = AccessService::GrantFor(m.principal, m.membership.role, explicit_grants);
    if (!view) continue;
    view->warehouse_id = w.id;
    out.push_back(std::move(*view));
  }
  return out;
}

Result<GrantView> GrantService::PutGrant(const Caller& caller, const std::string& warehouse,
                                         const std::string& principal_id,
                                         const std::string& level_text,
                                         const std::string& request_id) {
  // ---- validate
  auto level = metastore::ParseLevel(level_text);
  if (!level || *level == Level::kNone) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "level must be read or write")
                    .With("field", "level"));
  }
  // ---- authorise: an admin, or a human holding write granting at most their own level
  TM_ASSIGN(auto resolved, access_.ResolveWarehouse(caller, warehouse));
  const metastore::Warehouse& w = resolved.access.warehouse;
  const bool admin = resolved.role == Role::kAdmin;
  if (!admin) {
    Level mine = resolved.access.level;
    if (caller.principal.kind != PrincipalKind::kHuman || mine != Level::kWrite) {
      return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                        "Granting on this catalog needs an admin, or a person holding write")
                      .With("level", metastore::Name(mine))
                      .With("can_grant", "")
                      .With("remedy", "Ask an admin of the organisation (tablemere org members)."));
    }
  }
  // ---- the grantee must be a member or an agent of this organisation
  auto grantee = meta_.principals().FindPrincipal(PrincipalId(principal_id));
  TM_ASSIGN(auto members, meta_.orgs().MembersOf(w.org_id));
  std::optional<Role> grantee_role;
  for (const auto& m : members) {
    if (m.principal_id.str() == principal_id) grantee_role = m.role;
  }
  if (!grantee || !grantee_role) {
    return Fail(Coded(ErrorCode::kNotFound, "principal_not_found",
                      "No member or agent " + principal_id + " in this organisation")
                    .With("remedy", "tablemere org members and tablemere agent list show them."));
  }
  // ---- apply
  metastore::Grant grant{w.id, grantee->id, *level, caller.principal.id, clock_.NowMillis()};
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_TRY(txn.warehouses().PutGrant(grant));
    return audit_.RecordIn(
        txn,
        metastore::AuditEvent{
            0, 0, caller.principal.id, w.org_id, "warehouse.grant", "warehouse", w.id, request_id,
            nlohmann::json{{"principal_id", principal_id}, {"level", metastore::Name(*level)}}
                .dump()});
  }));
  auto view = AccessService::GrantFor(*grantee, *grantee_role, {grant});
  GrantView out = view ? *view : GrantView{};
  out.warehouse_id = w.id;
  return out;
}

Result<RevokedGrant> GrantService::RevokeGrant(const Caller& caller, const std::string& warehouse,
                                               const std::string& principal_id,
                                               const std::string& request_id) {
  TM_ASSIGN(auto resolved, access_.ResolveWarehouse(caller, warehouse));
  const metastore::Warehouse& w = resolved.access.warehouse;
  TM_ASSIGN(auto members, meta_.orgs().MembersOf(w.org_id));
  std::optional<Role> grantee_role;
  for (const auto& m : members) {
    if (m.principal_id.str() == principal_id) grantee_role = m.role;
  }
  auto grantee = meta_.principals().FindPrincipal(PrincipalId(principal_id));
  TM_ASSIGN(auto grants, meta_.warehouses().GrantsOn(w.id));
  std::optional<GrantView> before;
  if (grantee && grantee_role) before = AccessService::GrantFor(*grantee, *grantee_role, grants);
  if (before) before->warehouse_id = w.id;
  if (!before || before->level == Level::kNone) {
    return Fail(Coded(ErrorCode::kNotFound, "grant_not_found",
                      principal_id + " holds nothing on this catalog")
                    .With("remedy", "tablemere catalog grants lists who holds what."));
  }
  // ---- authorise: an admin, or the person who made the grant
  if (resolved.role != Role::kAdmin && before->granted_by != caller.principal.id) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                      "Only an admin or the person who made the grant revokes it"));
  }
  if (before->via == "admin") {
    return Fail(Coded(ErrorCode::kConflict, "implicit_grant",
                      "An admin's write comes with the role and cannot be revoked")
                    .With("remedy", "Change the role: tablemere org role --principal " +
                                        principal_id + " --role member"));
  }
  // ---- apply: a member's implicit read becomes an explicit none; a grant goes
  RevokedGrant out{*before, *before};
  const bool member_human = grantee->kind == PrincipalKind::kHuman;
  out.after.level = Level::kNone;
  out.after.via = member_human ? "revoked" : "";
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    if (member_human) {
      TM_TRY(txn.warehouses().PutGrant(
          {w.id, grantee->id, Level::kNone, caller.principal.id, clock_.NowMillis()}));
    } else {
      TM_TRY(txn.warehouses().DeleteGrant(w.id, grantee->id));
    }
    return audit_.RecordIn(
        txn, metastore::AuditEvent{0, 0, caller.principal.id, w.org_id, "warehouse.grant_revoke",
                                   "warehouse", w.id, request_id,
                                   nlohmann::json{{"principal_id", principal_id},
                                                  {"level", metastore::Name(before->level)},
                                                  {"via", before->via}}
                                       .dump()});
  }));
  return out;
}

}  // namespace tablemere::accounts
