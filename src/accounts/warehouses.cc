// WarehouseService: creating and deleting warehouses (POST/DELETE /v1/warehouses) and
// rotating their credentials.
#include <nlohmann/json.hpp>

#include "accounts/warehouse_service.h"

#include "accounts/errors.h"
#include "accounts/input_checks.h"
#include "maintenance/task_runner.h"
#include "storage/access.h"

namespace tablemere::accounts {
namespace {

using metastore::Level;
using metastore::PrincipalKind;
using metastore::Role;

constexpr char kCreateWarehouseEndpoint[] = "POST /v1/warehouses";

}  // namespace

Result<bool> WarehouseService::IsWarehouseBucket(const std::string& bucket) {
  if (!bucket.starts_with("w-") && !bucket.starts_with("b-")) return false;
  auto w = meta_.warehouses().FindWarehouse(WarehouseId(bucket.substr(2)));
  if (w) return true;
  if (w.error().code == ErrorCode::kNotFound) return false;
  return Fail(w.error());
}

Error WarehouseService::LimitReached(int in_project) const {
  return Coded(
             ErrorCode::kQuotaExceeded, "limit_exceeded",
             "The project has its " + std::to_string(limits_.warehouses_per_project) + " catalogs")
      .With("limit_value", std::to_string(limits_.warehouses_per_project))
      .With("current", std::to_string(in_project))
      .With("remedy", "Delete a catalog (tablemere catalog delete) or use another project.");
}

Result<CreatedWarehouse> WarehouseService::CreateWarehouse(const Caller& caller,
                                                           const CreateWarehouseRequest& request) {
  // ---- a replay answers with the first call's warehouse
  auto replay = [&]() -> Result<std::optional<CreatedWarehouse>> {
    TM_ASSIGN(auto seen, idempotency_.Replay(caller, request.idempotency_key,
                                             kCreateWarehouseEndpoint, request.request_hash));
    if (!seen) return std::optional<CreatedWarehouse>();
    TM_ASSIGN(auto w, meta_.warehouses().FindWarehouse(WarehouseId(*seen)));
    TM_ASSIGN(auto p, meta_.warehouses().FindProject(w.project_id));
    return std::optional<CreatedWarehouse>(
        CreatedWarehouse{std::move(w), ProjectView{std::move(p), kProvider, kRegion}, true});
  };
  TM_ASSIGN(auto replayed, replay());
  if (replayed) return std::move(*replayed);

  // ---- validate and authorise
  TM_ASSIGN(std::string name, CheckName(request.name));
  TM_ASSIGN(auto project, projects_.ResolveProject(caller, request.project));
  if (caller.principal.kind == PrincipalKind::kAgent && project.role != Role::kAdmin) {
    return Fail(AdminOnly("or an admin token creates catalogs"));
  }
  TM_TRY(usage_.CheckStorageQuota(caller, project.view.project.org_id, "creating a catalog"));
  TM_ASSIGN(auto existing, meta_.warehouses().WarehousesOfOrg(project.view.project.org_id));
  int in_project = 0;
  for (const auto& w : existing) {
    if (w.project_id != project.view.project.id) continue;
    in_project++;
    if (w.name == name) {
      return Fail(Coded(ErrorCode::kAlreadyExists, "already_exists",
                        "The project has a catalog named '" + name + "'")
                      .With("field", "name")
                      .With("warehouse_id", w.id));
    }
  }
  // A fast refusal before any bucket is made; the count that decides is the one inside
  // the transaction below.
  if (in_project >= limits_.warehouses_per_project) return Fail(LimitReached(in_project));

  // ---- apply: both buckets (idempotent), then the records in one transaction
  int64_t now = clock_.NowMillis();
  metastore::Warehouse w{WarehouseId(random_.Uuid()),
                         project.view.project.id,
                         project.view.project.org_id,
                         name,
                         1,
                         now};
  for (const std::string& bucket :
       {storage::TableBucketName(w.id), storage::BlobBucketName(w.id)}) {
    auto created = objects_.CreateBucket(bucket);
    if (!created && created.error().code != ErrorCode::kAlreadyExists) {
      return Fail(Coded(ErrorCode::kUnavailable, "storage_error",
                        "The catalog's buckets could not be created")
                      .With("remedy", "Safe to retry with the same Idempotency-Key."));
    }
  }
  auto stored =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        if (!request.idempotency_key.empty()) {
          TM_TRY(txn.idempotency().PutIdempotency({caller.principal.id, request.idempotency_key,
                                                   kCreateWarehouseEndpoint, w.id, now,
                                                   request.request_hash}));
        }
        // Counted where it is enforced: concurrent creates (on any replica) are serialised
        // by the transaction, so none passes a limit another has just reached.
        TM_ASSIGN(auto of_org, txn.warehouses().WarehousesOfOrg(w.org_id));
        int now_in_project = 0;
        for (const auto& other : of_org) now_in_project += other.project_id == w.project_id;
        if (now_in_project >= limits_.warehouses_per_project) {
          return Fail(LimitReached(now_in_project));
        }
        TM_TRY(txn.warehouses().CreateWarehouse(w));
        // The creator holds write (listed "via creator").
        TM_TRY(txn.warehouses().PutGrant(
            {w.id, caller.principal.id, Level::kWrite, caller.principal.id, now}));
        return audit_.RecordIn(
            txn, metastore::AuditEvent{0, now, caller.principal.id, w.org_id, "warehouse.create",
                                       "warehouse", w.id, request.request_id,
                                       nlohmann::json{{"name", name}}.dump()});
      });
  if (!stored) {
    (void)objects_.DeleteBucket(storage::TableBucketName(w.id));
    (void)objects_.DeleteBucket(storage::BlobBucketName(w.id));
    const Error& e = stored.error();
    if (e.code == ErrorCode::kConflict && e.Detail("conflict") == "idempotency_key") {
      TM_ASSIGN(auto again, replay());
      if (again) return std::move(*again);
    }
    if (e.code == ErrorCode::kAlreadyExists) {
      return Fail(Coded(ErrorCode::kAlreadyExists, "already_exists",
                        "The project has a catalog named '" + name + "'")
                      .With("field", "name"));
    }
    return Fail(e);
  }
  return CreatedWarehouse{std::move(w), std::move(project.view), false};
}

Result<DeletedWarehouse> WarehouseService::DeleteWarehouse(const Caller& caller,
                                                           const std::string& warehouse,
                                                           const std::string& confirm,
                                                           const std::string& request_id) {
  // ---- authorise, then the typed confirmation
  TM_ASSIGN(auto resolved, access_.ResolveWarehouse(caller, warehouse));
  const metastore::Warehouse& w = resolved.access.warehouse;
  // The reference's code for this route: 403 forbidden (not an admin).
  if (resolved.role != Role::kAdmin) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                      "Only an organisation admin deletes catalogs")
                    .With("remedy", "Ask an admin of the organisation."));
  }
  if (confirm != w.name) {
    return Fail(Coded(ErrorCode::kInvalidInput, "confirmation_required",
                      "Type the catalog's name in confirm to delete it")
                    .With("field", "confirm")
                    .With("confirm_with", w.name));
  }
  // ---- object lock: a blob bucket whose versions are under retention or a legal hold
  // keeps the warehouse, operator or not, until the lock ends.
  if (auto unlocked = objectstore::CheckNothingLocked(objects_, storage::BlobBucketName(w.id));
      !unlocked) {
    if (unlocked.error().code != ErrorCode::kConflict) return Fail(unlocked.error());
    return Fail(Coded(ErrorCode::kConflict, "objects_locked",
                      unlocked.error().message +
                          " Delete the catalog after the retention ends (or, for GOVERNANCE "
                          "retention, remove it with x-amz-bypass-governance-retention).")
                    .With("locked_until", unlocked.error().Detail("locked_until")));
  }
  // ---- apply: the records and the buckets' deletion tasks in one transaction
  DeletedWarehouse out{.warehouse = w, .storage_step = "ok", .storage_complete = true};
  auto removed =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        TM_ASSIGN(auto grants, txn.warehouses().GrantsOn(w.id));
        out.grants_removed = static_cast<int>(grants.size());
        TM_ASSIGN(out.tables_dropped, txn.catalog().DeleteWarehouseEntries(w.id));
        TM_ASSIGN(out.usage_samples_removed, txn.usage().DeleteSamples(w.id));
        TM_TRY(txn.warehouses().DeleteWarehouse(w.id));
        for (const std::string& bucket :
             {storage::TableBucketName(w.id), storage::BlobBucketName(w.id)}) {
          TM_TRY(txn.tasks().Enqueue(maintenance::kDeleteBucketTask,
                                     nlohmann::json{{"bucket", bucket}}.dump()));
        }
        return audit_.RecordIn(
            txn, metastore::AuditEvent{
                     0, 0, caller.principal.id, w.org_id, "warehouse.delete", "warehouse", w.id,
                     request_id,
                     nlohmann::json{{"name", w.name}, {"tables", out.tables_dropped}}.dump()});
      });
  TM_TRY(removed);
  // ---- the bytes: now, and by the task runner if this is interrupted or fails
  for (const std::string& bucket :
       {storage::TableBucketName(w.id), storage::BlobBucketName(w.id)}) {
    auto emptied = objectstore::DeleteBucketWithContents(objects_, bucket);
    if (emptied) {
      out.bytes_at_deletion += emptied->bytes;
    } else {
      out.storage_step = "retrying";
      out.storage_complete = false;
    }
  }
  return out;
}

Result<metastore::Warehouse> WarehouseService::Rotate(const Caller& caller,
                                                      const std::string& warehouse) {
  TM_ASSIGN(auto access, access_.HeldAccess(caller, warehouse));
  if (access.level != metastore::Level::kWrite) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                      "Rotating a warehouse's credentials needs write on it.")
                    .With("your_level", metastore::Name(access.level)));
  }
  return metastore::InTransaction(
      meta_, [&](metastore::WriteTransaction& txn) -> Result<metastore::Warehouse> {
        TM_ASSIGN(auto rotated, txn.warehouses().RotateWarehouse(access.warehouse.id));
        TM_TRY(audit_.RecordIn(
            txn, metastore::AuditEvent{0, 0, caller.principal.id, rotated.org_id,
                                       "warehouse.rotate", "warehouse", rotated.id, "", "{}"}));
        return rotated;
      });
}

}  // namespace tablemere::accounts
