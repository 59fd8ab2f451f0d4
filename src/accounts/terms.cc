// TermsService: the Terms in force and their acceptance (GET /v1/terms, POST
// /v1/terms/accept), and deleting one's own account (DELETE /v1/me).
#include <nlohmann/json.hpp>

#include "accounts/errors.h"
#include "accounts/org_rules.h"
#include "accounts/terms_service.h"
#include "common/strings.h"

namespace tablemere::accounts {
namespace {

using metastore::PrincipalKind;
using metastore::Role;

}  // namespace

Result<TermsView> TermsService::Terms(const Caller& caller) {
  TermsView v{kTermsVersion, false, {}};
  TM_ASSIGN(v.history, meta_.memberships().TermsHistory(caller.principal.id));
  for (const auto& a : v.history) {
    if (a.version == kTermsVersion) v.accepted_current = true;
  }
  return v;
}

Result<TermsView> TermsService::AcceptTerms(const Caller& caller, const std::string& version,
                                            const std::string& request_id) {
  if (!version.empty() && version != kTermsVersion) {
    return Fail(Coded(ErrorCode::kConflict, "terms_version_mismatch",
                      "The Terms in force are version " + std::string(kTermsVersion))
                    .With("current_version", kTermsVersion)
                    .With("remedy",
                          "Read the current Terms (GET /v1/terms) and accept that "
                          "version."));
  }
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_TRY(txn.memberships().AcceptTerms(
        {caller.principal.id, kTermsVersion, clock_.NowMillis(), "accept"}));
    return audit_.RecordIn(
        txn, metastore::AuditEvent{0, 0, caller.principal.id, caller.principal.org_id,
                                   "terms.accept", "terms", kTermsVersion, request_id, "{}"});
  }));
  return Terms(caller);
}

Result<DeletedAccount> TermsService::DeleteAccount(const Caller& caller, const std::string& confirm,
                                                   const std::string& request_id) {
  if (caller.principal.kind != PrincipalKind::kHuman) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                      "An agent is removed by its organisation, not by itself")
                    .With("remedy", "tablemere agent revoke --agent-id " + caller.principal.id));
  }
  if (ToLower(confirm) != ToLower(caller.principal.email)) {
    return Fail(Coded(ErrorCode::kInvalidInput, "confirmation_required",
                      "Type your email address in confirm to delete your account")
                    .With("field", "confirm")
                    .With("confirm_with", caller.principal.email));
  }
  DeletedAccount out{caller.principal.id, 0, {}, {}};
  int64_t now = clock_.NowMillis();
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_ASSIGN(auto orgs, txn.orgs().OrgsOf(caller.principal.id));
    for (const auto& [org, role] : orgs) {
      TM_TRY(txn.orgs().RemoveMember(org.id, caller.principal.id));
      TM_ASSIGN(auto members, txn.orgs().MembersOf(org.id));
      TM_ASSIGN(int admins, HumanAdmins(txn, org.id));
      bool humans_left = false;
      for (const auto& m : members) humans_left |= m.kind == PrincipalKind::kHuman;
      if (humans_left && admins == 0) {
        return Fail(
            Coded(ErrorCode::kConflict, "last_admin", "You are the last admin of " + org.name)
                .With("org_id", org.id)
                .With("remedy", "Make someone else an admin first (tablemere org role)."));
      }
      if (!humans_left) {
        // Left empty: its agents stop, its warehouses are erased within 30 days.
        out.orgs_left_empty.push_back(org.id);
        TM_ASSIGN(auto agents, txn.principals().AgentsOf(org.id));
        for (auto agent : agents) {
          agent.suspended = true;
          TM_TRY(txn.principals().UpdatePrincipal(agent));
          TM_TRY(txn.principals().RevokeAllApiKeys(agent.id, now));
        }
        TM_ASSIGN(auto warehouses, txn.warehouses().WarehousesOfOrg(org.id));
        for (const auto& w : warehouses) out.warehouses_to_purge.push_back(w.id);
      }
    }
    TM_ASSIGN(out.keys_revoked, txn.principals().RevokeAllApiKeys(caller.principal.id, now));
    metastore::Principal gone = caller.principal;
    gone.suspended = true;
    gone.email.clear();  // the address is free for a new account
    TM_TRY(txn.principals().UpdatePrincipal(gone));
    return audit_.RecordIn(
        txn,
        metastore::AuditEvent{
            0, now, caller.principal.id, "", "account.delete", "principal", caller.principal.id,
            request_id, nlohmann::json{{"organisations_left_empty", out.orgs_left_empty}}.dump()});
  }));
  return out;
}

}  // namespace tablemere::accounts
