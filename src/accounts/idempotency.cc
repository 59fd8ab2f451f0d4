#include "accounts/idempotency_records.h"

namespace tablemere::accounts {

Result<std::optional<std::string>> IdempotencyRecords::Replay(const Caller& caller,
                                                              const std::string& key,
                                                              const std::string& endpoint,
                                                              const std::string& request_hash) {
  if (key.empty()) return std::optional<std::string>();
  TM_ASSIGN(auto seen, meta_.idempotency().FindIdempotency(caller.principal.id, key));
  if (!seen) return std::optional<std::string>();
  if (seen->endpoint != endpoint) {
    return Fail(
        Error{ErrorCode::kConflict, "This Idempotency-Key was used on " + seen->endpoint, {}}
            .With("code", "idempotency_key_reused")
            .With("remedy", "Send a new Idempotency-Key for a different call."));
  }
  if (!seen->request_hash.empty() && seen->request_hash != request_hash) {
    return Fail(Error{ErrorCode::kInvalidInput,
                      "This Idempotency-Key was used with a different request body; nothing "
                      "was changed",
                      {}}
                    .With("code", "idempotency_key_reused")
                    .With("http_status", "422")
                    .With("remedy",
                          "Send a new Idempotency-Key for a different request, or repeat the "
                          "first request unchanged to get its answer."));
  }
  return std::optional<std::string>(seen->resource_id);
}

Result<void> IdempotencyRecords::RememberIn(metastore::Stores& stores, const Caller& caller,
                                            const std::string& key, const std::string& endpoint,
                                            const std::string& resource,
                                            const std::string& request_hash) {
  if (key.empty()) return {};
  return stores.idempotency().PutIdempotency(
      {caller.principal.id, key, endpoint, resource, clock_.NowMillis(), request_hash});
}

}  // namespace tablemere::accounts
