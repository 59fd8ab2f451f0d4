#include "common/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tablemere {
namespace {

Error Unavailable(const std::string& what) {
  return Error{ErrorCode::kUnavailable, what + ": " + std::strerror(errno), {}};
}

}  // namespace

Result<void> WriteFileAtomically(const std::string& path, const std::string& text, int mode) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Fail(Unavailable("cannot create " + tmp));
  auto abandon = [&](const std::string& what) {
    Error e = Unavailable(what);
    ::close(fd);
    ::unlink(tmp.c_str());
    return Fail(e);
  };
  // The mode is applied explicitly too: open() honours the umask, and an existing
  // temporary file keeps its old mode.
  if (::fchmod(fd, static_cast<mode_t>(mode)) != 0) return abandon("cannot chmod " + tmp);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return abandon("cannot write " + tmp);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return abandon("cannot sync " + tmp);
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return Fail(Unavailable("cannot close " + tmp));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Error e = Unavailable("cannot rename " + tmp);
    ::unlink(tmp.c_str());
    return Fail(e);
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return Fail(Unavailable("cannot open " + dir));
  int synced = ::fsync(dfd);
  ::close(dfd);
  if (synced != 0) return Fail(Unavailable("cannot sync " + dir));
  return {};
}

Result<std::string> ReadWholeFile(const std::string& path) {
  // POSIX rather than a stream: only a missing file is kNotFound (a file root cannot read,
  // or a directory in its place, is an error to report, never taken for "none yet").
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Fail(Error{ErrorCode::kNotFound, path, {}});
    return Fail(Unavailable("cannot read " + path).With("reason", std::strerror(errno)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return Fail(Unavailable("cannot read " + path).With("reason", std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    return Fail(Unavailable("cannot read " + path).With("reason", std::strerror(EISDIR)));
  }
  std::string out;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(Unavailable("cannot read " + path).With("reason", std::strerror(errno)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<FileLock> FileLock::Take(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Fail(ErrorCode::kUnavailable, "cannot open " + path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return Fail(ErrorCode::kUnavailable,
                "the data directory is in use by another tablemere-server (" + path +
                    " is locked); stop it or choose another --data-dir");
  }
  return FileLock(fd);
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tablemere
