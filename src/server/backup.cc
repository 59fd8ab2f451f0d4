#include "server/backup.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/files.h"

namespace tablemere::server {
namespace {

namespace fs = std::filesystem;

// Written last: a directory without it is not a complete backup.
constexpr char kManifest[] = "BACKUP.json";
// What a backup holds besides the two databases and the blobs.
constexpr const char* kKeyFiles[] = {"master.key", "jwt/current.pem", "jwt/previous.pem",
                                     "jwt/keys.json"};

Error Invalid(const std::string& message) {
  return Error{ErrorCode::kInvalidInput, message, {}}.With("code", "invalid_value");
}

Result<void> Sync(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  bool ok = fd >= 0 && ::syncfs(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok) return Fail(ErrorCode::kUnavailable, "cannot sync " + dir);
  return {};
}

// A small file copied whole and synced (absent sources are skipped).
Result<void> CopySmall(const std::string& from, const std::string& to) {
  auto text = ReadWholeFile(from);
  if (!text) {
    if (text.error().code == ErrorCode::kNotFound) return {};
    return Fail(text.error());
  }
  std::error_code ec;
  fs::create_directories(fs::path(to).parent_path(), ec);
  return WriteFileAtomically(to, *text, 0600);
}

// Every file under `from` linked (or copied, across file systems) to the same place
// under `to`.
Result<int64_t> LinkTree(const std::string& from, const std::string& to) {
  int64_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    fs::path target = fs::path(to) / fs::relative(it->path(), from);
    if (it->is_directory()) {
      fs::create_directories(target, ec);
      if (ec) break;
      continue;
    }
    if (::link(it->path().c_str(), target.c_str()) != 0 && errno != EEXIST) {
      if (errno != EXDEV) {
        return Fail(ErrorCode::kUnavailable,
                    "link " + it->path().string() + ": " + std::strerror(errno));
      }
      fs::copy_file(it->path(), target, fs::copy_options::overwrite_existing, ec);
      if (ec) break;
    }
    n++;
  }
  if (ec) return Fail(ErrorCode::kUnavailable, "copy " + from + ": " + ec.message());
  return n;
}

}  // namespace

Result<BackupDone> Backup(metastore::Metastore& meta, objectstore::ObjectStore& objects,
                          const std::string& data_dir, const std::string& to, const Clock& clock) {
  if (to.empty() || to.front() != '/') return Fail(Invalid("to: an absolute directory path"));
  std::error_code ec;
  if (fs::exists(to, ec)) return Fail(Invalid("to: " + to + " exists; name a new directory"));
  fs::create_directories(to, ec);
  if (ec) return Fail(ErrorCode::kUnavailable, "cannot create " + to + ": " + ec.message());
  fs::permissions(to, fs::perms::owner_all, fs::perm_options::replace, ec);
  TM_ASSIGN(auto held, objects.BeginBackup(to + "/objects"));
  const int64_t at_ms = clock.NowMillis();
  TM_TRY(meta.Backup(to + "/state.db", [&] { return held->Snapshot(); }));
  TM_ASSIGN(const int64_t blobs, held->Finish());
  for (const char* name : kKeyFiles) TM_TRY(CopySmall(data_dir + "/" + name, to + "/" + name));
  TM_TRY(Sync(to));
  TM_TRY(WriteFileAtomically(
      to + "/" + kManifest,
      nlohmann::json{{"format", 1}, {"at_ms", at_ms}, {"version", TABLEMERE_VERSION}}.dump() + "\n",
      0600));
  return BackupDone{to, at_ms, blobs};
}

Result<void> Restore(const std::string& from, const std::string& data_dir) {
  std::error_code ec;
  if (!fs::exists(from + "/" + kManifest, ec)) {
    return Fail(Invalid("from: " + from + " is not a complete backup (no " + kManifest + ")"));
  }
  if (fs::exists(data_dir, ec) && !fs::is_empty(data_dir, ec)) {
    return Fail(Invalid("--data-dir " + data_dir + " is not empty; restore into a new directory"));
  }
  fs::create_directories(data_dir + "/objects", ec);
  if (ec) return Fail(ErrorCode::kUnavailable, "cannot create " + data_dir + ": " + ec.message());
  fs::permissions(data_dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  // The databases are copied (a server writes them in place); blobs are immutable, so
  // links are as good as copies.
  fs::copy_file(from + "/state.db", data_dir + "/state.db", ec);
  if (!ec) fs::copy_file(from + "/objects/index.db", data_dir + "/objects/index.db", ec);
  if (ec) return Fail(ErrorCode::kUnavailable, "cannot copy the databases: " + ec.message());
  TM_TRY(LinkTree(from + "/objects/blobs", data_dir + "/objects/blobs"));
  for (const char* name : kKeyFiles) {
    TM_TRY(CopySmall(from + "/" + name, data_dir + "/" + name));
  }
  fs::permissions(data_dir + "/jwt", fs::perms::owner_all, fs::perm_options::replace, ec);
  return Sync(data_dir);
}

}  // namespace tablemere::server
