// AuditTrail: reading the audit log.
#include "accounts/audit_trail.h"

#include "accounts/errors.h"

namespace tablemere::accounts {

Result<std::vector<metastore::AuditEvent>> AuditTrail::Events(const Caller& caller,
                                                              const std::string& org_id,
                                                              const std::string& action,
                                                              int64_t since_ms, int limit) {
  std::string prefix = action;
  bool exact = !prefix.ends_with("*");
  if (!exact) prefix.pop_back();
  std::vector<metastore::AuditEvent> events;
  if (org_id.empty()) {
    TM_ASSIGN(events, meta_.audit().List("", caller.principal.id, prefix, since_ms, limit));
  } else {
    TM_ASSIGN(auto role, access_.RoleIn(caller, org_id));
    if (!role) return Fail(OrgNotFound(org_id));
    TM_ASSIGN(events, meta_.audit().List(org_id, "", prefix, since_ms, limit));
    if (*role != metastore::Role::kAdmin) {
      std::erase_if(events, [&](const auto& e) { return e.principal_id != caller.principal.id; });
    }
  }
  if (exact && !action.empty()) {
    std::erase_if(events, [&](const auto& e) { return e.action != action; });
  }
  return events;
}

}  // namespace tablemere::accounts
