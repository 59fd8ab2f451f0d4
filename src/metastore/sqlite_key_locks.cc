// The SQLite key locks (key_locks): leased locks that make a check-then-write against
// the object store exact across servers.
#include "metastore/sqlite_backend.h"

namespace tablemere::metastore::sqlite_backend {
namespace {

class SqliteKeyLocks final : public KeyLockStore {
 public:
  explicit SqliteKeyLocks(Scope scope) : s_(scope) {}

  Result<bool> TryLock(const std::string& key, const std::string& holder, int64_t now_ms,
                       int64_t lease_ms) override {
    return s_.Write([&](sqlite::Db& db) -> Result<bool> {
      TM_TRY(Run(db,
                 "INSERT INTO key_locks VALUES(?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
                 "holder = excluded.holder, expires_ms = excluded.expires_ms "
                 "WHERE key_locks.expires_ms <= ?",
                 {key, holder, now_ms + lease_ms, now_ms}));
      return db.Changes() > 0;
    });
  }

  Result<void> Unlock(const std::string& key, const std::string& holder) override {
    return s_.Write([&](sqlite::Db& db) {
      return Run(db, "DELETE FROM key_locks WHERE key = ? AND holder = ?", {key, holder});
    });
  }

 private:
  Scope s_;
};

}  // namespace

std::unique_ptr<KeyLockStore> NewKeyLockStore(Scope scope) {
  return std::make_unique<SqliteKeyLocks>(scope);
}

}  // namespace tablemere::metastore::sqlite_backend
