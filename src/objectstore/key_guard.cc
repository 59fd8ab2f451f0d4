#include "objectstore/key_guard.h"

#include <functional>
#include <utility>

#include "common/crypto.h"

namespace tablemere::objectstore {

KeyGuard::KeyGuard(std::unique_lock<std::mutex> local, SharedKeyLocks* shared, std::string key,
                   std::string holder)
    : local_(std::move(local)), shared_(shared), key_(std::move(key)), holder_(std::move(holder)) {}

KeyGuard& KeyGuard::operator=(KeyGuard&& o) noexcept {
  Release();
  local_ = std::move(o.local_);
  shared_ = std::exchange(o.shared_, nullptr);
  key_ = std::move(o.key_);
  holder_ = std::move(o.holder_);
  return *this;
}

void KeyGuard::Release() {
  if (shared_) shared_->Unlock(key_, holder_);
  shared_ = nullptr;
  if (local_.owns_lock()) local_.unlock();
}

Result<KeyGuard> KeyLocker::Lock(const std::string& name, bool across_servers) {
  std::unique_lock local(stripes_[std::hash<std::string>{}(name) % stripes_.size()]);
  if (!across_servers || !shared_) return KeyGuard(std::move(local), nullptr, "", "");
  const std::string holder = crypto::HexEncode(random_.Bytes(12));
  TM_TRY(shared_->Lock(name, holder));
  return KeyGuard(std::move(local), shared_, name, holder);
}

}  // namespace tablemere::objectstore
