// SignupService: POST /v1/onboard — make sure the caller has an organisation, a project
// and a warehouse `lake`, creating what is missing (idempotent), and accept the Terms.
#include <nlohmann/json.hpp>

#include "accounts/errors.h"
#include "accounts/handles.h"
#include "accounts/input_checks.h"
#include "accounts/signup_service.h"
#include "accounts/terms_service.h"
#include "common/crypto.h"
#include "storage/access.h"

namespace tablemere::accounts {
namespace {

// The detail of the conflict a transaction answers when a concurrent onboarding of the same
// caller created what this one was about to create.
constexpr char kRaced[] = "onboard_raced";

Error Raced() {
  return Error{ErrorCode::kConflict, "a concurrent onboarding created it", {}}.With("conflict",
                                                                                    kRaced);
}

}  // namespace

Result<Onboarded> SignupService::Onboard(const Caller& caller, const OnboardRequest& r) {
  // Two onboardings of one caller at the same moment (a double click, two tabs) both see
  // nothing and both create; the second's transaction sees the first's organisation or
  // warehouse, gives up its own and answers with what the first made.
  auto onboarded = OnboardOnce(caller, r);
  if (!onboarded && onboarded.error().Detail("conflict") == kRaced) {
    return OnboardOnce(caller, r);
  }
  return onboarded;
}

Result<Onboarded> SignupService::OnboardOnce(const Caller& caller, const OnboardRequest& r) {
  // ---- the Terms: a person must have accepted the version in force
  if (caller.principal.kind == metastore::PrincipalKind::kHuman) {
    TM_ASSIGN(auto history, meta_.memberships().TermsHistory(caller.principal.id));
    bool accepted = false;
    for (const auto& a : history) accepted |= a.version == kTermsVersion;
    if (!accepted && !r.accept_terms) {
      return Fail(Coded(ErrorCode::kInvalidInput, "terms_required",
                        "Accept the Terms in force: send accept_terms: true")
                      .With("field", "accept_terms"));
    }
    if (!accepted) {
      TM_TRY(meta_.memberships().AcceptTerms(
          {caller.principal.id, kTermsVersion, clock_.NowMillis(), "onboard"}));
    }
  }
  TM_TRY(CheckEngine(r.engine));
  // ---- an organisation with a warehouse the caller reaches: nothing to create
  TM_ASSIGN(auto orgs, meta_.orgs().OrgsOf(caller.principal.id));
  // The organisation the caller named, or its first.
  const std::pair<metastore::Organization, metastore::Role>* chosen =
      orgs.empty() ? nullptr : &orgs.front();
  for (const auto& o : orgs) {
    if (o.first.id.str() == r.org_id || o.first.handle == r.org_id) chosen = &o;
  }
  if (chosen != nullptr) {
    auto access = access_.DefaultWarehouse(caller);
    if (access) {
      return Onboarded{false, chosen->first, chosen->second, std::nullopt, std::move(*access)};
    }
    if (chosen->second != metastore::Role::kAdmin) {
      return Fail(Coded(ErrorCode::kNotFound, "warehouse_not_found",
                        "Your organisation has no catalog you can reach")
                      .With("remedy", "Ask an admin for a grant (tablemere catalog grant)."));
    }
  }
  if (caller.principal.kind != metastore::PrincipalKind::kHuman && orgs.empty()) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                      "An agent belongs to the organisation that made it"));
  }
  // ---- create what is missing: the organisation (first login), a project and `lake`
  int64_t now = clock_.NowMillis();
  Onboarded out{true, {}, metastore::Role::kAdmin, std::nullopt, {}};
  const bool new_org = orgs.empty();
  if (new_org) {
    std::string name =
        r.organization_name.empty() ? caller.principal.display_name : r.organization_name;
    std::string handle = r.handle.empty() ? SlugFor(name) : r.handle;
    TM_ASSIGN(auto check, CheckHandleAvailable(handle));
    if (!check.valid) {
      return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "The handle is " + check.reason)
                      .With("field", "handle")
                      .With("suggestion", check.suggestion));
    }
    if (!check.available) {
      // Taken by this caller's own onboarding that just finished?
      TM_ASSIGN(auto now_orgs, meta_.orgs().OrgsOf(caller.principal.id));
      if (!now_orgs.empty()) return Fail(Raced());
      return Fail(Coded(ErrorCode::kConflict, "handle_taken", "The handle is taken")
                      .With("field", "handle")
                      .With("suggestion", check.suggestion));
    }
    out.org = metastore::Organization{OrgId("o_" + crypto::HexEncode(random_.Bytes(8))), name,
                                      handle, now};
  } else {
    out.org = chosen->first;  // where the caller was checked to be an admin
  }
  out.project = metastore::Project{ProjectId("pr_" + crypto::HexEncode(random_.Bytes(8))),
                                   out.org.id, "default", now};
  metastore::Warehouse w{WarehouseId(random_.Uuid()), out.project->id, out.org.id, "lake", 1, now};
  for (const std::string& bucket :
       {storage::TableBucketName(w.id), storage::BlobBucketName(w.id)}) {
    auto created = objects_.CreateBucket(bucket);
    if (!created && created.error().code != ErrorCode::kAlreadyExists) {
      return Fail(Coded(ErrorCode::kUnavailable, "storage_error",
                        "The catalog's buckets could not be created; retry"));
    }
  }
  auto stored =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        // What was missing is still missing: checked where the write is decided.
        if (new_org) {
          TM_ASSIGN(auto now_orgs, txn.orgs().OrgsOf(caller.principal.id));
          if (!now_orgs.empty()) return Fail(Raced());
          TM_TRY(txn.orgs().CreateOrg(out.org));
          TM_TRY(txn.orgs().PutMember(
              {out.org.id, caller.principal.id, metastore::Role::kAdmin, now, "created"}));
        } else {
          TM_ASSIGN(auto now_warehouses, txn.warehouses().WarehousesOfOrg(out.org.id));
          if (!now_warehouses.empty()) return Fail(Raced());
        }
        TM_TRY(txn.warehouses().CreateProject(*out.project));
        TM_TRY(txn.warehouses().CreateWarehouse(w));
        TM_TRY(txn.warehouses().PutGrant(
            {w.id, caller.principal.id, metastore::Level::kWrite, caller.principal.id, now}));
        return audit_.RecordIn(
            txn, metastore::AuditEvent{0, now, caller.principal.id, out.org.id,
                                       new_org ? "org.create" : "warehouse.create", "warehouse",
                                       w.id, "", "{}"});
      });
  if (!stored) {
    (void)objects_.DeleteBucket(storage::TableBucketName(w.id));
    (void)objects_.DeleteBucket(storage::BlobBucketName(w.id));
    return Fail(stored.error());
  }
  out.access = WarehouseAccess{w, metastore::Level::kWrite, "creator"};
  return out;
}

}  // namespace tablemere::accounts
