// Grants on a warehouse (GET/PUT/DELETE /v1/warehouses/{id}/grants): who holds what,
// explicit or implicit (grants.cc; the rules are AccessService::GrantFor's).
#pragma once

#include <string>
#include <vector>

#include "accounts/access_service.h"
#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "accounts/org_service.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

struct RevokedGrant {
  GrantView before;
  GrantView after;
};

class GrantService {
 public:
  GrantService(metastore::Metastore& meta, const Clock& clock, AuditRecorder& audit,
               AccessService& access, OrgService& orgs)
      : meta_(meta), clock_(clock), audit_(audit), access_(access), orgs_(orgs) {}

  Result<std::vector<GrantView>> Grants(const Caller& caller, const std::string& warehouse);
  // Errors: kInvalidInput (invalid_value level), kPermissionDenied (forbidden), kNotFound
  // (principal_not_found, warehouse_not_found).
  Result<GrantView> PutGrant(const Caller& caller, const std::string& warehouse,
                             const std::string& principal_id, const std::string& level,
                             const std::string& request_id);
  // Errors: kNotFound (grant_not_found), kPermissionDenied (forbidden), kConflict
  // (implicit_grant: an admin's write).
  Result<RevokedGrant> RevokeGrant(const Caller& caller, const std::string& warehouse,
                                   const std::string& principal_id, const std::string& request_id);

 private:
  metastore::Metastore& meta_;
  const Clock& clock_;
  AuditRecorder& audit_;
  AccessService& access_;
  OrgService& orgs_;
};

}  // namespace tablemere::accounts
