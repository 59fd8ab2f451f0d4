// Authenticator: people who arrive with a token of an external OpenID Connect issuer the
// deployment trusts (identity/oidc.h). The first appearance of an address creates the
// person (activating the organisation a signup form reserved for it, if any); after that
// the address names the same person, whichever way it logs in.
#include <nlohmann/json.hpp>

#include "accounts/authenticator.h"
#include "accounts/credentials.h"
#include "accounts/errors.h"
#include "common/crypto.h"
#include "identity/oidc.h"

namespace tablemere::accounts {
Result<Caller> Authenticator::ExternalCaller(const std::string& token) {
  auto identity = external_->Verify(token);
  if (!identity) {
    if (identity.error().code != ErrorCode::kUnauthenticated) return Fail(identity.error());
    return Fail(Coded(ErrorCode::kUnauthenticated, "invalid_api_key", identity.error().message)
                    .With("reason", identity.error().Detail("reason"))
                    .With("remedy", "Log in with the identity provider again."));
  }
  for (int attempt = 0; attempt < 2; attempt++) {
    auto found = meta_.principals().FindHumanByEmail(identity->email);
    if (found) {
      if (found->suspended) {
        return Fail(Coded(ErrorCode::kPermissionDenied, "principal_suspended",
                          "This principal is suspended."));
      }
      return Caller{std::move(*found), "", ""};
    }
    if (found.error().code != ErrorCode::kNotFound) return Fail(found.error());
    auto created = CreateExternalPerson(*identity);
    // A concurrent first request created the person: read it.
    if (!created && created.error().code == ErrorCode::kAlreadyExists) continue;
    TM_TRY(created);
  }
  return Fail(ErrorCode::kInternal, "the person of an external token could not be read");
}

Result<void> Authenticator::CreateExternalPerson(const identity::ExternalIdentity& id) {
  const int64_t now = clock_.NowMillis();
  const nlohmann::json via = {{"issuer", id.issuer}, {"subject", id.subject}};
  // A signup form left a pending organisation for this address: it is activated now.
  TM_ASSIGN(auto links, meta_.sessions().OpenLinksFor(id.email, now));
  for (const auto& link : links) {
    if (link.purpose != "set_password") continue;
    NewAccount account = NewAccountFrom(id.email, link.payload_json);
    if (!account.pending_org && !account.join_org) continue;
    account.with_key = false;
    account.terms_via = "signup-form";
    account.also = [&](metastore::Stores& stores, const SignupResult& r) -> Result<void> {
      TM_TRY(stores.sessions().SpendLink(link.token_hash, now));
      return audit_.RecordIn(stores, {0, 0, r.principal.id, r.org.id, "login.external", "principal",
                                      r.principal.id, "", via.dump()});
    };
    TM_TRY(signup_.CreateAccount(account));
    return {};
  }
  // Otherwise the person alone; POST /v1/onboard names its organisation.
  metastore::Principal p{.id = PrincipalId("p_" + crypto::HexEncode(random_.Bytes(8))),
                         .kind = metastore::PrincipalKind::kHuman,
                         .email = id.email,
                         .display_name = id.name.empty() ? id.email : id.name,
                         .created_ms = now};
  return metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_TRY(txn.principals().CreatePrincipal(p));
    TM_ASSIGN(auto invitations, txn.memberships().OpenInvitationsFor(p.email, now));
    for (const auto& inv : invitations) TM_TRY(orgs_.ApplyInvitation(txn, p.id, inv));
    return audit_.RecordIn(txn,
                           {0, 0, p.id, "", "login.external", "principal", p.id, "", via.dump()});
  });
}

}  // namespace tablemere::accounts
