// The server's secret keys. One 32-byte master key (from a file the operator controls,
// created 0600 on first start) from which every purpose-specific key is derived, so a
// key used for sealing sessions is never the key used for signing tokens.
#pragma once

#include <string>

#include "common/result.h"

namespace tablemere {

class KeyRing {
 public:
  // Loads the master key from `path`, creating it with fresh random bytes when absent.
  // Errors: kUnavailable (unreadable, wrong size, cannot create).
  static Result<KeyRing> LoadOrCreate(const std::string& path);
  // Loads a master key that must exist: 32 raw bytes, or 64 hex digits (a trailing newline
  // allowed, as `openssl rand -hex 32 > file` writes). Servers sharing a metastore read the
  // same file. Errors: kUnavailable naming the path and the fix.
  static Result<KeyRing> Load(const std::string& path);
  explicit KeyRing(std::string master) : master_(std::move(master)) {}

  // A 32-byte key for `purpose` ("session-seal", "catalog-token", …).
  std::string Derive(const std::string& purpose) const;

 private:
  std::string master_;
};

}  // namespace tablemere
