#include "common/key_ring.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "common/crypto.h"

namespace tablemere {

namespace {
constexpr size_t kMasterKeySize = 32;
}

Result<KeyRing> KeyRing::LoadOrCreate(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    std::string key(kMasterKeySize, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), kMasterKeySize) != 1) {
      return Fail(ErrorCode::kUnavailable, "cannot generate the master key");
    }
    std::string tmp = path + ".tmp";
    int w = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (w < 0) return Fail(ErrorCode::kUnavailable, "cannot create " + tmp);
    bool ok =
        ::write(w, key.data(), key.size()) == static_cast<ssize_t>(key.size()) && ::fsync(w) == 0;
    ::close(w);
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
      return Fail(ErrorCode::kUnavailable, "cannot write " + path);
    }
    return KeyRing(std::move(key));
  }
  if (fd < 0) return Fail(ErrorCode::kUnavailable, "cannot read " + path);
  std::string key(kMasterKeySize + 1, '\0');
  ssize_t n = ::read(fd, key.data(), key.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(kMasterKeySize)) {
    return Fail(ErrorCode::kUnavailable, path + " must hold exactly 32 bytes");
  }
  key.resize(kMasterKeySize);
  return KeyRing(std::move(key));
}

std::string KeyRing::Derive(const std::string& purpose) const {
  return crypto::HmacSha256(master_, "tablemere/" + purpose);
}

}  // namespace tablemere
