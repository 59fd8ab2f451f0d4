// OperatorService: what the operator does to principals.
#include "accounts/operator_service.h"

namespace tablemere::accounts {

Result<metastore::Principal> OperatorService::SetSuspended(const PrincipalId& principal_id,
                                                           bool suspended,
                                                           const std::string& request_id) {
  return metastore::InTransaction(
      meta_, [&](metastore::WriteTransaction& txn) -> Result<metastore::Principal> {
        auto p = txn.principals().FindPrincipal(principal_id);
        if (!p) {
          if (p.error().code != ErrorCode::kNotFound) return Fail(p.error());
          return Fail(Error{ErrorCode::kNotFound, "No principal " + principal_id.str(), {}}.With(
              "code", "principal_not_found"));
        }
        p->suspended = suspended;
        TM_TRY(txn.principals().UpdatePrincipal(*p));
        TM_TRY(audit_.RecordIn(
            txn, metastore::AuditEvent{0, 0, "operator", p->org_id,
                                       suspended ? "principal.suspend" : "principal.unsuspend",
                                       "principal", p->id, request_id, "{}"}));
        return *p;
      });
}

}  // namespace tablemere::accounts
