// Idempotency-Key records of the create routes (POST /v1/projects, /v1/warehouses,
// /v1/tables): the resource the first call with a key created, per caller (idempotency.cc).
#pragma once

#include <optional>
#include <string>

#include "accounts/caller.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

class IdempotencyRecords {
 public:
  IdempotencyRecords(metastore::Metastore& meta, const Clock& clock) : meta_(meta), clock_(clock) {}

  // What the first call with `key` on `endpoint` recorded (nullopt when new or empty).
  // Errors: kConflict (idempotency_key_reused, 409) for another endpoint's key,
  // kInvalidInput (idempotency_key_reused, 422: the IETF Idempotency-Key draft's answer)
  // for the same endpoint with another body (`request_hash`).
  Result<std::optional<std::string>> Replay(const Caller& caller, const std::string& key,
                                            const std::string& endpoint,
                                            const std::string& request_hash);
  // Records `resource` (there: the first answer) under `key` in `stores`, the transaction
  // that creates the resource: both land or neither. Nothing for an empty key. kConflict
  // (detail conflict idempotency_key) when a concurrent call with the key recorded first
  // (then that call's answer is the one to replay).
  Result<void> RememberIn(metastore::Stores& stores, const Caller& caller, const std::string& key,
                          const std::string& endpoint, const std::string& resource,
                          const std::string& request_hash);

 private:
  metastore::Metastore& meta_;
  const Clock& clock_;
};

}  // namespace tablemere::accounts
