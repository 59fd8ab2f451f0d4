// What the deployment's operator does to principals (the internal routes)
// (operator.cc).
#pragma once

#include <string>

#include "accounts/audit_recorder.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

class OperatorService {
 public:
  OperatorService(metastore::Metastore& meta, AuditRecorder& audit) : meta_(meta), audit_(audit) {}

  // Suspends (or lifts the suspension of) a principal: every credential it holds stops
  // opening anything while suspended. Errors: kNotFound (principal_not_found).
  Result<metastore::Principal> SetSuspended(const PrincipalId& principal, bool suspended,
                                            const std::string& request_id);

 private:
  metastore::Metastore& meta_;
  AuditRecorder& audit_;
};

}  // namespace tablemere::accounts
