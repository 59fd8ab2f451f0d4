#include "sqlite/sqlite.h"

#include <sqlite3.h>

#include <mutex>

namespace tablemere::sqlite {

namespace {
// How long a writer waits for another connection's write lock before giving up.
constexpr int kBusyTimeoutMs = 10000;

Error SqlError(sqlite3* db, const std::string& context) {
  int code = sqlite3_extended_errcode(db);
  ErrorCode ec = ErrorCode::kUnavailable;
  if ((code & 0xff) == SQLITE_CONSTRAINT) ec = ErrorCode::kConflict;
  return Error{ec, context + ": " + sqlite3_errmsg(db), {}};
}
}  // namespace

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, bool synchronous_full) {
  // SQLite's allocation statistics take a global mutex on every allocation, which showed
  // as contention between reader threads; nothing here reads them. Must precede init.
  static std::once_flag configured;
  std::call_once(configured, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : "out of memory";
    sqlite3_close(raw);
    return Fail(ErrorCode::kUnavailable, "cannot open " + path + ": " + msg);
  }
  std::unique_ptr<Db> db(new Db(raw));
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  TM_TRY(db->Exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON;"));
  TM_TRY(db->Exec(synchronous_full ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;"));
  return db;
}

Db::~Db() {
  cache_.clear();
  sqlite3_close(db_);
}

Result<void> Db::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown";
    sqlite3_free(err);
    return Fail(ErrorCode::kUnavailable, "sqlite: " + msg);
  }
  return {};
}

Result<sql::Statement*> Db::Prepare(const std::string& sql) {
  TM_ASSIGN(Statement * st, PrepareNative(sql));
  return st;
}

Result<Statement*> Db::PrepareNative(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return it->second.get();
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    return Fail(SqlError(db_, "prepare"));
  }
  auto owned = std::make_unique<Statement>(db_, stmt);
  Statement* ptr = owned.get();
  cache_.emplace(sql, std::move(owned));
  return ptr;
}

void Db::OnWalCommit(std::function<void(int pages)> hook) {
  wal_hook_ = std::move(hook);
  sqlite3_wal_hook(
      db_,
      [](void* self, sqlite3*, const char*, int pages) {
        static_cast<Db*>(self)->wal_hook_(pages);
        return SQLITE_OK;
      },
      this);
}

Result<void> Db::BackupTo(const std::string& path) {
  sqlite3* dest = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_close(dest);
    return Fail(ErrorCode::kUnavailable, "cannot create " + path);
  }
  sqlite3_exec(dest, "PRAGMA synchronous=FULL", nullptr, nullptr, nullptr);
  sqlite3_backup* backup = sqlite3_backup_init(dest, "main", db_, "main");
  if (backup == nullptr) {
    Error e{ErrorCode::kUnavailable,
            "backup of the database: " + std::string(sqlite3_errmsg(dest)),
            {}};
    sqlite3_close(dest);
    return Fail(std::move(e));
  }
  rc = sqlite3_backup_step(backup, -1);  // all pages, under one read transaction
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) {
    Error e{ErrorCode::kUnavailable,
            "backup of the database: " + std::string(sqlite3_errmsg(dest)),
            {}};
    sqlite3_close(dest);
    return Fail(std::move(e));
  }
  if (sqlite3_close(dest) != SQLITE_OK) {
    return Fail(ErrorCode::kUnavailable, "cannot close " + path);
  }
  return {};
}

int64_t Db::Changes() const { return sqlite3_changes(db_); }
int64_t Db::TotalChanges() const { return sqlite3_total_changes(db_); }

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::BindBlob(int index, std::string_view bytes) {
  sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::Bind(const std::vector<Value>& params) {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  for (size_t i = 0; i < params.size(); i++) {
    int idx = static_cast<int>(i) + 1;
    const Value& v = params[i];
    if (std::holds_alternative<int64_t>(v)) {
      sqlite3_bind_int64(stmt_, idx, std::get<int64_t>(v));
    } else if (std::holds_alternative<double>(v)) {
      sqlite3_bind_double(stmt_, idx, std::get<double>(v));
    } else if (std::holds_alternative<std::string>(v)) {
      const std::string& s = std::get<std::string>(v);
      sqlite3_bind_text(stmt_, idx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_null(stmt_, idx);
    }
  }
  return *this;
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    return false;
  }
  Error e = SqlError(db_, "step");
  sqlite3_reset(stmt_);
  return Fail(std::move(e));
}

Result<void> Statement::Run() {
  while (true) {
    TM_ASSIGN(bool row, Step());
    if (!row) break;
  }
  sqlite3_reset(stmt_);
  return {};
}

int64_t Statement::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
std::string Statement::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}
bool Statement::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

Result<Transaction> Transaction::Begin(Db& db) {
  TM_TRY(db.Exec("BEGIN IMMEDIATE"));
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_ != nullptr) (void)db_->Exec("ROLLBACK");
}

Result<void> Transaction::Commit() {
  Db* db = db_;
  db_ = nullptr;
  return db->Exec("COMMIT");
}

}  // namespace tablemere::sqlite
