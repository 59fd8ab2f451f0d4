#include "accounts/sessions.h"

#include <nlohmann/json.hpp>

#include "accounts/errors.h"
#include "accounts/input_checks.h"
#include "accounts/passwords.h"
#include "accounts/terms_service.h"
#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::accounts {
namespace {

using Json = nlohmann::json;
using metastore::LoginLink;
using metastore::Session;

constexpr int64_t kHourMs = 3600 * 1000;
constexpr int64_t kDayMs = 24 * kHourMs;
// Link and session lifetimes (API reference).
constexpr int64_t kSetPasswordTtlMs = 3 * kDayMs;
constexpr int64_t kResetTtlMs = 30 * 60 * 1000;
constexpr int64_t kSessionTtlMs = 30 * kDayMs;
// Mail rate: 5 links an hour per address and per caller address, one a minute per address.
constexpr int kLinksPerHour = 5;
constexpr int64_t kResendMs = 60 * 1000;
// Login: 10 failures per address an hour, 120 attempts per caller address an hour.
constexpr int kFailuresPerHour = 10;
constexpr int kAttemptsPerHour = 120;

constexpr char kSetPassword[] = "set_password";
constexpr char kResetPassword[] = "reset_password";

Error InvalidLogin() {
  return Coded(ErrorCode::kUnauthenticated, "invalid_login", "The address or password is wrong.")
      .With("remedy", "Check both, or reset the password: POST /v1/auth/password/reset/start.");
}

// Tokens are 256 random bits, so a plain SHA-256 is enough to keep only their hash.
std::string HashToken(const std::string& token) { return crypto::HexEncode(crypto::Sha256(token)); }

std::string NewToken(Random& random, const char* prefix) {
  return prefix + crypto::Base64UrlEncode(random.Bytes(32));
}

}  // namespace

// ---- opening a session

Result<SessionGrant> Sessions::Open(metastore::Stores& stores,
                                    const metastore::Principal& principal,
                                    const ClientInfo& client) {
  const int64_t now = clock_.NowMillis();
  SessionGrant g;
  g.refresh_token = NewToken(random_, "rt_");
  g.session = Session{"s_" + crypto::HexEncode(random_.Bytes(12)),
                      principal.id,
                      HashToken(g.refresh_token),
                      "",
                      now,
                      now,
                      now + kSessionTtlMs,
                      0,
                      client.user_agent.substr(0, 256),
                      client.ip};
  TM_TRY(stores.sessions().CreateSession(g.session));
  TM_ASSIGN(auto token, auth_.IssueSessionToken(principal, g.session.id));
  g.access_token = std::move(token.access_token);
  g.expires_in_s = token.expires_in_s;
  g.refresh_expires_in_s = kSessionTtlMs / 1000;
  g.principal = principal;
  TM_ASSIGN(auto orgs, stores.orgs().OrgsOf(principal.id));
  if (!orgs.empty()) {
    g.org = MyOrg{orgs.front().first, orgs.front().second};
    TM_ASSIGN(auto members, stores.orgs().MembersOf(g.org->org.id));
    for (const auto& m : members) {
      if (m.principal_id == principal.id) g.joined_via = m.joined_via;
    }
  }
  TM_ASSIGN(auto history, stores.memberships().TermsHistory(principal.id));
  for (const auto& t : history) g.terms_accepted = g.terms_accepted || t.version == kTermsVersion;
  return g;
}

// ---- mailed links

Result<void> Sessions::TakeMailRate(const std::string& email, const std::string& caller_ip) {
  auto& store = meta_.verification();
  const int64_t now = clock_.NowMillis();
  TM_ASSIGN(auto links, meta_.sessions().OpenLinksFor(email, now));
  for (const auto& link : links) {
    if (link.created_ms + kResendMs > now) {
      return Fail(RateLimited(link.created_ms + kResendMs - now,
                              "A link was sent less than a minute ago; use it or wait."));
    }
  }
  for (const std::string& bucket : {"link-ip:" + caller_ip, "link-start:" + email}) {
    TM_ASSIGN(auto decision, store.TakeRate(bucket, kLinksPerHour, kHourMs, now));
    if (!decision.allowed) {
      return Fail(RateLimited(decision.retry_after_ms,
                              "Five mails an hour per address: wait before asking again."));
    }
  }
  return {};
}

Result<void> Sessions::IssueLink(const std::string& purpose, const std::string& email,
                                 const std::string& payload_json, int64_t ttl_ms,
                                 const std::string& path, const std::string& subject,
                                 const std::string& intro) {
  const std::string token = NewToken(random_, "lt_");
  const int64_t now = clock_.NowMillis();
  LoginLink link{HashToken(token), purpose, email, "", payload_json, now, now + ttl_ms, 0};
  if (verification_.delivery() == "log") {
    link.sealed_token = crypto::Base64Encode(
        crypto::Seal(options_.seal_key, random_.Bytes(12), token, purpose + ":" + email));
  }
  TM_TRY(meta_.sessions().PutLink(link));
  if (options_.mailer) {
    const std::string url = api_url_ + path + "?token=" + token;
    auto sent = options_.mailer->Send(
        {email, subject,
         intro + "\n\n    " + url + "\n\nIf you did not ask for it, ignore this message.\n"});
    if (!sent) {
      (void)meta_.sessions().SpendLink(link.token_hash, now);
      return Fail(Coded(ErrorCode::kUnavailable, "mail_error",
                        "The link could not be mailed; try again shortly."));
    }
  }
  return {};
}

Result<LoginLink> Sessions::UsableLink(const std::string& token, const std::string& purpose) {
  auto link = meta_.sessions().FindLink(HashToken(token));
  if (!link || link->purpose != purpose || link->used_ms != 0) {
    if (!link && link.error().code != ErrorCode::kNotFound) return Fail(link.error());
    return Fail(Coded(ErrorCode::kUnauthenticated, "invalid_login_token",
                      "This link is unknown or was already used.")
                    .With("remedy", "Ask for a new link."));
  }
  if (link->expires_ms <= clock_.NowMillis()) {
    return Fail(Coded(ErrorCode::kNotFound, "token_expired", "This link has expired.")
                    .With("remedy", "Ask for a new link."));
  }
  return *link;
}

void Sessions::Notify(const std::string& email, const std::string& subject,
                      const std::string& text) {
  if (options_.mailer) (void)options_.mailer->Send({email, subject, text});
}

Result<std::vector<std::string>> Sessions::OrgNamesOf(const PrincipalId& principal) {
  TM_ASSIGN(auto orgs, meta_.orgs().OrgsOf(principal));
  std::vector<std::string> names;
  for (const auto& [org, role] : orgs) {
    names.push_back(org.name);
    names.push_back(org.handle);
  }
  return names;
}

// ---- the signup form and its set-password link

Result<FormSignupStarted> Sessions::StartFormSignup(const FormSignup& form,
                                                    const std::string& caller_ip) {
  // return_to stays on this site's account pages: never an open redirect.
  if (!form.return_to.empty() &&
      (!form.return_to.starts_with("/app/") || form.return_to.find("//") != std::string::npos ||
       form.return_to.find('\\') != std::string::npos)) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value",
                      "return_to must be a path under /app/ on this site")
                    .With("field", "return_to"));
  }
  SignupStart start{form.email, "", form.full_name, form.organization_name, form.handle};
  TM_ASSIGN(auto landing, verification_.Land(start, [&](const std::string& email) {
    return TakeMailRate(email, caller_ip);
  }));
  Json payload = Json::parse(landing.payload_json, nullptr, false);
  payload["return_to"] = form.return_to;
  payload["terms"] = kTermsVersion;
  TM_TRY(IssueLink(kSetPassword, landing.email, payload.dump(), kSetPasswordTtlMs, "/app/welcome",
                   "Set your Tablemere password",
                   "Open this link to set your password and finish signing up to Tablemere "
                   "(valid 3 days):"));
  TM_TRY(audit_.Record({0, 0, "", "", "signup.form", "email", landing.email, "", "{}"}));
  return FormSignupStarted{std::move(landing), verification_.delivery(), kSetPasswordTtlMs / 1000,
                           form.return_to};
}

Result<SessionGrant> Sessions::SetFirstPassword(const std::string& token,
                                                const std::string& password,
                                                const ClientInfo& client) {
  TM_ASSIGN(auto link, UsableLink(token, kSetPassword));
  NewAccount account = NewAccountFrom(link.email, link.payload_json);
  std::vector<std::string> org_names;
  for (const auto& id : {account.pending_org, account.join_org}) {
    if (!id) continue;
    TM_ASSIGN(auto org, meta_.orgs().FindOrg(*id));
    org_names.push_back(org.name);
    org_names.push_back(org.handle);
  }
  TM_TRY(CheckPasswordRules(password, link.email, org_names));
  TM_ASSIGN(std::string hash, HashPassword(password, random_));
  account.with_key = false;
  account.terms_via = "signup-form";
  SessionGrant grant;
  account.also = [&](metastore::Stores& stores, const SignupResult& r) -> Result<void> {
    TM_TRY(stores.sessions().SpendLink(link.token_hash, clock_.NowMillis()));
    TM_TRY(stores.sessions().SetPassword({r.principal.id, hash, clock_.NowMillis()}));
    TM_ASSIGN(grant, Open(stores, r.principal, client));
    return audit_.RecordIn(stores, {0, 0, r.principal.id, r.org.id, "password.set", "principal",
                                    r.principal.id, "", "{}"});
  };
  auto created = signup_.CreateAccount(account);
  if (!created && created.error().code == ErrorCode::kConflict) {
    // A concurrent use of the same link spent it first.
    return Fail(
        Coded(ErrorCode::kUnauthenticated, "invalid_login_token", "This link was already used."));
  }
  TM_TRY(created);
  // Checked when the form was sent: a path under /app/ on this site.
  auto payload = nlohmann::json::parse(link.payload_json, nullptr, false);
  if (payload.is_object()) grant.return_to = payload.value("return_to", "");
  return grant;
}

// ---- login, refresh, logout

Result<SessionGrant> Sessions::Login(const std::string& raw_email, const std::string& password,
                                     const ClientInfo& client) {
  const std::string email = ToLower(Trim(raw_email));
  auto& rates = meta_.verification();
  const int64_t now = clock_.NowMillis();
  TM_ASSIGN(auto per_caller,
            rates.TakeRate("login-ip:" + client.ip, kAttemptsPerHour, kHourMs, now));
  if (!per_caller.allowed) {
    return Fail(
        RateLimited(per_caller.retry_after_ms, "Too many login attempts from your address; wait."));
  }
  // The attempt counts as a failure from before its hash is checked until it succeeds, so
  // guesses sent at once (to any replica) cannot outnumber the limit.
  const std::string failures = "login-fail:" + email;
  const std::string hold = random_.Uuid();
  TM_ASSIGN(auto per_address, rates.HoldRate(failures, kFailuresPerHour, kHourMs, now, hold));
  if (!per_address.allowed) {
    return Fail(RateLimited(per_address.retry_after_ms,
                            "Too many failed logins for this address; wait or reset the "
                            "password."));
  }
  // One argon2id verification whatever the address: unknown addresses and accounts
  // without a password compare against a dummy hash, so timing tells nothing.
  std::optional<metastore::Principal> principal;
  std::string hash = DummyPasswordHash();
  if (ValidEmail(email)) {
    auto found = meta_.principals().FindHumanByEmail(email);
    if (found) {
      auto stored = meta_.sessions().FindPassword(found->id);
      if (stored) {
        hash = stored->hash;
        principal = *found;
      } else if (stored.error().code != ErrorCode::kNotFound) {
        return Fail(stored.error());
      }
    } else if (found.error().code != ErrorCode::kNotFound) {
      return Fail(found.error());
    }
  }
  const bool ok = VerifyPassword(hash, password);
  if (!ok || !principal) {
    TM_TRY(audit_.Record({0, 0, principal ? principal->id : PrincipalId(""), "", "login.failure",
                          "email", email, "", "{}"}));
    return Fail(InvalidLogin());
  }
  TM_TRY(rates.ReleaseRate(failures, hold));  // the password was right: no failure
  if (principal->suspended) {
    return Fail(
        Coded(ErrorCode::kPermissionDenied, "principal_suspended", "This principal is suspended."));
  }
  return metastore::InTransaction(
      meta_, [&](metastore::WriteTransaction& txn) -> Result<SessionGrant> {
        TM_ASSIGN(auto grant, Open(txn, *principal, client));
        TM_TRY(audit_.RecordIn(txn, {0, 0, principal->id, "", "login.success", "session",
                                     grant.session.id, "", "{}"}));
        return grant;
      });
}

Result<SessionGrant> Sessions::Refresh(const std::string& refresh_token) {
  auto& store = meta_.sessions();
  const std::string hash = HashToken(refresh_token);
  auto session = store.SessionByRefresh(hash);
  if (!session) {
    if (session.error().code != ErrorCode::kNotFound) return Fail(session.error());
    return Fail(Coded(ErrorCode::kUnauthenticated, "invalid_refresh_token",
                      "This refresh token is unknown.")
                    .With("remedy", "Log in again."));
  }
  const int64_t now = clock_.NowMillis();
  if (session->revoked_ms != 0) {
    return Fail(Coded(ErrorCode::kUnauthenticated, "session_revoked",
                      "This session was logged out or revoked.")
                    .With("remedy", "Log in again."));
  }
  auto reused = [&]() -> Result<SessionGrant> {
    // A token that was already rotated out came back: someone else holds a copy.
    TM_TRY(RevokeAudited(session->id, session->principal_id, "session.reuse_revoked"));
    return Fail(Coded(ErrorCode::kUnauthenticated, "refresh_reused",
                      "This refresh token was already used; the session is revoked.")
                    .With("remedy", "Log in again."));
  };
  if (session->refresh_hash != hash) return reused();
  if (session->expires_ms <= now) {
    return Fail(Coded(ErrorCode::kUnauthenticated, "session_expired", "This session expired.")
                    .With("remedy", "Log in again."));
  }
  TM_ASSIGN(auto principal, meta_.principals().FindPrincipal(session->principal_id));
  if (principal.suspended) {
    return Fail(
        Coded(ErrorCode::kPermissionDenied, "principal_suspended", "This principal is suspended."));
  }
  SessionGrant g;
  g.refresh_token = NewToken(random_, "rt_");
  auto rotated =
      store.RotateRefresh(session->id, hash, HashToken(g.refresh_token), now, now + kSessionTtlMs);
  if (!rotated && rotated.error().code == ErrorCode::kConflict) return reused();
  TM_TRY(rotated);
  TM_ASSIGN(g.session, store.FindSession(session->id));
  TM_ASSIGN(auto token, auth_.IssueSessionToken(principal, g.session.id));
  g.access_token = std::move(token.access_token);
  g.expires_in_s = token.expires_in_s;
  g.refresh_expires_in_s = kSessionTtlMs / 1000;
  g.principal = principal;
  return g;
}

Result<std::string> Sessions::LogoutByRefresh(const std::string& refresh_token) {
  auto session = meta_.sessions().SessionByRefresh(HashToken(refresh_token));
  if (!session) {
    if (session.error().code != ErrorCode::kNotFound) return Fail(session.error());
    return Fail(Coded(ErrorCode::kUnauthenticated, "invalid_refresh_token",
                      "This refresh token is unknown."));
  }
  Caller caller{{}, "", session->id};
  caller.principal.id = session->principal_id;
  return Logout(caller);
}

Result<std::string> Sessions::Logout(const Caller& caller) {
  if (caller.session_id.empty()) {
    return Fail(Coded(ErrorCode::kInvalidInput, "missing_field",
                      "Send the session's refresh_token, or its access token in Authorization")
                    .With("field", "refresh_token"));
  }
  TM_TRY(RevokeAudited(caller.session_id, caller.principal.id, "logout"));
  return caller.session_id;
}

Result<void> Sessions::RevokeAudited(const std::string& session_id, const PrincipalId& principal,
                                     const std::string& action) {
  const int64_t now = clock_.NowMillis();
  return metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_TRY(txn.sessions().RevokeSession(session_id, now));
    return audit_.RecordIn(txn, {0, 0, principal, "", action, "session", session_id, "", "{}"});
  });
}

Result<std::vector<metastore::Session>> Sessions::List(const Caller& caller) {
  return meta_.sessions().LiveSessionsOf(caller.principal.id, clock_.NowMillis());
}

Result<std::string> Sessions::Revoke(const Caller& caller, const std::string& session_id) {
  auto session = meta_.sessions().FindSession(session_id);
  const int64_t now = clock_.NowMillis();
  if (!session || session->principal_id != caller.principal.id || session->revoked_ms != 0 ||
      session->expires_ms <= now) {
    if (!session && session.error().code != ErrorCode::kNotFound) return Fail(session.error());
    return Fail(
        Coded(ErrorCode::kNotFound, "session_not_found", "No live session of yours has this id")
            .With("remedy", "GET /v1/auth/sessions lists them."));
  }
  TM_TRY(RevokeAudited(session_id, caller.principal.id, "session.revoke"));
  return session_id;
}

// ---- reset and change

Result<LinkStarted> Sessions::StartReset(const std::string& raw_email,
                                         const std::string& caller_ip) {
  const std::string email = ToLower(Trim(raw_email));
  if (!ValidEmail(email)) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "email is not a valid address")
                    .With("field", "email"));
  }
  // The same checks and the same answer whether or not the address has an account.
  TM_TRY(TakeMailRate(email, caller_ip));
  auto principal = meta_.principals().FindHumanByEmail(email);
  if (principal && !principal->suspended) {
    TM_TRY(IssueLink(kResetPassword, email, Json{{"principal_id", principal->id.str()}}.dump(),
                     kResetTtlMs, "/app/reset", "Reset your Tablemere password",
                     "Open this link to choose a new Tablemere password (valid 30 minutes):"));
    TM_TRY(audit_.Record(
        {0, 0, principal->id, "", "password.reset_start", "principal", principal->id, "", "{}"}));
  } else if (!principal && principal.error().code != ErrorCode::kNotFound) {
    return Fail(principal.error());
  }
  return LinkStarted{email, verification_.delivery(), kResetTtlMs / 1000};
}

Result<PasswordResetDone> Sessions::Reset(const std::string& token, const std::string& password,
                                          const ClientInfo& client) {
  TM_ASSIGN(auto link, UsableLink(token, kResetPassword));
  TM_ASSIGN(auto principal, meta_.principals().FindHumanByEmail(link.email));
  TM_ASSIGN(auto names, OrgNamesOf(principal.id));
  TM_TRY(CheckPasswordRules(password, link.email, names));
  TM_ASSIGN(std::string hash, HashPassword(password, random_));
  const int64_t now = clock_.NowMillis();
  PasswordResetDone out;
  auto done =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        TM_TRY(txn.sessions().SpendLink(link.token_hash, now));
        auto before = txn.sessions().FindPassword(principal.id);
        if (!before && before.error().code != ErrorCode::kNotFound) return Fail(before.error());
        out.first_password = !before.has_value();
        TM_TRY(txn.sessions().SetPassword({principal.id, hash, now}));
        TM_ASSIGN(out.sessions_revoked, txn.sessions().RevokeSessionsOf(principal.id, "", now));
        TM_ASSIGN(out.grant, Open(txn, principal, client));
        return audit_.RecordIn(
            txn, {0, 0, principal.id, "", "password.reset", "principal", principal.id, "",
                  Json{{"sessions_revoked", out.sessions_revoked}}.dump()});
      });
  if (!done && done.error().code == ErrorCode::kConflict) {
    return Fail(
        Coded(ErrorCode::kUnauthenticated, "invalid_login_token", "This link was already used."));
  }
  TM_TRY(done);
  Notify(link.email, "Your Tablemere password was reset",
         "The password of your Tablemere account was reset and every session was logged out.\n"
         "If this was not you, reset it again now and tell your organisation's admins.\n");
  return out;
}

Result<PasswordChanged> Sessions::Change(const Caller& caller, const std::string& current,
                                         const std::string& replacement) {
  if (caller.principal.kind != metastore::PrincipalKind::kHuman) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                      "An agent has no password; only a person changes one."));
  }
  auto stored = meta_.sessions().FindPassword(caller.principal.id);
  if (!stored) {
    if (stored.error().code != ErrorCode::kNotFound) return Fail(stored.error());
    return Fail(Coded(ErrorCode::kConflict, "no_password_set", "This account has no password yet.")
                    .With("remedy",
                          "Set one through the reset link: POST "
                          "/v1/auth/password/reset/start."));
  }
  auto& rates = meta_.verification();
  const int64_t now = clock_.NowMillis();
  const std::string failures = "login-fail:" + caller.principal.email;
  const std::string hold = random_.Uuid();  // as in Login
  TM_ASSIGN(auto decision, rates.HoldRate(failures, kFailuresPerHour, kHourMs, now, hold));
  if (!decision.allowed) {
    return Fail(RateLimited(decision.retry_after_ms, "Too many wrong passwords; wait."));
  }
  if (!VerifyPassword(stored->hash, current)) {
    return Fail(
        Coded(ErrorCode::kUnauthenticated, "invalid_login", "The current password is wrong.")
            .With("field", "current_password"));
  }
  TM_TRY(rates.ReleaseRate(failures, hold));
  TM_ASSIGN(auto names, OrgNamesOf(caller.principal.id));
  TM_TRY(CheckPasswordRules(replacement, caller.principal.email, names));
  TM_ASSIGN(std::string hash, HashPassword(replacement, random_));
  PasswordChanged out{0, now};
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    // The password checked above is still the one in force, and the caller's session still
    // live: a reset that landed meanwhile (it revokes every session) is not undone by a
    // change that verified the password it replaced.
    TM_ASSIGN(auto in_force, txn.sessions().FindPassword(caller.principal.id));
    if (!crypto::ConstantTimeEquals(in_force.hash, stored->hash)) {
      return Fail(Coded(ErrorCode::kConflict, "password_changed",
                        "The password was changed or reset meanwhile; nothing was changed.")
                      .With("remedy", "Log in with the password in force, then change it."));
    }
    if (!caller.session_id.empty()) {
      TM_ASSIGN(auto session, txn.sessions().FindSession(caller.session_id));
      if (session.revoked_ms != 0) {
        return Fail(Coded(ErrorCode::kUnauthenticated, "session_revoked",
                          "This session was logged out or revoked.")
                        .With("remedy", "Log in again."));
      }
    }
    TM_TRY(txn.sessions().SetPassword({caller.principal.id, hash, now}));
    TM_ASSIGN(out.other_sessions_revoked,
              txn.sessions().RevokeSessionsOf(caller.principal.id, caller.session_id, now));
    return audit_.RecordIn(txn, {0, 0, caller.principal.id, "", "password.change", "principal",
                                 caller.principal.id, "", "{}"});
  }));
  Notify(caller.principal.email, "Your Tablemere password was changed",
         "The password of your Tablemere account was changed and your other sessions were "
         "logged out.\nIf this was not you, reset it now.\n");
  return out;
}

Result<std::vector<PendingLink>> Sessions::PendingLinks(const std::string& raw_email) {
  const std::string email = ToLower(Trim(raw_email));
  TM_ASSIGN(auto links, meta_.sessions().OpenLinksFor(email, clock_.NowMillis()));
  std::vector<PendingLink> out;
  for (const auto& link : links) {
    if (link.sealed_token.empty()) continue;
    auto sealed = crypto::Base64Decode(link.sealed_token);
    if (!sealed) continue;
    auto token = crypto::Open(options_.seal_key, *sealed, link.purpose + ":" + email);
    if (token) out.push_back({link.purpose, *token, link.expires_ms});
  }
  return out;
}

}  // namespace tablemere::accounts
