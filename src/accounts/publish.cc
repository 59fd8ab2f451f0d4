// WarehouseService: publishing a warehouse (POST/DELETE /v1/warehouses/{id}/public). A
// public warehouse's table bucket is readable by anyone, unsigned (the S3 layer asks
// S3Identities::PublicBucket); writes stay refused and the REST catalog stays private. Only
// on the separate opt-in (anonymous_catalog) does the catalog also answer list and load
// without a token (the catalog's AuthenticateAnonymous).
#include <nlohmann/json.hpp>

#include "accounts/errors.h"
#include "accounts/warehouse_service.h"

namespace tablemere::accounts {
Result<PublishedWarehouse> WarehouseService::SetPublic(const Caller& caller,
                                                       const std::string& warehouse, bool publish,
                                                       bool anonymous_catalog,
                                                       const std::string& confirm,
                                                       const std::string& request_id) {
  TM_ASSIGN(auto resolved, access_.ResolveWarehouse(caller, warehouse));
  const metastore::Warehouse& w = resolved.access.warehouse;
  if (resolved.role != metastore::Role::kAdmin) {
    return Fail(AdminOnly(publish ? "publishes catalogs" : "unpublishes catalogs"));
  }
  if (publish && confirm != w.name) {
    return Fail(Coded(ErrorCode::kInvalidInput, "confirmation_required",
                      "Type the catalog's name in confirm to make it public")
                    .With("field", "confirm")
                    .With("confirm_with", w.name));
  }
  PublishedWarehouse out;
  const int64_t now = clock_.NowMillis();
  const int64_t at = publish ? (w.published_ms ? w.published_ms : now) : 0;
  const bool open = publish && anonymous_catalog;
  const int64_t catalog_at = open ? (w.catalog_public_ms ? w.catalog_public_ms : now) : 0;
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_ASSIGN(auto sample, txn.usage().LatestSample(w.id));
    out.bytes = sample ? sample->table_bytes : 0;
    // The public tier: the organisation's public warehouses together, with this one.
    // Counted where it is enforced: concurrent publishes (on any replica) are serialised by
    // the transaction, so none passes the tier another has just filled.
    if (publish && w.published_ms == 0) {
      int64_t public_bytes = out.bytes;
      TM_ASSIGN(auto all, txn.warehouses().WarehousesOfOrg(w.org_id));
      for (const auto& other : all) {
        if (other.published_ms == 0 || other.id == w.id) continue;
        TM_ASSIGN(auto s, txn.usage().LatestSample(other.id));
        if (s) public_bytes += s->table_bytes;
      }
      if (public_bytes > limits_.public_storage_bytes) {
        return Fail(Coded(ErrorCode::kQuotaExceeded, "quota_exceeded",
                          "Publishing would put the organisation's public catalogs over the "
                          "public tier")
                        .With("tier", "public")
                        .With("limit_value", std::to_string(limits_.public_storage_bytes))
                        .With("current", std::to_string(public_bytes))
                        .With("remedy", "Unpublish another catalog, or delete data first."));
      }
    }
    TM_ASSIGN(out.warehouse, txn.warehouses().SetWarehousePublic(w.id, at, catalog_at));
    const std::string details = nlohmann::json{{"name", w.name}}.dump();
    TM_TRY(audit_.RecordIn(txn, {0, 0, caller.principal.id, w.org_id,
                                 publish ? "warehouse.publish" : "warehouse.unpublish", "warehouse",
                                 w.id, request_id, details}));
    // Opening or closing the anonymous catalog is its own event.
    if ((w.catalog_public_ms != 0) != open) {
      TM_TRY(audit_.RecordIn(txn, {0, 0, caller.principal.id, w.org_id,
                                   open ? "warehouse.catalog_open" : "warehouse.catalog_close",
                                   "warehouse", w.id, request_id, details}));
    }
    return {};
  }));
  out.changed = (w.published_ms != 0) != publish || (w.catalog_public_ms != 0) != open;
  return out;
}

}  // namespace tablemere::accounts
