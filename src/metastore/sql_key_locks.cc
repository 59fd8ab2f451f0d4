// What servers sharing the metastore coordinate through: leased key locks (key_locks),
// which make a check-then-write against the object store exact across servers, and
// versioned shared values (shared_values).
#include "metastore/sql_backend.h"

namespace tablemere::metastore::sql_backend {
namespace {

class SqlKeyLocks final : public KeyLockStore {
 public:
  explicit SqlKeyLocks(Scope scope) : s_(scope) {}

  Result<bool> TryLock(const std::string& key, const std::string& holder, int64_t now_ms,
                       int64_t lease_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<bool> {
      TM_TRY(Run(db,
                 "INSERT INTO key_locks VALUES(?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
                 "holder = excluded.holder, expires_ms = excluded.expires_ms "
                 "WHERE key_locks.expires_ms <= ?",
                 {key, holder, now_ms + lease_ms, now_ms}));
      return db.Changes() > 0;
    });
  }

  Result<void> Unlock(const std::string& key, const std::string& holder) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db, "DELETE FROM key_locks WHERE key = ? AND holder = ?", {key, holder});
    });
  }

  Result<int64_t> ReleaseHeldBy(const std::string& holder_prefix) override {
    return s_.Write([&](sql::Connection& db) -> Result<int64_t> {
      // Holder names are ASCII, so characters and bytes count alike.
      TM_TRY(Run(db, "DELETE FROM key_locks WHERE substr(holder, 1, ?) = ?",
                 {static_cast<int64_t>(holder_prefix.size()), holder_prefix}));
      return static_cast<int64_t>(db.Changes());
    });
  }

 private:
  Scope s_;
};

class SqlSharedValues final : public SharedValueStore {
 public:
  explicit SqlSharedValues(Scope scope) : s_(scope) {}

  Result<std::optional<VersionedValue>> Find(const std::string& name) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::optional<VersionedValue>> {
      auto found = One(db, "SELECT value, version FROM shared_values WHERE name = ?", {name},
                       "no such value", [](sql::Statement& st) {
                         return VersionedValue{st.Text(0), st.Int(1)};
                       });
      if (!found && found.error().code == ErrorCode::kNotFound) return std::nullopt;
      TM_TRY(found);
      return *found;
    });
  }

  Result<bool> CompareAndSet(const std::string& name, const std::string& value,
                             int64_t expected) override {
    return s_.Write([&](sql::Connection& db) -> Result<bool> {
      if (expected == 0) {
        TM_TRY(Run(db, "INSERT INTO shared_values VALUES(?, ?, 1) ON CONFLICT(name) DO NOTHING",
                   {name, value}));
      } else {
        TM_TRY(Run(db,
                   "UPDATE shared_values SET value = ?, version = version + 1 WHERE name = ? "
                   "AND version = ?",
                   {value, name, expected}));
      }
      return db.Changes() > 0;
    });
  }

 private:
  Scope s_;
};

}  // namespace

std::unique_ptr<KeyLockStore> NewKeyLockStore(Scope scope) {
  return std::make_unique<SqlKeyLocks>(scope);
}

std::unique_ptr<SharedValueStore> NewSharedValueStore(Scope scope) {
  return std::make_unique<SqlSharedValues>(scope);
}

}  // namespace tablemere::metastore::sql_backend
