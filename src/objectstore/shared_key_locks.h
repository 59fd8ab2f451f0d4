// The S3 backend's shared key locks kept in the metastore (KeyLockStore), so writes the
// server checks itself stay exact with several servers in front of one store.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "metastore/metastore.h"
#include "objectstore/s3_store.h"

namespace tablemere::objectstore {

class MetastoreKeyLocks final : public SharedKeyLocks {
 public:
  // A lock lasts `lease_ms` unless released first, so a server that died holding one
  // blocks its key for at most that long; a writer waits up to `wait_ms` for a key
  // before giving up (503 SlowDown to its client, who retries).
  // Holders are named `server` + "#" + the caller's holder, so a restarted server frees
  // what its killed predecessor held (ReleaseLeftBehind) instead of waiting out leases.
  MetastoreKeyLocks(metastore::KeyLockStore& locks, const Clock& clock, std::string server = "",
                    int64_t lease_ms = 5 * 60 * 1000, int64_t wait_ms = 30 * 1000);
  Result<void> Lock(const std::string& key, const std::string& holder) override;
  void Unlock(const std::string& key, const std::string& holder) override;
  // Releases the locks an earlier process of this server (same name) left; call at start,
  // while no other process of that name can be alive.
  Result<int64_t> ReleaseLeftBehind();

 private:
  metastore::KeyLockStore& locks_;
  const std::string server_;
  const Clock& clock_;
  const int64_t lease_ms_;
  const int64_t wait_ms_;
};

}  // namespace tablemere::objectstore
