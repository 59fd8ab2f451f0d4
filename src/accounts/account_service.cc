#include "accounts/account_service.h"
#include "accounts/input_checks.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "accounts/handles.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "storage/access.h"

namespace tablemere::accounts {

namespace {

// Length of the random secret part of an API key (bytes before encoding).

std::string HostPort(const std::string& url) {
  size_t p = url.find("://");
  return p == std::string::npos ? url : url.substr(p + 3);
}

}  // namespace

// The engines a signup answers with a recipe for; GET /v1/connection also has the
// read-only Snowflake recipe (`recipes`).
Result<void> CheckEngine(const std::string& engine, EngineSet set) {
  std::vector<std::string> engines = {"duckdb", "pyiceberg", "spark"};
  if (set == EngineSet::kRecipes) engines.push_back("snowflake");
  if (std::find(engines.begin(), engines.end(), engine) != engines.end()) return {};
  std::string list = Join(engines, ", ");
  return Fail(Coded(ErrorCode::kInvalidInput, "unsupported_engine", "engine must be one of " + list)
                  .With("available", Join(engines, ",")));
}

NewAccount NewAccountFrom(const std::string& email, const std::string& payload_json) {
  nlohmann::json payload = nlohmann::json::parse(payload_json, nullptr, false);
  if (!payload.is_object()) payload = nlohmann::json::object();
  NewAccount account{email,
                     payload.value("workspace", email.substr(0, email.find('@'))),
                     payload.value("full_name", ""),
                     {},
                     {}};
  if (account.display_name.empty()) account.display_name = account.workspace;
  if (payload.contains("pending_org"))
    account.pending_org = OrgId(payload.value("pending_org", ""));
  if (payload.contains("join_org")) account.join_org = OrgId(payload.value("join_org", ""));
  return account;
}

AccountService::AccountService(metastore::Metastore& meta, objectstore::RegisteredStore& objects,
                               const Clock& clock, Random& random, const IdentitySecrets& secrets,
                               PublicUrls urls, bool unverified_signup_allowed,
                               identity::SigningKeys* signing_keys)
    : meta_(meta),
      objects_(objects),
      clock_(clock),
      random_(random),
      secrets_(secrets),
      urls_(std::move(urls)),
      unverified_signup_allowed_(unverified_signup_allowed),
      signing_keys_(signing_keys) {}

Result<SignupResult> AccountService::Signup(const SignupRequest& request) {
  // ---- validate
  if (!unverified_signup_allowed_) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "verification_required",
                      "The one-call signup is only available on a local stack (API on loopback, no "
                      "mail sender). Use POST /v1/signup/start and /v1/signup/verify."));
  }
  if (!ValidEmail(request.email)) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "email is not a valid address")
                    .With("field", "email"));
  }
  // Checked before anything is created: the recipe is built after the account exists,
  // and a failure there would burn the address without ever showing the key.
  TM_TRY(CheckEngine(request.engine));
  if (!request.accept_terms) {
    return Fail(
        Coded(ErrorCode::kInvalidInput, "terms_required", "accept_terms must be exactly true")
            .With("field", "accept_terms"));
  }
  std::string workspace = request.workspace.empty()
                              ? request.email.substr(0, request.email.find('@'))
                              : request.workspace;
  return CreateAccount(NewAccount{ToLower(request.email), workspace, workspace, {}, {}});
}

Result<SignupResult> AccountService::CreateAccount(const NewAccount& a) {
  // ---- build: the person and its key; an organisation (a new one, the form's reserved
  // one, or a claimed domain's to join); in its own organisation a project and `lake`
  int64_t now = clock_.NowMillis();
  SignupResult r;
  r.principal = metastore::Principal{.id = PrincipalId("p_" + crypto::HexEncode(random_.Bytes(8))),
                                     .kind = metastore::PrincipalKind::kHuman,
                                     .email = a.email,
                                     .display_name = a.display_name,
                                     .created_ms = now};
  metastore::ApiKey key;
  if (a.with_key) {
    IssuedApiKey issued = api_keys_.Mint(r.principal.id);
    r.api_key = std::move(issued.api_key);
    key = std::move(issued.record);
  }
  const bool joining = a.join_org.has_value();
  if (a.pending_org || a.join_org) {
    TM_ASSIGN(r.org, meta_.orgs().FindOrg(a.pending_org ? *a.pending_org : *a.join_org));
    r.joined_via = joining ? "domain" : "signup-form";
  } else {
    r.org = metastore::Organization{
        OrgId("o_" + crypto::HexEncode(random_.Bytes(8))), a.workspace,
        SlugFor(a.workspace) + "-" + crypto::HexEncode(random_.Bytes(2)), now};
    r.joined_via = "signup";
  }
  r.role = joining ? metastore::Role::kMember : metastore::Role::kAdmin;
  if (!joining) {
    r.project = metastore::Project{ProjectId("pr_" + crypto::HexEncode(random_.Bytes(8))), r.org.id,
                                   a.workspace, now};
    r.warehouse =
        metastore::Warehouse{WarehouseId(random_.Uuid()), r.project->id, r.org.id, "lake", 1, now};
    // ---- apply: buckets first (idempotent names), then the records in one transaction
    for (const std::string& bucket :
         {storage::TableBucketName(r.warehouse->id), storage::BlobBucketName(r.warehouse->id)}) {
      auto created = objects_.CreateBucket(bucket);
      if (!created && created.error().code != ErrorCode::kAlreadyExists) {
        return Fail(created.error());
      }
    }
  }
  // One transaction: the person, the key, the organisation and membership, the project,
  // the warehouse with its write grant, the Terms, invitations, and the audit event.
  auto stored =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        TM_TRY(txn.principals().CreatePrincipal(r.principal));
        if (a.with_key) TM_TRY(txn.principals().CreateApiKey(key));
        if (a.pending_org) {
          r.org.status = "active";
          TM_TRY(txn.orgs().UpdateOrg(r.org));
        } else if (!joining) {
          TM_TRY(txn.orgs().CreateOrg(r.org));
        }
        TM_TRY(txn.orgs().PutMember({r.org.id, r.principal.id, r.role, now, r.joined_via}));
        if (r.project) {
          TM_TRY(txn.warehouses().CreateProject(*r.project));
          TM_TRY(txn.warehouses().CreateWarehouse(*r.warehouse));
          TM_TRY(txn.warehouses().PutGrant(
              {r.warehouse->id, r.principal.id, metastore::Level::kWrite, r.principal.id, now}));
        }
        TM_TRY(txn.memberships().AcceptTerms({r.principal.id, kTermsVersion, now, a.terms_via}));
        // Invitations to the address are applied on signup.
        TM_ASSIGN(auto invitations, txn.memberships().OpenInvitationsFor(r.principal.email, now));
        for (const auto& inv : invitations) TM_TRY(orgs_.ApplyInvitation(txn, r.principal.id, inv));
        if (a.also) TM_TRY(a.also(txn, r));
        return RecordIn(txn,
                        metastore::AuditEvent{0, now, r.principal.id, r.org.id, "signup.complete",
                                              "principal", r.principal.id, "", "{}"});
      });
  if (!stored) {
    if (r.warehouse) {
      (void)objects_.DeleteBucket(storage::TableBucketName(r.warehouse->id));
      (void)objects_.DeleteBucket(storage::BlobBucketName(r.warehouse->id));
    }
    if (stored.error().code == ErrorCode::kAlreadyExists) {
      return Fail(Coded(ErrorCode::kAlreadyExists, "already_exists",
                        "An account with this email exists; recover its key instead.")
                      .With("remedy", "tablemere recover --email <address>"));
    }
    return Fail(stored.error());
  }
  return r;
}

Result<Connection> AccountService::BuildConnection(const WarehouseAccess& access,
                                                   const std::string& engine) {
  TM_TRY(CheckEngine(engine, EngineSet::kRecipes));
  Connection c;
  c.engine = engine;
  c.access = access;
  c.urls = urls_;
  // Snowflake gets the read-only identity whatever the level: its static keys sit in the
  // account's external volume, where ALLOW_WRITES = FALSE is all that would stop a write.
  bool read_only = access.level != metastore::Level::kWrite || engine == "snowflake";
  c.identity = IdentityName(access.warehouse.id, read_only);
  c.client_secret = secrets_.SecretFor(c.identity, access.warehouse.credential_generation);
  std::string bucket = storage::TableBucketName(access.warehouse.id);
  std::string token_url = urls_.catalog + "/v1/oauth/tokens";
  bool https = urls_.s3.starts_with("https://");
  c.notes.push_back(read_only
                        ? "You hold read on this warehouse: the recipe carries the read-only "
                          "identity; the catalog refuses its commits and the store its writes."
                        : "You hold write on this warehouse: the recipe reads and writes.");
  if (engine == "duckdb") {
    c.sql =
        "INSTALL iceberg; LOAD iceberg; INSTALL httpfs; LOAD httpfs;\n"
        "CREATE SECRET tablemere (TYPE ICEBERG, CLIENT_ID '" +
        c.identity + "', CLIENT_SECRET '" + c.client_secret + "', OAUTH2_SERVER_URI '" + token_url +
        "');\n"
        "CREATE SECRET tablemere_s3 (TYPE S3, KEY_ID '" +
        c.identity + "', SECRET '" + c.client_secret + "', ENDPOINT '" + HostPort(urls_.s3) +
        "', URL_STYLE 'path', USE_SSL " + (https ? "true" : "false") +
        ", REGION 'us-east-1', SCOPE 's3://" + bucket +
        "');\n"
        "ATTACH '" +
        bucket + "' AS lake (TYPE ICEBERG, ENDPOINT '" + urls_.catalog + "', SECRET tablemere);\n";
    c.notes.push_back("ATTACH the bare bucket name; the s3:// form attaches read-only in DuckDB.");
  } else if (engine == "snowflake") {
    c.sql =
        "CREATE OR REPLACE CATALOG INTEGRATION tablemere_lake\n"
        "  CATALOG_SOURCE = ICEBERG_REST\n"
        "  TABLE_FORMAT = ICEBERG\n"
        "  REST_CONFIG = (CATALOG_URI = '" +
        urls_.catalog + "' CATALOG_NAME = '" + bucket +
        "')\n"
        "  REST_AUTHENTICATION = (TYPE = OAUTH OAUTH_TOKEN_URI = '" +
        token_url + "' OAUTH_CLIENT_ID = '" + c.identity + "' OAUTH_CLIENT_SECRET = '" +
        c.client_secret +
        "' OAUTH_ALLOWED_SCOPES = ('catalog'))\n"
        "  ENABLED = TRUE;\n"
        "CREATE OR REPLACE EXTERNAL VOLUME tablemere_lake_volume\n"
        "  STORAGE_LOCATIONS = ((NAME = 'tablemere' STORAGE_PROVIDER = 'S3COMPAT'\n"
        "    STORAGE_BASE_URL = 's3compat://" +
        bucket + "/' STORAGE_ENDPOINT = '" + HostPort(urls_.s3) +
        "'\n"
        "    CREDENTIALS = (AWS_KEY_ID = '" +
        c.identity + "' AWS_SECRET_KEY = '" + c.client_secret +
        "')))\n"
        "  ALLOW_WRITES = FALSE;\n";
    c.notes.push_back(
        "Snowflake always gets the read-only identity. The catalog integration connects; reading "
        "data through Snowflake is not available today (its S3-compatible volumes need "
        "virtual-hosted bucket names over HTTPS).");
  } else if (engine == "pyiceberg") {
    // oauth2-server-uri explicitly: PyIceberg deprecates deriving it from uri (gone in 1.0).
    c.python =
        "from pyiceberg.catalog.rest import RestCatalog\n"
        "catalog = RestCatalog(name='tablemere', uri='" +
        urls_.catalog + "', warehouse='s3://" + bucket + "/', credential='" + c.identity + ":" +
        c.client_secret + "', **{'oauth2-server-uri': '" + token_url + "', 's3.endpoint': '" +
        urls_.s3 + "', 's3.path-style-access': 'true', 's3.region': 'us-east-1'})\n";
  } else {
    const std::string p = "spark.sql.catalog.lake";
    c.conf = {
        {"spark.sql.extensions",
         "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"},
        {p, "org.apache.iceberg.spark.SparkCatalog"},
        {p + ".type", "rest"},
        {p + ".uri", urls_.catalog},
        {p + ".warehouse", "s3://" + bucket + "/"},
        {p + ".credential", c.identity + ":" + c.client_secret},
        {p + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO"},
        {p + ".s3.endpoint", urls_.s3},
        {p + ".s3.path-style-access", "true"},
        {p + ".client.region", "us-east-1"},
        {p + ".header.X-Iceberg-Access-Delegation", "vended-credentials"},
        // Token refresh works either way (the catalog supports token exchange); refreshing
        // with client_credentials is the most robust for long sessions.
        {p + ".token-exchange-enabled", "false"},
    };
  }
  return c;
}

Result<std::vector<metastore::AuditEvent>> AccountService::Audit(const Caller& caller,
                                                                 const std::string& org_id,
                                                                 const std::string& action,
                                                                 int64_t since_ms, int limit) {
  std::string prefix = action;
  bool exact = !prefix.ends_with("*");
  if (!exact) prefix.pop_back();
  std::vector<metastore::AuditEvent> events;
  if (org_id.empty()) {
    TM_ASSIGN(events, meta_.audit().List("", caller.principal.id, prefix, since_ms, limit));
  } else {
    TM_ASSIGN(auto role, access_.RoleIn(caller, org_id));
    if (!role) return Fail(OrgNotFound(org_id));
    TM_ASSIGN(events, meta_.audit().List(org_id, "", prefix, since_ms, limit));
    if (*role != metastore::Role::kAdmin) {
      std::erase_if(events, [&](const auto& e) { return e.principal_id != caller.principal.id; });
    }
  }
  if (exact && !action.empty()) {
    std::erase_if(events, [&](const auto& e) { return e.action != action; });
  }
  return events;
}

Result<metastore::Principal> AccountService::SetSuspended(const PrincipalId& principal_id,
                                                          bool suspended,
                                                          const std::string& request_id) {
  return metastore::InTransaction(
      meta_, [&](metastore::WriteTransaction& txn) -> Result<metastore::Principal> {
        auto p = txn.principals().FindPrincipal(principal_id);
        if (!p) {
          if (p.error().code != ErrorCode::kNotFound) return Fail(p.error());
          return Fail(Error{ErrorCode::kNotFound, "No principal " + principal_id.str(), {}}.With(
              "code", "principal_not_found"));
        }
        p->suspended = suspended;
        TM_TRY(txn.principals().UpdatePrincipal(*p));
        TM_TRY(RecordIn(
            txn, metastore::AuditEvent{0, 0, "operator", p->org_id,
                                       suspended ? "principal.suspend" : "principal.unsuspend",
                                       "principal", p->id, request_id, "{}"}));
        return *p;
      });
}

}  // namespace tablemere::accounts
