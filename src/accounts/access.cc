// AccessService: who reaches which organisation and warehouse, at which level.
#include "accounts/access_service.h"

#include "accounts/errors.h"
#include "common/strings.h"
#include "storage/access.h"

namespace tablemere::accounts {

using metastore::Level;
using metastore::PrincipalKind;
using metastore::Role;

Result<MyOrg> AccessService::ResolveOrg(const Caller& caller, const std::string& org) {
  TM_ASSIGN(auto orgs, meta_.orgs().OrgsOf(caller.principal.id));
  for (auto& [o, role] : orgs) {
    if (o.id.str() == org || o.handle == org) return MyOrg{std::move(o), role};
  }
  return Fail(OrgNotFound(org));
}

Result<std::vector<std::pair<metastore::Organization, metastore::Role>>> AccessService::Orgs(
    const Caller& caller) {
  return meta_.orgs().OrgsOf(caller.principal.id);
}

Result<std::optional<metastore::Role>> AccessService::RoleIn(const Caller& caller,
                                                             const std::string& org) {
  TM_ASSIGN(auto orgs, meta_.orgs().OrgsOf(caller.principal.id));
  for (const auto& [o, role] : orgs) {
    if (o.id.str() == org || o.handle == org) return std::optional(role);
  }
  return std::optional<metastore::Role>();
}

std::optional<WarehouseAccess> AccessService::LevelOn(const Caller& caller, metastore::Role role,
                                                      const std::vector<metastore::Grant>& grants,
                                                      const metastore::Warehouse& w) {
  // `grants` are the caller's own; the rules are GrantFor's (one place).
  std::vector<metastore::Grant> on_this;
  for (const auto& g : grants) {
    if (g.warehouse_id == w.id) on_this.push_back(g);
  }
  auto view = GrantFor(caller.principal, role, on_this);
  if (!view || view->level == metastore::Level::kNone) return std::nullopt;
  return WarehouseAccess{w, view->level, view->via};
}

Result<WarehouseAccess> AccessService::Access(const Caller& caller, const std::string& warehouse,
                                              bool include_unheld) {
  TM_ASSIGN(auto orgs, meta_.orgs().OrgsOf(caller.principal.id));
  TM_ASSIGN(auto grants, meta_.warehouses().GrantsOf(caller.principal.id));
  std::vector<WarehouseAccess> matches;
  for (const auto& [org, role] : orgs) {
    TM_ASSIGN(auto warehouses, meta_.warehouses().WarehousesOfOrg(org.id));
    for (const auto& w : warehouses) {
      if (!warehouse.empty() && w.id.str() != warehouse && w.name != warehouse &&
          storage::TableBucketName(w.id) != warehouse) {
        continue;
      }
      if (auto access = LevelOn(caller, role, grants, w)) {
        matches.push_back(std::move(*access));
      } else if (include_unheld && (caller.principal.kind == metastore::PrincipalKind::kHuman ||
                                    role == metastore::Role::kAdmin)) {
        matches.push_back(WarehouseAccess{w, metastore::Level::kNone, ""});
      }
    }
  }
  if (matches.empty()) {
    return Fail(
        Coded(ErrorCode::kNotFound, "warehouse_not_found",
              "No warehouse '" + warehouse + "' visible to you; pass its warehouse_id or its name")
            .With("field", "warehouse_id")
            .With("remedy", "tablemere catalog list (GET /v1/warehouses) lists them."));
  }
  if (matches.size() > 1 && !warehouse.empty()) {
    std::vector<std::string> ids;
    for (const auto& m : matches) ids.push_back(m.warehouse.id);
    return Fail(Coded(ErrorCode::kConflict, "ambiguous_name",
                      "More than one warehouse is named '" + warehouse + "'; use its warehouse_id.")
                    .With("candidates", Join(ids, ","))
                    .With("remedy",
                          "Pass the warehouse_id instead of the name (--catalog "
                          "<warehouse_id> with the CLI)."));
  }
  return matches.front();
}

Result<WarehouseAccess> AccessService::DefaultWarehouse(const Caller& caller) {
  return Access(caller, "");
}

Result<WarehouseAccess> AccessService::HeldAccess(const Caller& caller,
                                                  const std::string& warehouse) {
  if (warehouse.empty()) return DefaultWarehouse(caller);
  // A warehouse the caller sees but holds nothing on (an admin agent without a grant, a
  // member whose read was revoked) is refused, not hidden.
  TM_ASSIGN(auto access, Access(caller, warehouse, /*include_unheld=*/true));
  if (access.level == metastore::Level::kNone) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                      "You hold no access to the warehouse '" + access.warehouse.name + "'")
                    .With("your_level", "none")
                    .With("remedy",
                          "An organisation admin grants read or write: tablemere catalog grant."));
  }
  return access;
}

Result<ResolvedWarehouse> AccessService::ResolveWarehouse(const Caller& caller,
                                                          const std::string& warehouse) {
  TM_ASSIGN(auto access, Access(caller, warehouse, /*include_unheld=*/true));
  TM_ASSIGN(auto role, RoleIn(caller, access.warehouse.org_id));
  return ResolvedWarehouse{std::move(access), role.value_or(Role::kMember)};
}

std::optional<GrantView> AccessService::GrantFor(const metastore::Principal& p, Role role,
                                                 const std::vector<metastore::Grant>& grants) {
  GrantView v{WarehouseId(), p.id,
              p.kind,        p.kind == PrincipalKind::kHuman ? p.email : p.display_name,
              Level::kNone,  "",
              PrincipalId(), 0};
  const metastore::Grant* g = nullptr;
  for (const auto& candidate : grants) {
    if (candidate.principal_id == p.id) g = &candidate;
  }
  if (p.kind == PrincipalKind::kHuman && role == Role::kAdmin) {
    v.level = Level::kWrite;
    v.via = "admin";
  } else if (g != nullptr) {
    v.level = g->level;
    v.via = g->granted_by == p.id ? "creator" : (g->level == Level::kNone ? "revoked" : "grant");
    v.granted_by = g->granted_by;
    v.granted_ms = g->granted_ms;
  } else if (p.kind == PrincipalKind::kHuman) {
    v.level = Level::kRead;
    v.via = "membership";
  } else {
    return std::nullopt;  // an agent without a grant holds nothing here
  }
  return v;
}

}  // namespace tablemere::accounts
