// Mailed codes: the email-code signup (POST /v1/signup/start + /verify) and key recovery
// (POST /v1/recover/start + /verify). Codes are six digits, live 10 minutes, allow five
// attempts, and are kept as keyed hashes; an address gets at most 5 codes an hour and
// one a minute. Without a mail sender (delivery "log") the code is also kept sealed so
// the operator's internal route can serve it to a development stack.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "accounts/api_key_service.h"
#include "accounts/audit_recorder.h"
#include "accounts/signup_service.h"
#include "common/clock.h"
#include "mail/mailer.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

struct SignupStart {
  std::string email;
  std::string workspace;
  std::string full_name;
  std::string organization_name;
  std::string handle;
};

struct SignupStarted {
  std::string email;
  std::string workspace;
  std::string delivery;                                // "email" | "log"
  std::optional<metastore::Organization> pending_org;  // the form's reserved organisation
  std::optional<metastore::Organization> will_join;    // a claimed open domain's
  int64_t expires_in_s = 0;
};

struct SignupVerify {
  std::string email;
  std::string code;
  bool accept_terms = false;
  std::string engine = "duckdb";
};

// Where a signup will land, decided before anything is mailed: a claimed open domain's
// organisation to join, or the form's organisation (its handle reserved, pending).
struct Landing {
  std::string email;  // lowercase
  std::string workspace;
  std::optional<metastore::Organization> pending_org;
  std::optional<metastore::Organization> will_join;
  std::string payload_json;  // what completing the signup needs (NewAccount's fields)
};

struct RecoveryStarted {
  std::string email;
  std::string delivery;
  int64_t expires_in_s = 0;
};

struct Recovered {
  IssuedApiKey key;
  PrincipalId principal_id;
};

// The codes a development stack's operator may read (GET /internal/signup-codes/{email}).
struct PendingCodes {
  std::optional<std::string> signup;
  std::optional<std::string> recover;
  int64_t expires_ms = 0;
};

struct VerificationOptions {
  mail::Mailer* mailer = nullptr;  // null: delivery "log"
  std::string code_key;            // keys the codes' hashes
  std::string seal_key;            // seals codes for the internal route (log delivery only)
};

class Verification {
 public:
  Verification(metastore::Metastore& meta, const Clock& clock, Random& random, AuditRecorder& audit,
               SignupService& signup, ApiKeyService& api_keys, VerificationOptions options)
      : meta_(meta),
        clock_(clock),
        random_(random),
        audit_(audit),
        signup_(signup),
        api_keys_(api_keys),
        options_(std::move(options)) {}

  // Errors: kInvalidInput (invalid_value email/handle with reason and suggestion),
  // kConflict (handle_taken, suggestion), kAlreadyExists (already_exists), kRateLimited
  // (rate_limited, retry_after_seconds), kUnavailable (mail_error).
  Result<SignupStarted> StartSignup(const SignupStart& request);
  // Errors: kNotFound (no_pending_signup), code_expired (410), kUnauthenticated
  // (invalid_code, attempts_left), kInvalidInput (terms_required, unsupported_engine),
  // kAlreadyExists.
  Result<SignupResult> VerifySignup(const SignupVerify& request);
  // The same answer whether or not the address has an account. Errors: kRateLimited.
  Result<RecoveryStarted> StartRecovery(const std::string& email);
  // Errors: kNotFound (no_pending_recovery), code_expired (410), kUnauthenticated
  // (invalid_code, attempts_left).
  Result<Recovered> VerifyRecovery(const std::string& email, const std::string& code);
  Result<PendingCodes> Codes(const std::string& email);
  // The checks every signup start makes (address, handle, no account yet), then `rate`,
  // then the landing (reserving the form's organisation). Errors: those of StartSignup.
  Result<Landing> Land(const SignupStart& request,
                       const std::function<Result<void>(const std::string&)>& rate);
  std::string delivery() const;

 private:
  // Refuses a start for an address that got a code under a minute ago or five this hour.
  Result<void> CheckStartRate(const std::string& email);
  // Stores a new code and mails it; returns nothing of the code.
  Result<void> IssueCode(const std::string& purpose, const std::string& email,
                         const std::string& payload_json, const std::string& subject,
                         const std::string& intro);
  // The pending code when `code` matches; the typed failures otherwise.
  Result<metastore::PendingCode> CheckCode(const std::string& purpose, const std::string& email,
                                           const std::string& code, const char* missing_code);
  std::string HashCode(const std::string& purpose, const std::string& email,
                       const std::string& code) const;

  metastore::Metastore& meta_;
  const Clock& clock_;
  Random& random_;
  AuditRecorder& audit_;
  SignupService& signup_;
  ApiKeyService& api_keys_;
  VerificationOptions options_;
};

}  // namespace tablemere::accounts
