#include "objectstore/shared_key_locks.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace tablemere::objectstore {

MetastoreKeyLocks::MetastoreKeyLocks(metastore::KeyLockStore& locks, const Clock& clock,
                                     std::string server, int64_t lease_ms, int64_t wait_ms)
    : locks_(locks),
      server_(std::move(server)),
      clock_(clock),
      lease_ms_(lease_ms),
      wait_ms_(wait_ms) {}

Result<int64_t> MetastoreKeyLocks::ReleaseLeftBehind() {
  if (server_.empty()) return int64_t{0};
  return locks_.ReleaseHeldBy(server_ + "#");
}

Result<void> MetastoreKeyLocks::Lock(const std::string& key, const std::string& bare_holder) {
  const std::string holder = server_.empty() ? bare_holder : server_ + "#" + bare_holder;
  // Waited out in real time: the server's clock (which a test may move) only dates leases.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms_);
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    auto taken = locks_.TryLock(key, holder, clock_.NowMillis(), lease_ms_);
    if (!taken) {
      return Fail(Error{
          ErrorCode::kUnavailable,
          "The lock on the key could not be taken: " + taken.error().message,
          {}}.With("backend", "lock"));
    }
    if (*taken) return {};
    if (std::chrono::steady_clock::now() + pause > deadline) {
      return Fail(Error{
          ErrorCode::kUnavailable,
          "Another write to this key is in progress on another server; retry.",
          {}}.With("backend", "busy"));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

void MetastoreKeyLocks::Unlock(const std::string& key, const std::string& holder) {
  // A lock left behind by a failed release runs out with its lease.
  (void)locks_.Unlock(key, server_.empty() ? holder : server_ + "#" + holder);
}

}  // namespace tablemere::objectstore
