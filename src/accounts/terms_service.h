// The Terms in force and their acceptance (GET /v1/terms, POST /v1/terms/accept), and
// deleting one's own account (DELETE /v1/me); terms.cc.
#pragma once

#include <string>
#include <vector>

#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

// The Terms version in force (GET /v1/terms); signups accept it.
inline constexpr char kTermsVersion[] = "2026-11-01";

struct TermsView {
  std::string current_version;
  bool accepted_current = false;
  std::vector<metastore::TermsAcceptance> history;
};

struct DeletedAccount {
  PrincipalId principal_id;
  int keys_revoked = 0;
  std::vector<std::string> orgs_left_empty;
  std::vector<std::string> warehouses_to_purge;
};

class TermsService {
 public:
  TermsService(metastore::Metastore& meta, const Clock& clock, AuditRecorder& audit)
      : meta_(meta), clock_(clock), audit_(audit) {}

  Result<TermsView> Terms(const Caller& caller);
  // Errors: kConflict (terms_version_mismatch).
  Result<TermsView> AcceptTerms(const Caller& caller, const std::string& version,
                                const std::string& request_id);
  // Errors: kInvalidInput (confirmation_required), kConflict (last_admin).
  Result<DeletedAccount> DeleteAccount(const Caller& caller, const std::string& confirm,
                                       const std::string& request_id);

 private:
  metastore::Metastore& meta_;
  const Clock& clock_;
  AuditRecorder& audit_;
};

}  // namespace tablemere::accounts
