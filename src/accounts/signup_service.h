// Accounts coming into being: the one-call signup, the account a verified code or a
// signup form creates, POST /v1/onboard for a person who has none yet, and the handle
// checks of the signup forms (signup.cc, onboard.cc, handle_checks.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "accounts/access_service.h"
#include "accounts/api_key_service.h"
#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "accounts/org_service.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"
#include "objectstore/registered_store.h"

namespace tablemere::accounts {

struct SignupRequest {
  std::string email;
  std::string workspace;
  std::string engine = "duckdb";
  bool accept_terms = false;
};

struct SignupResult {
  std::string api_key;  // shown once
  metastore::Principal principal;
  metastore::Organization org;
  metastore::Role role = metastore::Role::kAdmin;
  std::string joined_via;  // "signup" | "signup-form" | "domain"
  // In the person's own organisation: its first project and warehouse `lake`. Absent
  // when the signup joined a claimed domain's organisation.
  std::optional<metastore::Project> project;
  std::optional<metastore::Warehouse> warehouse;
};

// An account to create (after the one-call signup's checks, or a verified code).
struct NewAccount {
  std::string email;  // lowercase, validated
  std::string workspace;
  std::string display_name;
  std::optional<OrgId> pending_org;  // the signup form's reserved organisation: activated
  std::optional<OrgId> join_org;     // a claimed open domain's organisation: joined
  bool with_key = true;              // false: the signup form's path (a session, no key)
  std::string terms_via = "signup";
  // Runs inside the account's transaction (the form's password and first session).
  std::function<Result<void>(metastore::Stores&, const SignupResult&)> also;
};

// The account a verified signup start asked for (its payload: workspace, full_name and
// the organisation it lands in).
NewAccount NewAccountFrom(const std::string& email, const std::string& payload_json);

struct OnboardRequest {
  std::string engine = "duckdb";
  bool accept_terms = false;
  std::string organization_name;
  std::string handle;
  std::string org_id;
};

struct Onboarded {
  bool created = false;
  metastore::Organization org;
  metastore::Role role = metastore::Role::kAdmin;
  std::optional<metastore::Project> project;  // when created
  WarehouseAccess access;
};

struct HandleAvailability {
  std::string handle;
  bool valid = false;
  bool available = false;
  std::string reason;  // "invalid" | "reserved" | "taken" | "" when free
  std::string suggestion;
};

class SignupService {
 public:
  SignupService(metastore::Metastore& meta, objectstore::RegisteredStore& objects,
                const Clock& clock, Random& random, AuditRecorder& audit, AccessService& access,
                OrgService& orgs, ApiKeyService& api_keys, bool unverified_signup_allowed)
      : meta_(meta),
        objects_(objects),
        clock_(clock),
        random_(random),
        audit_(audit),
        access_(access),
        orgs_(orgs),
        api_keys_(api_keys),
        unverified_signup_allowed_(unverified_signup_allowed) {}

  // The one-call signup of a local stack. Errors: kPermissionDenied (detail code
  // verification_required) when it is not allowed; kInvalidInput (field); kAlreadyExists.
  Result<SignupResult> Signup(const SignupRequest& request);
  // Creates the person, its key, organisation membership and (in its own organisation)
  // a project and warehouse `lake`, in one transaction. Errors: kAlreadyExists.
  Result<SignupResult> CreateAccount(const NewAccount& account);
  // POST /v1/onboard (onboard.cc). Errors: kInvalidInput (terms_required, invalid_value
  // handle), kConflict (handle_taken).
  Result<Onboarded> Onboard(const Caller& caller, const OnboardRequest& request);
  // Organisation handles (handle_checks.cc; handles.h holds the rules).
  Result<HandleAvailability> CheckHandleAvailable(const std::string& handle);
  // The same for the signup form as a person types, limited per caller address (each
  // check may look up many candidate handles). Errors: kRateLimited (rate_limited).
  Result<HandleAvailability> CheckHandleFrom(const std::string& handle, const std::string& address);

 private:
  // One attempt; a conflict with detail domain_join_closed when the organisation it was to
  // join stopped admitting the address's domain.
  Result<SignupResult> CreateAccountOnce(const NewAccount& account);
  // One attempt; a conflict with detail onboard_raced when a concurrent onboarding of the
  // caller created what it was about to.
  Result<Onboarded> OnboardOnce(const Caller& caller, const OnboardRequest& request);

  metastore::Metastore& meta_;
  objectstore::RegisteredStore& objects_;
  const Clock& clock_;
  Random& random_;
  AuditRecorder& audit_;
  AccessService& access_;
  OrgService& orgs_;
  ApiKeyService& api_keys_;
  bool unverified_signup_allowed_;
};

}  // namespace tablemere::accounts
