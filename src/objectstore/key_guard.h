// Per-key mutual exclusion for writes the server checks itself: a stripe mutex within this
// process and, when the deployment has them, a lock shared by every server in front of the
// same store (SharedKeyLocks, the metastore's KeyLockStore in production).
#pragma once

#include <array>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/result.h"

namespace tablemere::objectstore {

// Locks on names shared by every server in front of the same store: with them, writes
// the server checks itself (a store that ignores If-None-Match / If-Match, a versioned
// write that keeps the version it replaces) are exact across replicas, not only within one.
class SharedKeyLocks {
 public:
  virtual ~SharedKeyLocks() = default;
  // Holds `key` for `holder`, waiting while another server holds it; kUnavailable when
  // it could not be had in time (or the lock store failed).
  virtual Result<void> Lock(const std::string& key, const std::string& holder) = 0;
  virtual void Unlock(const std::string& key, const std::string& holder) = 0;
};

// A held name; released when destroyed.
class KeyGuard {
 public:
  KeyGuard() = default;
  KeyGuard(std::unique_lock<std::mutex> local, SharedKeyLocks* shared, std::string key,
           std::string holder);
  KeyGuard(KeyGuard&& o) noexcept { *this = std::move(o); }
  KeyGuard& operator=(KeyGuard&& o) noexcept;
  ~KeyGuard() { Release(); }

 private:
  void Release();
  std::unique_lock<std::mutex> local_;
  SharedKeyLocks* shared_ = nullptr;
  std::string key_, holder_;
};

class KeyLocker {
 public:
  // `shared` may be null: then names are held within this process only.
  KeyLocker(SharedKeyLocks* shared, Random& random) : shared_(shared), random_(random) {}
  // Holds `name` in this process and, when `across_servers` and there are shared locks,
  // across servers too.
  Result<KeyGuard> Lock(const std::string& name, bool across_servers = true);

 private:
  std::array<std::mutex, 64> stripes_;
  SharedKeyLocks* shared_;
  Random& random_;
};

}  // namespace tablemere::objectstore
