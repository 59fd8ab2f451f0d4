// Authenticating the control API's callers (an API key, an access token from POST
// /v1/tokens or of a login session, or a token of a trusted external OpenID Connect
// issuer) and issuing those access tokens (tokens.cc, external.cc).
#pragma once

#include <cstdint>
#include <string>

#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "accounts/org_service.h"
#include "accounts/signup_service.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::identity {
class SigningKeys;
class ExternalIssuers;
struct Claims;
struct ExternalIdentity;
}  // namespace tablemere::identity

namespace tablemere::accounts {

struct IssuedToken {
  std::string access_token;
  int64_t expires_in_s = 0;
  PrincipalId principal_id;
};

class Authenticator {
 public:
  // `issuer` is the API's public URL, which tokens name; `signing_keys` null when the
  // deployment issues no tokens.
  Authenticator(metastore::Metastore& meta, const Clock& clock, Random& random,
                AuditRecorder& audit, OrgService& orgs, SignupService& signup,
                identity::SigningKeys* signing_keys, const std::string& issuer)
      : meta_(meta),
        clock_(clock),
        random_(random),
        audit_(audit),
        orgs_(orgs),
        signup_(signup),
        signing_keys_(signing_keys),
        issuer_(issuer) {}

  // An API key (al_live_…) or an access token, presented from `address`. Errors:
  // kUnauthenticated (invalid_api_key, api_key_revoked, session_revoked,
  // session_expired), kPermissionDenied (principal_suspended), kRateLimited (10 wrong
  // secrets for one key id from one address within 10 minutes).
  Result<Caller> Authenticate(const std::string& bearer, const std::string& address);
  // An RS256 access token for the API, 900 s, for an API key. Same errors as
  // Authenticate; kNotImplemented when the deployment issues no tokens.
  Result<IssuedToken> IssueToken(const std::string& api_key, const std::string& address);
  // An access token of a login session (claims sub/email/kind/sid), 900 s.
  Result<IssuedToken> IssueSessionToken(const metastore::Principal& principal,
                                        const std::string& session_id);
  // Trust tokens of these external OpenID Connect issuers (null or empty: none).
  void SetExternalIssuers(identity::ExternalIssuers* issuers) { external_ = issuers; }
  identity::ExternalIssuers* external_issuers() { return external_; }
  // The signing keys (null when tokens are not served).
  identity::SigningKeys* signing_keys() { return signing_keys_; }

 private:
  // The person an external issuer's token names (external.cc), created on first sight.
  Result<Caller> ExternalCaller(const std::string& token);
  Result<void> CreateExternalPerson(const identity::ExternalIdentity& id);
  // The caller of a session's access token, while the session is live.
  Result<Caller> SessionCaller(const identity::Claims& claims);

  metastore::Metastore& meta_;
  const Clock& clock_;
  Random& random_;
  AuditRecorder& audit_;
  OrgService& orgs_;
  SignupService& signup_;
  identity::SigningKeys* signing_keys_;
  const std::string& issuer_;
  identity::ExternalIssuers* external_ = nullptr;
};

}  // namespace tablemere::accounts
