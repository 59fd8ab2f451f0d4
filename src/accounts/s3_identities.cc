#include "accounts/s3_identities.h"

#include <nlohmann/json.hpp>

#include "common/crypto.h"

namespace tablemere::accounts {

namespace {
Error InvalidAccessKey() {
  return Error{ErrorCode::kUnauthenticated,
               "The AWS Access Key Id you provided does not exist in our records.",
               {}}
      .With("s3_code", "InvalidAccessKeyId");
}
}  // namespace

S3Identities::S3Identities(metastore::Metastore& meta, const IdentitySecrets& secrets,
                           const storage::SessionSealer& sealer, const Clock& clock,
                           std::map<std::string, std::string> operator_users)
    : meta_(meta),
      secrets_(secrets),
      sealer_(sealer),
      clock_(clock),
      operator_users_(std::move(operator_users)) {}

Result<int64_t> S3Identities::Generation(const std::string& warehouse_id) {
  int64_t now = clock_.NowMillis();
  {
    std::lock_guard lock(mu_);
    auto it = generations_.find(warehouse_id);
    if (it != generations_.end() && now - it->second.second < kGenerationTtlMs) {
      return it->second.first;
    }
  }
  TM_ASSIGN(auto w, meta_.warehouses().FindWarehouse(WarehouseId(warehouse_id)));
  std::lock_guard lock(mu_);
  generations_[warehouse_id] = {w.credential_generation, now};
  return w.credential_generation;
}

Result<storage::S3Identity> S3Identities::Resolve(const std::string& access_key,
                                                  const std::string& session_token) {
  using Kind = storage::S3Identity::Kind;
  if (storage::SessionSealer::IsSessionKeyId(access_key)) {
    if (session_token.empty()) {
      return Fail(Error{
          ErrorCode::kUnauthenticated,
          "A temporary access key needs its x-amz-security-token.",
          {}}.With("s3_code", "InvalidToken"));
    }
    TM_ASSIGN(auto grant, sealer_.Open(access_key, session_token, clock_.NowMillis()));
    auto gen = Generation(grant.warehouse_id);
    if (!gen || *gen != grant.generation) {
      return Fail(Error{
          ErrorCode::kUnauthenticated,
          "The provided token has expired (the warehouse credential was rotated).",
          {}}.With("s3_code", "ExpiredToken"));
    }
    return storage::S3Identity{Kind::kSession,     access_key,   sealer_.SecretFor(session_token),
                               grant.warehouse_id, grant.prefix, grant.read_only,
                               grant.format};
  }
  if (!session_token.empty()) {
    return Fail(Error{
        ErrorCode::kUnauthenticated,
        "The security token included in the request is invalid.",
        {}}.With("s3_code", "InvalidToken"));
  }
  if (auto op = operator_users_.find(access_key); op != operator_users_.end()) {
    return storage::S3Identity{Kind::kOperator, access_key, op->second, "", "", false};
  }
  auto identity = ParseIdentityName(access_key);
  if (!identity) return Fail(InvalidAccessKey());
  auto gen = Generation(identity->warehouse_id);
  if (!gen) {
    if (gen.error().code == ErrorCode::kNotFound) return Fail(InvalidAccessKey());
    return Fail(gen.error());
  }
  return storage::S3Identity{
      Kind::kWarehouse,       access_key, secrets_.SecretFor(access_key, *gen),
      identity->warehouse_id, "",         identity->read_only};
}

Result<std::vector<storage::GenericLocation>> S3Identities::GenericLocations(
    const std::string& warehouse_id) {
  int64_t now = clock_.NowMillis();
  {
    std::lock_guard lock(mu_);
    auto it = generic_.find(warehouse_id);
    if (it != generic_.end() && now - it->second.fetched_ms < kGenerationTtlMs) {
      return it->second.locations;
    }
  }
  TM_ASSIGN(auto entries, meta_.catalog().ListEntriesOfKind(warehouse_id, "generic"));
  std::vector<storage::GenericLocation> locations;
  std::string root = "s3://w-" + warehouse_id + "/";
  for (const auto& e : entries) {
    if (!e.location.starts_with(root)) continue;
    std::string prefix = e.location.substr(root.size());
    while (prefix.ends_with("/")) prefix.pop_back();
    std::string format = "parquet";
    auto record = nlohmann::json::parse(e.metadata_json, nullptr, false);
    auto stored = record.is_object() ? record.find("format") : record.end();
    if (!record.is_object() || (stored != record.end() && !stored->is_string())) {
      // The record decides which files static keys may write there: guessing would
      // widen or narrow that, so a corrupt one fails the request (json::value() threw).
      return Fail(Error{ErrorCode::kInternal,
                        "The stored record of generic table " + e.name + " (warehouse " +
                            warehouse_id + ") is corrupt: no JSON object with a string format",
                        {}});
    }
    if (stored != record.end()) format = stored->get<std::string>();
    locations.push_back(storage::GenericLocation{prefix + "/", format});
  }
  std::lock_guard lock(mu_);
  generic_[warehouse_id] = CachedLocations{locations, now};
  return locations;
}

Result<std::string> S3Identities::OperatorBucketOwner(const std::string& bucket) {
  auto owner = meta_.bucket_owners().BucketOwner(bucket);
  if (!owner) {
    if (owner.error().code == ErrorCode::kNotFound) return std::string();
    return Fail(owner.error());
  }
  return *owner;
}

Result<storage::WarehouseBucketState> S3Identities::WarehouseBucket(const std::string& bucket) {
  const std::string id = storage::WarehouseOfBucket(bucket);
  if (id.empty()) return storage::WarehouseBucketState{};
  // The warehouse read is memoised and invalidated by any write, so unpublishing (or the
  // quota pass) acts on the next request.
  auto w = meta_.warehouses().FindWarehouse(WarehouseId(id));
  if (!w) {
    if (w.error().code == ErrorCode::kNotFound) return storage::WarehouseBucketState{};
    return Fail(w.error());
  }
  return storage::WarehouseBucketState{storage::IsTableBucket(bucket) && w->published_ms != 0,
                                       w->read_only_ms != 0};
}

Result<void> S3Identities::RecordOperatorBucket(const std::string& bucket, const std::string& owner,
                                                bool created) {
  if (created) return meta_.bucket_owners().SetBucketOwner(bucket, owner);
  return meta_.bucket_owners().ClearBucketOwner(bucket);
}

}  // namespace tablemere::accounts
