// Small files written whole and atomically: secrets, credentials, configuration.
#pragma once

#include <string>

#include "common/result.h"

namespace tablemere {

// Writes `text` to `path` so that a crash leaves the old file or the new one, never a
// part: a temporary file beside it created with `mode` (e.g. 0600), written, fsynced,
// renamed over `path`, then the directory fsynced. Every step's failure is reported as
// kUnavailable naming the file (never its contents).
Result<void> WriteFileAtomically(const std::string& path, const std::string& text, int mode);

// The whole file; kNotFound when it cannot be opened, kUnavailable when a read fails.
Result<std::string> ReadWholeFile(const std::string& path);

// An exclusive lock on a file (created if absent) held until destruction; the kernel
// releases it with the process, however it ends.
class FileLock {
 public:
  // kUnavailable when another process holds it: "the data directory is in use by another
  // tablemere-server (<path> is locked); stop it or choose another --data-dir".
  static Result<FileLock> Take(const std::string& path);
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace tablemere
