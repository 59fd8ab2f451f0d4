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
#include "accounts/limits.h"
#include "accounts/org_rules.h"
#include "accounts/org_service.h"
#include "accounts/request_origins.h"
#include "accounts/terms_service.h"
#include "accounts/usage_service.h"
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

// A self-hosted deployment has one placement: its own machine. Projects record it so a
// later multi-placement deployment keeps the same shape.
inline constexpr char kProvider[] = "self-hosted";
inline constexpr char kRegion[] = "local";

enum class EngineSet { kSignup, kRecipes };
// kInvalidInput (unsupported_engine, with `available`) unless `engine` is one of `set`:
// duckdb, pyiceberg, spark, and for recipes also snowflake.
Result<void> CheckEngine(const std::string& engine, EngineSet set = EngineSet::kSignup);

// A project with the placement it was created with (fixed for its life).
struct ProjectView {
  metastore::Project project;
  std::string provider;
  std::string region;
};

// One warehouse of a project as the caller sees it: level "read" | "write" | "none".
struct WarehouseListing {
  metastore::Warehouse warehouse;
  metastore::Level my_level = metastore::Level::kNone;
  std::string my_via;  // "grant" | "admin" | "" for none
};

// A project the caller reaches, with its role in the project's organisation.
struct ReachableProject {
  ProjectView view;
  metastore::Role role = metastore::Role::kMember;
};

struct ProjectWarehouses {
  ProjectView project;
  std::vector<WarehouseListing> warehouses;
  int limit = 0;  // warehouses per project
};

struct CreateProjectRequest {
  std::string name;
  std::string provider;  // "" for the deployment's own
  std::string region;
  std::string org_id;           // "" when the caller belongs to one organisation
  std::string idempotency_key;  // "" for none
  std::string request_hash;     // the body's fingerprint, checked on a replay
  std::string request_id;
};

struct CreatedProject {
  ProjectView project;
  bool replayed = false;  // an Idempotency-Key seen before: the first call's project
};

struct CreateWarehouseRequest {
  std::string project;  // id or name
  std::string name;
  std::string idempotency_key;
  std::string request_hash;  // the body's fingerprint, checked on a replay
  std::string request_id;
};

struct CreatedWarehouse {
  metastore::Warehouse warehouse;
  ProjectView project;
  bool replayed = false;
};

struct RevokedGrant {
  GrantView before;
  GrantView after;
};

struct DeletedWarehouse {
  metastore::Warehouse warehouse;
  int tables_dropped = 0;
  uint64_t bytes_at_deletion = 0;
  int grants_removed = 0;
  int usage_samples_removed = 0;
  std::string storage_step;  // "ok", or "retrying" when the task runner finishes it
  bool storage_complete = true;
};

struct PublishedWarehouse {
  metastore::Warehouse warehouse;  // after the change
  bool changed = false;            // false when it already was as asked
  int64_t bytes = 0;               // its table bucket's latest footprint
};

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
  // Whether `bucket` is the table or blob bucket of an existing warehouse (the TLS gate).
  Result<bool> IsWarehouseBucket(const std::string& bucket);
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
  // Replaces both identities' secrets (a new credential generation): old secrets, the
  // catalog tokens minted from them and vended sessions stop working. Requires write.
  Result<metastore::Warehouse> Rotate(const Caller& caller, const std::string& warehouse);
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

  // ---- projects and their warehouses (projects.cc). Errors: kNotFound (code
  // project_not_found), kConflict (ambiguous_name, candidates), kInvalidInput
  // (missing_field project when the caller reaches several projects).
  Result<std::vector<ProjectView>> Projects(const Caller& caller);
  // Errors: kInvalidInput (missing_field / invalid_value name, unsupported_placement,
  // org_required), kNotFound (org_not_found), kPermissionDenied (insufficient_role: only
  // organisation admins create projects), kAlreadyExists (already_exists, project_id),
  // kConflict (idempotency_key_reused).
  Result<CreatedProject> CreateProject(const Caller& caller, const CreateProjectRequest& request);
  Result<ProjectWarehouses> Warehouses(const Caller& caller, const std::string& project);
  // ---- warehouses (warehouses.cc). Errors: kInvalidInput (missing_field /
  // invalid_value name), kNotFound (project_not_found), kPermissionDenied
  // (insufficient_role), kAlreadyExists (already_exists), kQuotaExceeded (limit_exceeded:
  // limit_value, current), kUnavailable (storage_error: safe to retry with the same key),
  // kConflict (idempotency_key_reused).
  Result<CreatedWarehouse> CreateWarehouse(const Caller& caller,
                                           const CreateWarehouseRequest& request);
  // Errors: kPermissionDenied (insufficient_role: admins only), kInvalidInput
  // (confirmation_required, confirm_with), kNotFound (warehouse_not_found).
  Result<DeletedWarehouse> DeleteWarehouse(const Caller& caller, const std::string& warehouse,
                                           const std::string& confirm,
                                           const std::string& request_id);
  // ---- publishing (publish.cc): storage-level (anyone reads the table bucket); with
  // `anonymous_catalog` the REST catalog also answers list and load without a token. Each
  // publish states both; unpublishing closes both. Errors: kPermissionDenied
  // (insufficient_role: admins only), kInvalidInput (confirmation_required, confirm_with;
  // publishing only), kQuotaExceeded (quota_exceeded, tier public), kNotFound
  // (warehouse_not_found).
  Result<PublishedWarehouse> SetPublic(const Caller& caller, const std::string& warehouse,
                                       bool publish, bool anonymous_catalog,
                                       const std::string& confirm, const std::string& request_id);
  // ---- grants (warehouses.cc)
  Result<std::vector<GrantView>> Grants(const Caller& caller, const std::string& warehouse);
  // Errors: kInvalidInput (invalid_value level), kPermissionDenied (forbidden), kNotFound
  // (principal_not_found, warehouse_not_found).
  Result<GrantView> PutGrant(const Caller& caller, const std::string& warehouse,
                             const std::string& principal_id, const std::string& level,
                             const std::string& request_id);
  // Errors: kNotFound (grant_not_found), kPermissionDenied (forbidden), kConflict
  // (implicit_grant: an admin's write).
  Result<RevokedGrant> RevokeGrant(const Caller& caller, const std::string& warehouse,
                                   const std::string& principal_id, const std::string& request_id);
  const Limits& limits() const { return limits_; }
  // Idempotency keys of routes served outside this service (POST /v1/tables): what the
  // first call with `key` on `endpoint` recorded (nullopt when new or empty); kConflict
  // (idempotency_key_reused, 409) for another endpoint's key, kInvalidInput
  // (idempotency_key_reused, 422) for the same endpoint with another body
  // (`request_hash`).
  Result<std::optional<std::string>> Replay(const Caller& caller, const std::string& key,
                                            const std::string& endpoint,
                                            const std::string& request_hash) {
    return ReplayOf(caller, key, endpoint, request_hash);
  }
  // Records `resource` (there: the first answer) under `key`; nothing for an empty key.
  Result<void> RememberIdempotency(const Caller& caller, const std::string& key,
                                   const std::string& endpoint, const std::string& resource,
                                   const std::string& request_hash);
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
  // The warehouses-per-project refusal, naming the limit and the count.
  Error LimitReached(int in_project) const;
  // The person an external issuer's token names (external.cc), created on first sight.
  Result<Caller> ExternalCaller(const std::string& token);
  Result<void> CreateExternalPerson(const identity::ExternalIdentity& id);
  // The caller of a session's access token, while the session is live.
  Result<Caller> SessionCaller(const identity::Claims& claims);
  // A project by id or name among those the caller reaches ("" when it reaches one).
  Result<ReachableProject> ResolveProject(const Caller& caller, const std::string& project);
  // The resource an earlier call with this Idempotency-Key created on `endpoint`; nullopt
  // for a new (or no) key; idempotency_key_reused for another endpoint's key (409) or
  // another body (422, the IETF Idempotency-Key draft's answer).
  Result<std::optional<std::string>> ReplayOf(const Caller& caller, const std::string& key,
                                              const std::string& endpoint,
                                              const std::string& request_hash);

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
};

}  // namespace tablemere::accounts
