#include "accounts/verification.h"

#include <nlohmann/json.hpp>

#include "accounts/errors.h"
#include "accounts/handles.h"
#include "accounts/input_checks.h"
#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::accounts {
namespace {

using Json = nlohmann::json;

constexpr int kCodeDigits = 6;
// A code is short to type, so it is short-lived and allows few guesses (API reference).
constexpr int64_t kCodeTtlMs = 10 * 60 * 1000;
constexpr int kCodeAttempts = 5;
// Mail is not a free resource: 5 codes an hour per address, and one a minute.
constexpr int kStartsPerHour = 5;
constexpr int64_t kHourMs = 3600 * 1000;
constexpr int64_t kResendMs = 60 * 1000;

constexpr char kSignup[] = "signup";
constexpr char kRecover[] = "recover";

// A uniformly drawn six-digit code: four random bytes, rejecting the top of the range
// that would favour small codes.
std::string NewCode(Random& random) {
  constexpr uint32_t kRange = 1'000'000;
  constexpr uint32_t kLimit = UINT32_MAX - (UINT32_MAX % kRange);
  while (true) {
    std::string b = random.Bytes(4);
    uint32_t v = (uint32_t(uint8_t(b[0])) << 24) | (uint32_t(uint8_t(b[1])) << 16) |
                 (uint32_t(uint8_t(b[2])) << 8) | uint32_t(uint8_t(b[3]));
    if (v >= kLimit) continue;
    std::string code = std::to_string(v % kRange);
    return std::string(kCodeDigits - code.size(), '0') + code;
  }
}

}  // namespace

std::string Verification::delivery() const {
  return options_.mailer ? std::string(options_.mailer->Delivery()) : "log";
}

std::string Verification::HashCode(const std::string& purpose, const std::string& email,
                                   const std::string& code) const {
  return crypto::HexEncode(
      crypto::HmacSha256(options_.code_key, purpose + ":" + email + ":" + code));
}

Result<void> Verification::CheckStartRate(const std::string& email) {
  auto& store = meta_.verification();
  const int64_t now = clock_.NowMillis();
  for (const char* purpose : {kSignup, kRecover}) {
    auto pending = store.FindCode(purpose, email);
    if (pending && pending->created_ms + kResendMs > now) {
      return Fail(RateLimited(pending->created_ms + kResendMs - now,
                              "A code was sent less than a minute ago; use it or wait."));
    }
  }
  TM_ASSIGN(auto decision, store.TakeRate("code-start:" + email, kStartsPerHour, kHourMs, now));
  if (!decision.allowed) {
    return Fail(RateLimited(decision.retry_after_ms,
                            "Five codes an hour per address: wait before asking again."));
  }
  return {};
}

Result<void> Verification::IssueCode(const std::string& purpose, const std::string& email,
                                     const std::string& payload_json, const std::string& subject,
                                     const std::string& intro) {
  const std::string code = NewCode(random_);
  const int64_t now = clock_.NowMillis();
  metastore::PendingCode pending{
      purpose, email, HashCode(purpose, email, code), "", payload_json, now, now + kCodeTtlMs, 0};
  if (delivery() == "log") {
    pending.sealed_code = crypto::Base64Encode(
        crypto::Seal(options_.seal_key, random_.Bytes(12), code, purpose + ":" + email));
  }
  TM_TRY(meta_.verification().PutCode(pending));
  if (options_.mailer) {
    auto sent =
        options_.mailer->Send({email, subject,
                               intro + "\n\n    " + code +
                                   "\n\nThe code is valid for 10 minutes. If you did not ask "
                                   "for it, ignore this message.\n"});
    if (!sent) {
      (void)meta_.verification().DeleteCode(purpose, email);
      return Fail(Coded(ErrorCode::kUnavailable, "mail_error",
                        "The code could not be mailed; try again shortly."));
    }
  }
  return {};
}

Result<Landing> Verification::Land(const SignupStart& r,
                                   const std::function<Result<void>(const std::string&)>& rate) {
  // ---- validate
  Landing out;
  out.email = ToLower(Trim(r.email));
  const std::string& email = out.email;
  if (!ValidEmail(email)) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "email is not a valid address")
                    .With("field", "email"));
  }
  const bool form = !r.organization_name.empty() || !r.handle.empty();
  std::string handle = r.handle.empty() ? SlugFor(r.organization_name) : r.handle;
  if (form) {
    TM_ASSIGN(auto check, signup_.CheckHandleAvailable(handle));
    if (!check.valid) {
      return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value",
                        "The handle '" + handle + "' is " + check.reason)
                      .With("field", "handle")
                      .With("reason", check.reason)
                      .With("suggestion", check.suggestion));
    }
    if (!check.available) {
      return Fail(
          Coded(ErrorCode::kConflict, "handle_taken", "The handle '" + handle + "' is taken")
              .With("field", "handle")
              .With("suggestion", check.suggestion));
    }
  }
  auto existing = meta_.principals().FindHumanByEmail(email);
  if (existing) {
    return Fail(Coded(ErrorCode::kAlreadyExists, "already_exists",
                      "This address has an account; log in or recover its key instead.")
                    .With("remedy", "tablemere login, or tablemere recover --email " + email));
  }
  if (existing.error().code != ErrorCode::kNotFound) return Fail(existing.error());
  TM_TRY(rate(email));

  // ---- where the account will land: a claimed open domain, or the form's organisation
  out.workspace = r.workspace.empty() ? email.substr(0, email.find('@')) : r.workspace;
  Json payload = {{"workspace", out.workspace}, {"full_name", r.full_name}};
  TM_ASSIGN(auto owner, meta_.memberships().DomainOwner(DomainOf(email)));
  if (owner) {
    TM_ASSIGN(auto org, meta_.orgs().FindOrg(owner->org_id));
    if (org.domain_join && org.status == "active") {
      payload["join_org"] = org.id.str();
      out.will_join = org;
    }
  }
  if (!out.will_join && form) {
    // The handle is reserved now; verifying the address activates the organisation.
    metastore::Organization pending{OrgId("o_" + crypto::HexEncode(random_.Bytes(8))),
                                    r.organization_name.empty() ? handle : r.organization_name,
                                    handle,
                                    clock_.NowMillis(),
                                    "pending",
                                    false};
    auto reserved =
        metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
          TM_TRY(txn.orgs().CreateOrg(pending));
          return audit_.RecordIn(
              txn, {0, 0, "", pending.id, "org.reserve", "org", pending.id, "", "{}"});
        });
    if (!reserved && reserved.error().code == ErrorCode::kAlreadyExists) {
      return Fail(
          Coded(ErrorCode::kConflict, "handle_taken", "The handle '" + handle + "' is taken")
              .With("field", "handle"));
    }
    TM_TRY(reserved);
    payload["pending_org"] = pending.id.str();
    out.pending_org = pending;
  }
  out.payload_json = payload.dump();
  return out;
}

Result<SignupStarted> Verification::StartSignup(const SignupStart& r) {
  TM_ASSIGN(auto landing,
            Land(r, [this](const std::string& email) { return CheckStartRate(email); }));
  TM_TRY(IssueCode(kSignup, landing.email, landing.payload_json, "Your Tablemere signup code",
                   "Your code to finish signing up to Tablemere:"));
  TM_TRY(audit_.Record({0, 0, "", "", "signup.start", "email", landing.email, "", "{}"}));
  return SignupStarted{landing.email,       landing.workspace, delivery(),
                       landing.pending_org, landing.will_join, kCodeTtlMs / 1000};
}

Result<metastore::PendingCode> Verification::CheckCode(const std::string& purpose,
                                                       const std::string& email,
                                                       const std::string& code,
                                                       const char* missing_code) {
  auto& store = meta_.verification();
  auto pending = store.FindCode(purpose, email);
  if (!pending) {
    if (pending.error().code != ErrorCode::kNotFound) return Fail(pending.error());
    return Fail(Coded(ErrorCode::kNotFound, missing_code,
                      "No code is pending for this address; ask for one first."));
  }
  if (pending->expires_ms <= clock_.NowMillis()) {
    TM_TRY(store.DeleteCode(purpose, email));
    return Fail(
        Coded(ErrorCode::kNotFound, "code_expired", "The code has expired; ask for a new one."));
  }
  // Every check takes an attempt before it compares, atomically, so guesses sent at once
  // (to any replica) cannot together try more than the attempts allowed.
  auto attempts = store.AddCodeAttempt(purpose, email);
  if (!attempts) {
    if (attempts.error().code != ErrorCode::kNotFound) return Fail(attempts.error());
    return Fail(Coded(ErrorCode::kNotFound, missing_code,
                      "No code is pending for this address; ask for one first."));
  }
  const int left = std::max(0, kCodeAttempts - *attempts);
  const bool right = crypto::ConstantTimeEquals(pending->code_hash, HashCode(purpose, email, code));
  if (!right || *attempts > kCodeAttempts) {
    if (left == 0) TM_TRY(store.DeleteCode(purpose, email));
    return Fail(Coded(ErrorCode::kUnauthenticated, "invalid_code",
                      left > 0 ? "The code is wrong." : "The code is wrong; ask for a new one.")
                    .With("attempts_left", std::to_string(left)));
  }
  return *pending;
}

Result<SignupResult> Verification::VerifySignup(const SignupVerify& r) {
  const std::string email = ToLower(Trim(r.email));
  // Checked before the code, so a form mistake costs no attempt.
  if (!r.accept_terms) {
    return Fail(
        Coded(ErrorCode::kInvalidInput, "terms_required", "accept_terms must be exactly true")
            .With("field", "accept_terms"));
  }
  TM_TRY(CheckEngine(r.engine));
  TM_ASSIGN(auto pending, CheckCode(kSignup, email, r.code, "no_pending_signup"));
  TM_ASSIGN(auto result, signup_.CreateAccount(NewAccountFrom(email, pending.payload_json)));
  TM_TRY(meta_.verification().DeleteCode(kSignup, email));
  TM_TRY(audit_.Record({0, 0, result.principal.id, result.org.id, "signup.verify", "principal",
                        result.principal.id, "", "{}"}));
  return result;
}

Result<RecoveryStarted> Verification::StartRecovery(const std::string& raw_email) {
  const std::string email = ToLower(Trim(raw_email));
  if (!ValidEmail(email)) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "email is not a valid address")
                    .With("field", "email"));
  }
  // The same checks and the same answer whether or not the address has an account.
  TM_TRY(CheckStartRate(email));
  auto principal = meta_.principals().FindHumanByEmail(email);
  if (principal && !principal->suspended) {
    TM_TRY(IssueCode(kRecover, email, Json{{"principal_id", principal->id.str()}}.dump(),
                     "Your Tablemere recovery code", "Your code to mint a new Tablemere API key:"));
    TM_TRY(audit_.Record(
        {0, 0, principal->id, "", "recovery.start", "principal", principal->id, "", "{}"}));
  } else if (!principal && principal.error().code != ErrorCode::kNotFound) {
    return Fail(principal.error());
  }
  return RecoveryStarted{email, delivery(), kCodeTtlMs / 1000};
}

Result<Recovered> Verification::VerifyRecovery(const std::string& raw_email,
                                               const std::string& code) {
  const std::string email = ToLower(Trim(raw_email));
  TM_ASSIGN(auto pending, CheckCode(kRecover, email, code, "no_pending_recovery"));
  TM_ASSIGN(auto principal, meta_.principals().FindHumanByEmail(email));
  Recovered out{api_keys_.Mint(principal.id, "recovered"), principal.id};
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    // Spent here, with the key: of requests presenting the code at once, one mints.
    TM_ASSIGN(bool spent, txn.verification().SpendCode(kRecover, email, pending.code_hash));
    if (!spent) {
      return Fail(Coded(ErrorCode::kNotFound, "no_pending_recovery",
                        "The code was used already; ask for a new one."));
    }
    TM_TRY(txn.principals().CreateApiKey(out.key.record));
    return audit_.RecordIn(txn, {0, 0, principal.id, "", "recovery.verify", "api_key",
                                 out.key.record.key_id, "", "{}"});
  }));
  return out;
}

Result<PendingCodes> Verification::Codes(const std::string& raw_email) {
  const std::string email = ToLower(Trim(raw_email));
  PendingCodes out;
  for (const char* purpose : {kSignup, kRecover}) {
    auto pending = meta_.verification().FindCode(purpose, email);
    if (!pending || pending->sealed_code.empty()) continue;
    auto sealed = crypto::Base64Decode(pending->sealed_code);
    if (!sealed) continue;
    auto code = crypto::Open(options_.seal_key, *sealed, std::string(purpose) + ":" + email);
    if (!code) continue;
    (purpose == std::string(kSignup) ? out.signup : out.recover) = *code;
    out.expires_ms = std::max(out.expires_ms, pending->expires_ms);
  }
  return out;
}

}  // namespace tablemere::accounts
