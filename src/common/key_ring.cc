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

Result<KeyRing> KeyRing::Load(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Fail(ErrorCode::kUnavailable, "cannot read the master key file " + path +
                                             " (create it with: openssl rand -hex 32 > " + path +
                                             ")");
  }
  std::string text(2 * kMasterKeySize + 2, '\0');
  ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  if (n == static_cast<ssize_t>(kMasterKeySize)) {
    text.resize(kMasterKeySize);
    return KeyRing(std::move(text));
  }
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string key;
  if (text.size() == 2 * kMasterKeySize) {
    for (size_t i = 0; i < text.size(); i += 2) {
      int hi = hex(text[i]);
      int lo = hex(text[i + 1]);
      if (hi < 0 || lo < 0) break;
      key.push_back(static_cast<char>(hi * 16 + lo));
    }
  }
  if (key.size() != kMasterKeySize) {
    return Fail(ErrorCode::kUnavailable,
                path + " must hold 32 bytes or 64 hex digits (openssl rand -hex 32)");
  }
  return KeyRing(std::move(key));
}

std::string KeyRing::Derive(const std::string& purpose) const {
  return crypto::HmacSha256(master_, "tablemere/" + purpose);
}

}  // namespace tablemere
