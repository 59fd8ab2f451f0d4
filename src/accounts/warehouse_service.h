// Creating and deleting warehouses (POST/DELETE /v1/warehouses), publishing them
// (publish.cc) and rotating their credentials (warehouses.cc).
#pragma once

#include <cstdint>
#include <string>

#include "accounts/access_service.h"
#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "accounts/idempotency_records.h"
#include "accounts/limits.h"
#include "accounts/project_service.h"
#include "accounts/usage_service.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"
#include "objectstore/registered_store.h"

namespace tablemere::accounts {

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

class WarehouseService {
 public:
  WarehouseService(metastore::Metastore& meta, objectstore::RegisteredStore& objects,
                   const Clock& clock, Random& random, const Limits& limits, AuditRecorder& audit,
                   AccessService& access, UsageService& usage, ProjectService& projects,
                   IdempotencyRecords& idempotency)
      : meta_(meta),
        objects_(objects),
        clock_(clock),
        random_(random),
        limits_(limits),
        audit_(audit),
        access_(access),
        usage_(usage),
        projects_(projects),
        idempotency_(idempotency) {}

  // Errors: kInvalidInput (missing_field /
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
  // Replaces both identities' secrets (a new credential generation): old secrets, the
  // catalog tokens minted from them and vended sessions stop working. Requires write.
  Result<metastore::Warehouse> Rotate(const Caller& caller, const std::string& warehouse);
  // A warehouse by id, for the operator's internal routes. Errors: kNotFound.
  Result<metastore::Warehouse> Find(const WarehouseId& id) {
    return meta_.warehouses().FindWarehouse(id);
  }
  // Whether `bucket` is the table or blob bucket of an existing warehouse (the TLS gate).
  Result<bool> IsWarehouseBucket(const std::string& bucket);

 private:
  // The warehouses-per-project refusal, naming the limit and the count.
  Error LimitReached(int in_project) const;

  metastore::Metastore& meta_;
  objectstore::RegisteredStore& objects_;
  const Clock& clock_;
  Random& random_;
  const Limits& limits_;
  AuditRecorder& audit_;
  AccessService& access_;
  UsageService& usage_;
  ProjectService& projects_;
  IdempotencyRecords& idempotency_;
};

}  // namespace tablemere::accounts
