// Reading the audit log (GET /v1/audit) as a caller may see it (audit.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "accounts/access_service.h"
#include "accounts/caller.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

class AuditTrail {
 public:
  AuditTrail(metastore::Metastore& meta, AccessService& access) : meta_(meta), access_(access) {}

  // Audit events: the caller's own, or with `org_id` an organisation's (admins see every
  // event of the organisation, members their own). `action` is a name or "prefix*".
  // Errors: kNotFound (org_not_found).
  Result<std::vector<metastore::AuditEvent>> Events(const Caller& caller, const std::string& org_id,
                                                    const std::string& action, int64_t since_ms,
                                                    int limit);

 private:
  metastore::Metastore& meta_;
  AccessService& access_;
};

}  // namespace tablemere::accounts
