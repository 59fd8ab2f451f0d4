// Authenticator: authenticating the control API's callers (an API key, or an access
// token from POST /v1/tokens) and issuing those tokens.
#include "accounts/authenticator.h"
#include "accounts/credentials.h"
#include "accounts/errors.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "identity/oidc.h"
#include "identity/signing_keys.h"

namespace tablemere::accounts {
namespace {

// Access tokens live 900 s (API reference); a revoked key or a suspended principal is
// refused at once all the same, because every token use checks both.
constexpr int64_t kTokenSeconds = 900;
// Ten wrong secrets for one key id from one address within ten minutes (API reference).
constexpr int kWrongSecrets = 10;
constexpr int64_t kWrongSecretWindowMs = 10 * 60 * 1000;
constexpr int64_t kTouchEveryMs = 60 * 1000;

Error InvalidKey() {
  return Coded(ErrorCode::kUnauthenticated, "invalid_api_key",
               "The API key is missing or wrong. Send Authorization: Bearer al_live_…")
      .With("remedy", "tablemere login, or tablemere recover, gives you a key.");
}

}  // namespace

Result<Caller> Authenticator::Authenticate(const std::string& bearer, const std::string& address) {
  if (external_ != nullptr && !bearer.starts_with("al_live_") && external_->Claims(bearer)) {
    return ExternalCaller(bearer);
  }
  if (!bearer.starts_with("al_live_") && signing_keys_ != nullptr &&
      std::count(bearer.begin(), bearer.end(), '.') == 2) {
    // ---- an access token: signature, expiry, then the key and principal still live
    auto claims = signing_keys_->Verify(bearer, issuer_);
    if (!claims) {
      // The reference has one code for a credential that does not open the API.
      return Fail(Coded(ErrorCode::kUnauthenticated, "invalid_api_key", claims.error().message)
                      .With("remedy", "Exchange your API key for a new token: POST /v1/tokens."));
    }
    if (claims->extra.contains("sid")) return SessionCaller(*claims);
    auto key = meta_.principals().FindApiKey(claims->extra["akid"]);
    if (!key || key->principal_id != claims->subject) return Fail(InvalidKey());
    if (key->revoked) {
      return Fail(Coded(ErrorCode::kUnauthenticated, "api_key_revoked",
                        "The API key this token came from was revoked."));
    }
    TM_ASSIGN(auto principal, meta_.principals().FindPrincipal(key->principal_id));
    if (principal.suspended) {
      return Fail(Coded(ErrorCode::kPermissionDenied, "principal_suspended",
                        "This principal is suspended."));
    }
    return Caller{std::move(principal), key->key_id, ""};
  }

  // ---- an API key: its id finds the hash, compared in constant time
  auto parsed = ParseApiKey(bearer);
  if (!parsed) return Fail(InvalidKey());
  const int64_t now = clock_.NowMillis();
  const std::string bucket = "bad-secret:" + parsed->key_id + ":" + address;
  TM_ASSIGN(auto decision,
            meta_.verification().PeekRate(bucket, kWrongSecrets, kWrongSecretWindowMs, now));
  if (!decision.allowed) {
    return Fail(
        Coded(ErrorCode::kRateLimited, "rate_limited",
              "Too many wrong secrets for this key from your address; wait.")
            .With("retry_after_seconds", std::to_string((decision.retry_after_ms + 999) / 1000)));
  }
  auto key = meta_.principals().FindApiKey(parsed->key_id);
  if (!key) {
    if (key.error().code == ErrorCode::kNotFound) return Fail(InvalidKey());
    return Fail(key.error());
  }
  if (!crypto::ConstantTimeEquals(key->secret_hash, HashApiSecret(parsed->secret))) {
    TM_TRY(meta_.verification().RecordRate(bucket, now));
    return Fail(InvalidKey());
  }
  if (key->revoked) {
    return Fail(Coded(ErrorCode::kUnauthenticated, "api_key_revoked", "This API key was revoked."));
  }
  // last_used_at to the minute: at most one write a minute per key, not one per request.
  if (now - key->last_used_ms >= kTouchEveryMs) {
    TM_TRY(meta_.principals().TouchApiKey(key->key_id, now));
  }
  TM_ASSIGN(auto principal, meta_.principals().FindPrincipal(key->principal_id));
  if (principal.suspended) {
    return Fail(
        Coded(ErrorCode::kPermissionDenied, "principal_suspended", "This principal is suspended."));
  }
  return Caller{std::move(principal), key->key_id, ""};
}

Result<Caller> Authenticator::SessionCaller(const identity::Claims& claims) {
  auto session = meta_.sessions().FindSession(claims.extra.at("sid"));
  if (!session || session->principal_id != claims.subject) {
    if (!session && session.error().code != ErrorCode::kNotFound) return Fail(session.error());
    return Fail(InvalidKey());
  }
  if (session->revoked_ms != 0) {
    return Fail(Coded(ErrorCode::kUnauthenticated, "session_revoked",
                      "This session was logged out or revoked.")
                    .With("remedy", "Log in again."));
  }
  if (session->expires_ms <= clock_.NowMillis()) {
    return Fail(Coded(ErrorCode::kUnauthenticated, "session_expired", "This session expired.")
                    .With("remedy", "Log in again."));
  }
  TM_ASSIGN(auto principal, meta_.principals().FindPrincipal(session->principal_id));
  if (principal.suspended) {
    return Fail(
        Coded(ErrorCode::kPermissionDenied, "principal_suspended", "This principal is suspended."));
  }
  return Caller{std::move(principal), "", session->id};
}

Result<IssuedToken> Authenticator::IssueSessionToken(const metastore::Principal& principal,
                                                     const std::string& session_id) {
  if (signing_keys_ == nullptr) {
    return Fail(ErrorCode::kNotImplemented, "this deployment issues no access tokens");
  }
  int64_t now_s = clock_.NowMillis() / 1000;
  identity::Claims claims{issuer_,
                          principal.id,
                          now_s,
                          now_s + kTokenSeconds,
                          {{"kind", metastore::Name(principal.kind)}, {"sid", session_id}}};
  if (!principal.email.empty()) claims.extra["email"] = principal.email;
  TM_ASSIGN(std::string token, signing_keys_->Issue(claims));
  return IssuedToken{std::move(token), kTokenSeconds, principal.id};
}

Result<IssuedToken> Authenticator::IssueToken(const std::string& api_key,
                                              const std::string& address) {
  if (signing_keys_ == nullptr) {
    return Fail(ErrorCode::kNotImplemented, "this deployment issues no access tokens");
  }
  // The exchange takes an API key, never a token (a token cannot extend itself).
  if (!api_key.starts_with("al_live_")) return Fail(InvalidKey());
  TM_ASSIGN(auto caller, Authenticate(api_key, address));
  int64_t now_s = clock_.NowMillis() / 1000;
  identity::Claims claims{
      issuer_,
      caller.principal.id,
      now_s,
      now_s + kTokenSeconds,
      {{"kind", metastore::Name(caller.principal.kind)}, {"akid", caller.key_id}}};
  if (!caller.principal.email.empty()) claims.extra["email"] = caller.principal.email;
  TM_ASSIGN(std::string token, signing_keys_->Issue(claims));
  return IssuedToken{std::move(token), kTokenSeconds, caller.principal.id};
}

}  // namespace tablemere::accounts
