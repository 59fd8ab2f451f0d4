// Who reaches what: the organisations a caller belongs to, its role in each, and its level
// on a warehouse (explicit grants, admin and membership defaults) (access.cc). Every use
// case that names an organisation or a warehouse resolves it here.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accounts/caller.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

struct WarehouseAccess {
  metastore::Warehouse warehouse;
  metastore::Level level = metastore::Level::kNone;
  std::string level_via;  // "grant" | "admin"
};

// A warehouse named by id or name, the caller's access to it (level kNone when it holds
// nothing) and its role in the warehouse's organisation.
struct ResolvedWarehouse {
  WarehouseAccess access;
  metastore::Role role = metastore::Role::kMember;
};

// An organisation the caller belongs to, with its role there.
struct MyOrg {
  metastore::Organization org;
  metastore::Role role = metastore::Role::kMember;
};

// Who holds what on a warehouse, explicit or implicit.
struct GrantView {
  WarehouseId warehouse_id;
  PrincipalId principal_id;
  metastore::PrincipalKind kind = metastore::PrincipalKind::kHuman;
  std::string display;
  metastore::Level level = metastore::Level::kNone;
  std::string via;  // "admin" | "membership" | "creator" | "grant" | "revoked"
  PrincipalId granted_by;
  int64_t granted_ms = 0;
};

class AccessService {
 public:
  explicit AccessService(metastore::Metastore& meta) : meta_(meta) {}

  // The caller's organisations with its role in each.
  Result<std::vector<std::pair<metastore::Organization, metastore::Role>>> Orgs(
      const Caller& caller);
  // An organisation named by id or handle among the caller's. Errors: kNotFound
  // (org_not_found).
  Result<MyOrg> ResolveOrg(const Caller& caller, const std::string& org);
  // The caller's role in an organisation named by id or handle; nullopt when it is not a
  // member.
  Result<std::optional<metastore::Role>> RoleIn(const Caller& caller, const std::string& org);

  // The caller's level on a warehouse named by id, name or table bucket; kNotFound
  // (warehouse_not_found) when the caller cannot see it, kConflict (ambiguous_name) when
  // a name matches several. With `include_unheld`, a warehouse of the caller's
  // organisations where it holds nothing matches too (level kNone), except for member
  // agents, which do not see warehouses they were not granted.
  Result<WarehouseAccess> Access(const Caller& caller, const std::string& warehouse,
                                 bool include_unheld = false);
  // Access with include_unheld, and the caller's role in the warehouse's organisation.
  Result<ResolvedWarehouse> ResolveWarehouse(const Caller& caller, const std::string& warehouse);
  // The default warehouse: the first the caller can see.
  Result<WarehouseAccess> DefaultWarehouse(const Caller& caller);
  // The warehouse a data route names (the default for ""), which the caller must hold read
  // or write on. Errors: kNotFound (warehouse_not_found: not visible), kPermissionDenied
  // (forbidden: visible, nothing held), kConflict (ambiguous_name).
  Result<WarehouseAccess> HeldAccess(const Caller& caller, const std::string& warehouse);

  // What `p` (holding `role` in the warehouse's organisation) holds on it given the
  // warehouse's explicit grants; nullopt for an agent with no grant. The one place the
  // rules live: a human admin writes, an explicit grant stands, a human member reads.
  static std::optional<GrantView> GrantFor(const metastore::Principal& p, metastore::Role role,
                                           const std::vector<metastore::Grant>& grants);
  // The caller's access to `w` of an organisation where it holds `role`, given the
  // caller's own grants; nullopt when it holds nothing there.
  static std::optional<WarehouseAccess> LevelOn(const Caller& caller, metastore::Role role,
                                                const std::vector<metastore::Grant>& grants,
                                                const metastore::Warehouse& w);

 private:
  metastore::Metastore& meta_;
};

}  // namespace tablemere::accounts
