// Accounts: signup, API-key authentication, organisations, agents and warehouse
// access levels, and the connection recipes engines run.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accounts/access_service.h"
#include "accounts/agent_service.h"
#include "accounts/api_key_service.h"
#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "accounts/credentials.h"
#include "accounts/errors.h"
#include "accounts/grant_service.h"
#include "accounts/idempotency_records.h"
#include "accounts/limits.h"
#include "accounts/org_rules.h"
#include "accounts/org_service.h"
#include "accounts/project_service.h"
#include "accounts/request_origins.h"
#include "accounts/terms_service.h"
#include "accounts/usage_service.h"
#include "accounts/warehouse_service.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"
#include "objectstore/registered_store.h"

namespace tablemere::identity {
class SigningKeys;
class ExternalIssuers;
struct Claims;
struct ExternalIdentity;
}  // namespace tablemere::identity

namespace tablemere::accounts {

struct PublicUrls {
  std::string api;      // "http://127.0.0.1:8080"
  std::string catalog;  // "http://127.0.0.1:8181"
  std::string s3;       // "http://127.0.0.1:9000"
};

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

enum class EngineSet { kSignup, kRecipes };
// kInvalidInput (unsupported_engine, with `available`) unless `engine` is one of `set`:
// duckdb, pyiceberg, spark, and for recipes also snowflake.
Result<void> CheckEngine(const std::string& engine, EngineSet set = EngineSet::kSignup);

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

struct Connection {
  std::string engine;
  WarehouseAccess access;
  std::string identity;       // t-<id> or t-<id>-ro
  std::string client_secret;  // the identity's secret
  PublicUrls urls;
  std::string sql;                          // duckdb
  std::string python;                       // pyiceberg
  std::map<std::string, std::string> conf;  // spark
  std::vector<std::string> notes;
};

struct IssuedToken {
  std::string access_token;
  int64_t expires_in_s = 0;
  PrincipalId principal_id;
};

struct HandleAvailability {
  std::string handle;
  bool valid = false;
  bool available = false;
  std::string reason;  // "invalid" | "reserved" | "taken" | "" when free
  std::string suggestion;
};

class AccountService {
 public:
  AccountService(metastore::Metastore& meta, objectstore::RegisteredStore& objects,
                 const Clock& clock, Random& random, const IdentitySecrets& secrets,
                 PublicUrls urls, bool unverified_signup_allowed,
                 identity::SigningKeys* signing_keys = nullptr);

  // Errors: kPermissionDenied (detail code verification_required) when the one-call
  // signup is not allowed; kInvalidInput (field); kAlreadyExists.
  Result<SignupResult> Signup(const SignupRequest& request);
  // Creates the person, its key, organisation membership and (in its own organisation)
  // a project and warehouse `lake`, in one transaction. Errors: kAlreadyExists.
  Result<SignupResult> CreateAccount(const NewAccount& account);
  metastore::Metastore& metastore() { return meta_; }
  // ---- operator (internal routes). Errors: kNotFound.
  Result<metastore::Principal> SetSuspended(const PrincipalId& principal, bool suspended,
                                            const std::string& request_id);
  const Clock& clock() const { return clock_; }
  Random& random() { return random_; }
  // Errors: kUnauthenticated (code invalid_api_key / api_key_revoked), kPermissionDenied
  // (principal_suspended).
  // An API key (al_live_…) or an access token from POST /v1/tokens, presented from
  // `address`. Errors: kUnauthenticated (invalid_api_key, api_key_revoked,
  // invalid_token), kPermissionDenied (principal_suspended), kRateLimited (10 wrong
  // secrets for one key id from one address within 10 minutes).
  Result<Caller> Authenticate(const std::string& bearer, const std::string& address);
  // An RS256 access token for the API, 900 s (tokens.cc). Same errors as Authenticate.
  Result<IssuedToken> IssueToken(const std::string& api_key, const std::string& address);
  // An access token of a login session (claims sub/email/kind/sid), 900 s.
  Result<IssuedToken> IssueSessionToken(const metastore::Principal& principal,
                                        const std::string& session_id);
  // Trust tokens of these external OpenID Connect issuers (null or empty: none).
  void SetExternalIssuers(identity::ExternalIssuers* issuers) { external_ = issuers; }
  identity::ExternalIssuers* external_issuers() { return external_; }
  // The signing keys (null when tokens are not served).
  identity::SigningKeys* signing_keys() { return signing_keys_; }
  Result<Connection> BuildConnection(const WarehouseAccess& access, const std::string& engine);
  std::string SecretOf(const metastore::Warehouse& w, bool read_only) const {
    return secrets_.SecretFor(IdentityName(w.id, read_only), w.credential_generation);
  }
  // Audit events: the caller's own, or with `org_id` an organisation's (admins see every
  // event of the organisation, members their own). `action` is a name or "prefix*".
  Result<std::vector<metastore::AuditEvent>> Audit(const Caller& caller, const std::string& org_id,
                                                   const std::string& action, int64_t since_ms,
                                                   int limit);
  // Records an event; failures to record are reported to the caller (the action must not
  // silently go unaudited).
  Result<void> Record(metastore::AuditEvent event) { return audit_.Record(std::move(event)); }
  // Records an event inside the transaction of the action it records.
  Result<void> RecordIn(metastore::Stores& stores, metastore::AuditEvent event) {
    return audit_.RecordIn(stores, std::move(event));
  }
  // Organisations, warehouses and the caller's level on them.
  AccessService& access() { return access_; }
  // Idempotency-Key records of the create routes.
  IdempotencyRecords& idempotency() { return idempotency_; }
  // Projects, and the warehouses of one with the caller's level on each.
  ProjectService& projects() { return projects_; }
  // Creating, deleting, publishing and rotating warehouses.
  WarehouseService& warehouses() { return warehouses_; }
  // Grants on a warehouse.
  GrantService& grants() { return grants_; }
  // Agents (tokens) of an organisation.
  AgentService& agents() { return agents_; }
  // Organisations: their domains, members and invitations.
  OrgService& orgs() { return orgs_; }
  // Storage usage, metering and the storage quota.
  UsageService& usage() { return usage_; }
  // The Terms and deleting one's own account.
  TermsService& terms() { return terms_; }
  // API keys: minting, and a caller's own (and the operator's revocation).
  ApiKeyService& api_keys() { return api_keys_; }
  const PublicUrls& urls() const { return urls_; }

  const Limits& limits() const { return limits_; }
  // ---- POST /v1/onboard (onboard.cc). Errors: kInvalidInput (terms_required,
  // invalid_value handle), kConflict (handle_taken).
  Result<Onboarded> Onboard(const Caller& caller, const OnboardRequest& request);
  // ---- organisation handles (api_keys.cc's neighbour, handles.h holds the rules)
  Result<HandleAvailability> CheckHandleAvailable(const std::string& handle);
  // The same for the signup form as a person types, limited per caller address (each
  // check may look up many candidate handles). Errors: kRateLimited (rate_limited).
  Result<HandleAvailability> CheckHandleFrom(const std::string& handle, const std::string& address);

  // The addresses of the requests being served, which audit events record (the control
  // API notes each request's while serving it).
  RequestOrigins& request_origins() { return request_origins_; }

 private:
  // The person an external issuer's token names (external.cc), created on first sight.
  Result<Caller> ExternalCaller(const std::string& token);
  Result<void> CreateExternalPerson(const identity::ExternalIdentity& id);
  // The caller of a session's access token, while the session is live.
  Result<Caller> SessionCaller(const identity::Claims& claims);

  metastore::Metastore& meta_;
  objectstore::RegisteredStore& objects_;
  const Clock& clock_;
  Random& random_;
  const IdentitySecrets& secrets_;
  PublicUrls urls_;
  bool unverified_signup_allowed_;
  Limits limits_;
  identity::SigningKeys* signing_keys_;
  identity::ExternalIssuers* external_ = nullptr;
  RequestOrigins request_origins_;
  AccessService access_{meta_};
  AuditRecorder audit_{meta_, clock_, request_origins_};
  OrgService orgs_{meta_, clock_, random_, audit_, access_};
  UsageService usage_{meta_, objects_, clock_, limits_, audit_};
  TermsService terms_{meta_, clock_, audit_};
  ApiKeyService api_keys_{meta_, clock_, random_, audit_};
  AgentService agents_{meta_, clock_, random_, audit_, access_, api_keys_};
  IdempotencyRecords idempotency_{meta_, clock_};
  ProjectService projects_{meta_, clock_, random_, limits_, audit_, access_, idempotency_};
  WarehouseService warehouses_{meta_,  objects_, clock_, random_,   limits_,
                               audit_, access_,  usage_, projects_, idempotency_};
  GrantService grants_{meta_, clock_, audit_, access_, orgs_};
};

}  // namespace tablemere::accounts
