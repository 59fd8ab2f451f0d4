// Resolves S3 access keys for the storage listener: operator users from configuration,
// warehouse identities (derived secrets), and vended sessions (sealed tokens, checked
// against the warehouse's current credential generation so rotation ends them).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "accounts/credentials.h"
#include "common/clock.h"
#include "metastore/metastore.h"
#include "storage/access.h"
#include "storage/session_token.h"

namespace tablemere::accounts {

class S3Identities final : public storage::IdentityResolver {
 public:
  // `operator_users`: access key → secret (TABLEMERE_S3_USERS).
  S3Identities(metastore::Metastore& meta, const IdentitySecrets& secrets,
               const storage::SessionSealer& sealer, const Clock& clock,
               std::map<std::string, std::string> operator_users);

  Result<storage::S3Identity> Resolve(const std::string& access_key,
                                      const std::string& session_token) override;
  Result<std::string> OperatorBucketOwner(const std::string& bucket) override;
  Result<storage::WarehouseBucketState> WarehouseBucket(const std::string& bucket) override;
  Result<void> RecordOperatorBucket(const std::string& bucket, const std::string& owner,
                                    bool created) override;
  Result<std::vector<storage::GenericLocation>> GenericLocations(
      const std::string& warehouse_id) override;

 private:
  // The warehouse's credential generation, cached briefly: the S3 hot path must not hit
  // the metastore per request; rotation takes effect within kGenerationTtlMs.
  Result<int64_t> Generation(const std::string& warehouse_id);

  static constexpr int64_t kGenerationTtlMs = 1000;

  metastore::Metastore& meta_;
  const IdentitySecrets& secrets_;
  const storage::SessionSealer& sealer_;
  const Clock& clock_;
  const std::map<std::string, std::string> operator_users_;

  std::mutex mu_;
  std::map<std::string, std::pair<int64_t, int64_t>> generations_;  // id → (gen, fetched at)
  struct CachedLocations {
    std::vector<storage::GenericLocation> locations;
    int64_t fetched_ms = 0;
  };
  std::map<std::string, CachedLocations> generic_;  // warehouse id → locations
};

}  // namespace tablemere::accounts
