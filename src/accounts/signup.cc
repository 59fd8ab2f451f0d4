// SignupService: the one-call signup and creating an account.
#include <nlohmann/json.hpp>

#include "accounts/errors.h"
#include "accounts/handles.h"
#include "accounts/input_checks.h"
#include "accounts/signup_service.h"
#include "accounts/terms_service.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "storage/access.h"

namespace tablemere::accounts {
namespace {

// The detail of the conflict a transaction answers when the organisation a signup was to
// join by its domain stopped admitting the domain meanwhile.
constexpr char kJoinClosed[] = "domain_join_closed";

// Whether `org` still admits `email` by its domain, as `stores` sees it: active, domain
// join on, and the address's domain claimed by it. A signup's landing is decided when it
// starts; an admin may switch domain join off or release the domain before it completes.
Result<bool> StillJoinable(metastore::Stores& stores, const OrgId& org, const std::string& email) {
  TM_ASSIGN(auto o, stores.orgs().FindOrg(org));
  if (!o.domain_join || o.status != "active") return false;
  TM_ASSIGN(auto owner, stores.memberships().DomainOwner(DomainOf(email)));
  return owner && owner->org_id == org;
}

}  // namespace

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

Result<SignupResult> SignupService::Signup(const SignupRequest& request) {
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

Result<SignupResult> SignupService::CreateAccount(const NewAccount& account) {
  NewAccount a = account;
  // An organisation that no longer admits the domain is not joined: the person gets an
  // organisation of its own, as anyone on a domain without domain join.
  if (a.join_org) {
    TM_ASSIGN(bool joinable, StillJoinable(meta_, *a.join_org, a.email));
    if (!joinable) a.join_org.reset();
  }
  auto created = CreateAccountOnce(a);
  if (!created && created.error().Detail("conflict") == kJoinClosed) {
    a.join_org.reset();
    return CreateAccountOnce(a);
  }
  return created;
}

Result<SignupResult> SignupService::CreateAccountOnce(const NewAccount& a) {
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
        if (joining) {
          TM_ASSIGN(bool joinable, StillJoinable(txn, *a.join_org, a.email));
          if (!joinable) {
            return Fail(Error{ErrorCode::kConflict, "domain join was switched off", {}}.With(
                "conflict", kJoinClosed));
          }
        }
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
        return audit_.RecordIn(
            txn, metastore::AuditEvent{0, now, r.principal.id, r.org.id, "signup.complete",
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

}  // namespace tablemere::accounts
