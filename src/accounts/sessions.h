// Login with a password, and the sessions it opens (API reference, "Login and
// sessions"): the signup form's set-password link, login, refresh-token rotation,
// logout, the session list, password reset and change.
//
// A session is a row in the metastore: the hash of its current refresh token, the hash
// of the one it replaced, and a sliding 30-day expiry. Access tokens are RS256 JWTs of
// 900 s carrying the session id (sid); every use checks the session is still live, so
// logout, revocation and a password reset take effect at once.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "accounts/audit_recorder.h"
#include "accounts/authenticator.h"
#include "accounts/caller.h"
#include "accounts/signup_service.h"
#include "accounts/verification.h"
#include "common/clock.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

// Where a login comes from: shown in the session list.
struct ClientInfo {
  std::string user_agent;
  std::string ip;
};

// The session shape every login answer shares.
struct SessionGrant {
  std::string access_token;
  int64_t expires_in_s = 0;
  std::string refresh_token;  // shown once
  int64_t refresh_expires_in_s = 0;
  metastore::Session session;
  metastore::Principal principal;
  std::optional<MyOrg> org;  // the person's first organisation
  std::string joined_via;
  bool terms_accepted = false;
  std::string return_to;  // set-password only: the page the signup form asked to continue to
};

struct FormSignup {
  std::string email;
  std::string full_name;
  std::string organization_name;
  std::string handle;
  std::string return_to;  // a path under /app/, or ""
};

struct FormSignupStarted {
  Landing landing;
  std::string delivery;
  int64_t expires_in_s = 0;
  std::string return_to;
};

struct LinkStarted {
  std::string email;
  std::string delivery;
  int64_t expires_in_s = 0;
};

struct PasswordResetDone {
  SessionGrant grant;
  int sessions_revoked = 0;
  bool first_password = false;
};

struct PasswordChanged {
  int other_sessions_revoked = 0;
  int64_t changed_ms = 0;
};

// A link token a development stack's operator may read (GET /internal/login-tokens).
struct PendingLink {
  std::string purpose;
  std::string token;
  int64_t expires_ms = 0;
};

class Sessions {
 public:
  // `options` are the mail and sealing keys of the code flows (the same mailer).
  // `api_url` is the API's public URL, which mailed links point at.
  Sessions(metastore::Metastore& meta, const Clock& clock, Random& random, AuditRecorder& audit,
           SignupService& signup, Authenticator& auth, Verification& verification,
           std::string api_url, VerificationOptions options)
      : meta_(meta),
        clock_(clock),
        random_(random),
        audit_(audit),
        signup_(signup),
        auth_(auth),
        verification_(verification),
        api_url_(std::move(api_url)),
        options_(std::move(options)) {}

  // POST /v1/auth/signup. Errors: those of Verification::StartSignup, kInvalidInput
  // (invalid_value return_to), kRateLimited (5 an hour per address and per caller
  // address, one a minute per address).
  Result<FormSignupStarted> StartFormSignup(const FormSignup& form, const std::string& caller_ip);
  // POST /v1/auth/password/set. Errors: kInvalidInput (password_*; the link is not
  // spent), kUnauthenticated (invalid_login_token), token_expired (410), kAlreadyExists.
  Result<SessionGrant> SetFirstPassword(const std::string& token, const std::string& password,
                                        const ClientInfo& client);
  // POST /v1/auth/login. Errors: kUnauthenticated (invalid_login: the same for every
  // failure), kPermissionDenied (principal_suspended), kRateLimited.
  Result<SessionGrant> Login(const std::string& email, const std::string& password,
                             const ClientInfo& client);
  // POST /v1/auth/refresh. Errors: kUnauthenticated (invalid_refresh_token,
  // refresh_reused: the whole session is revoked, session_revoked, session_expired),
  // kPermissionDenied (principal_suspended).
  Result<SessionGrant> Refresh(const std::string& refresh_token);
  // POST /v1/auth/logout by refresh token. Errors: kUnauthenticated (invalid_refresh_token).
  Result<std::string> LogoutByRefresh(const std::string& refresh_token);
  // POST /v1/auth/logout by access token. Errors: kInvalidInput when the caller has no session.
  Result<std::string> Logout(const Caller& caller);
  Result<std::vector<metastore::Session>> List(const Caller& caller);
  // Errors: kNotFound (session_not_found, also for another account's session).
  Result<std::string> Revoke(const Caller& caller, const std::string& session_id);
  // POST /v1/auth/password/reset/start: the same answer whether or not the address has
  // an account. Errors: kInvalidInput (invalid_value email), kRateLimited.
  Result<LinkStarted> StartReset(const std::string& email, const std::string& caller_ip);
  // POST /v1/auth/password/reset. Errors: as SetFirstPassword.
  Result<PasswordResetDone> Reset(const std::string& token, const std::string& password,
                                  const ClientInfo& client);
  // POST /v1/auth/password/change. Errors: kPermissionDenied (forbidden: an agent),
  // kConflict (no_password_set), kUnauthenticated (invalid_login), kInvalidInput
  // (password_*), kRateLimited.
  Result<PasswordChanged> Change(const Caller& caller, const std::string& current,
                                 const std::string& replacement);
  Result<std::vector<PendingLink>> PendingLinks(const std::string& email);

 private:
  Result<SessionGrant> Open(metastore::Stores& stores, const metastore::Principal& principal,
                            const ClientInfo& client);
  // The unspent, unexpired link of `purpose` for `token`.
  Result<metastore::LoginLink> UsableLink(const std::string& token, const std::string& purpose);
  // Stores a new link and mails it (or seals it for the internal route).
  Result<void> IssueLink(const std::string& purpose, const std::string& email,
                         const std::string& payload_json, int64_t ttl_ms, const std::string& path,
                         const std::string& subject, const std::string& intro);
  Result<void> TakeMailRate(const std::string& email, const std::string& caller_ip);
  // Mails a notice (password changed); a failure to mail does not undo the change.
  void Notify(const std::string& email, const std::string& subject, const std::string& text);
  // Revokes a session with its audit event, in one transaction.
  Result<void> RevokeAudited(const std::string& session_id, const PrincipalId& principal,
                             const std::string& action);
  Result<std::vector<std::string>> OrgNamesOf(const PrincipalId& principal);

  metastore::Metastore& meta_;
  const Clock& clock_;
  Random& random_;
  AuditRecorder& audit_;
  SignupService& signup_;
  Authenticator& auth_;
  Verification& verification_;
  std::string api_url_;
  VerificationOptions options_;
};

}  // namespace tablemere::accounts
