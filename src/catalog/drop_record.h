// What a table drop leaves behind for the clients still finishing it. Engines purge a
// dropped table themselves (Spark drops, then deletes every reachable file through the
// table's FileIO); when their vended session nears expiry the FileIO asks the table's
// credentials endpoint again, and a 404 there aborts the purge half-way. So the drop's
// task row (the delayed purge, or a plain record for a table the catalog may not purge)
// carries who dropped which location when, and the credentials endpoint serves a
// just-dropped table to the identity that dropped it for one session lifetime.
#pragma once

#include <cstdint>
#include <string>

#include "catalog/catalog_support.h"
#include "common/result.h"

namespace tablemere::catalog {

// Task kinds a table drop enqueues in its own transaction.
inline constexpr char kPurgePrefixTask[] = "purge_prefix";
// No work: the row only keeps the drop's record until it is due (the session lifetime).
inline constexpr char kDropRecordTask[] = "drop_record";

struct DropRecord {
  std::string warehouse_id;
  TableIdent ident;
  std::string location;    // s3://w-…/ns/t
  std::string dropped_by;  // the catalog identity (t-<id>)
  int64_t dropped_ms = 0;
};

// The task payload: the record's fields, plus the purge's bucket and prefix when
// `purge_prefix` is non-empty (what maintenance::TaskRunner reads).
std::string DropTaskPayload(const DropRecord& record, const std::string& bucket,
                            const std::string& purge_prefix);
// Reads a payload written by DropTaskPayload; kInternal naming the task when it is not
// one (a payload of an older task without the record is kNotFound: nothing to serve).
Result<DropRecord> ParseDropRecord(const std::string& payload_json, int64_t task_id);
// Whether a credentials request by `caller` for `ident` at `now_ms` is the dropper
// finishing its own purge: same warehouse, same identity, same name, and within
// `window_ms` of the drop.
bool ServesDroppedRefresh(const DropRecord& record, const CatalogPrincipal& caller,
                          const TableIdent& ident, int64_t now_ms, int64_t window_ms);

}  // namespace tablemere::catalog
