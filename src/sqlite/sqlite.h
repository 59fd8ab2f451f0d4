// A minimal RAII wrapper over the SQLite C API, shared by the SQLite metastore (through
// the driver-neutral interface of src/sql) and the local-disk object index. Statements
// are prepared once per call site and cached.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common/result.h"
#include "sql/sql.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tablemere::sqlite {

using Value = sql::Value;
using sql::Query;

class Statement;

// One connection. Not thread-safe: callers serialise access (one per thread or a mutex).
class Db final : public sql::Connection {
 public:
  // Opens (creating) `path` in WAL mode with foreign keys on and a busy timeout.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, bool synchronous_full);
  ~Db() override;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  Result<void> Exec(const std::string& sql) override;
  Result<sql::Statement*> Prepare(const std::string& sql) override;
  // The same statement, for SQLite-only calls (BindBlob).
  Result<Statement*> PrepareNative(const std::string& sql);
  int64_t Changes() const override;
  int64_t TotalChanges() const override;
  bool Healthy() const override { return true; }  // a file does not disconnect
  // Copies the database as committed now into a new file at `path` (SQLite's online
  // backup: writers on other connections go on; the copy is one consistent state).
  Result<void> BackupTo(const std::string& path);
  // Calls `hook` after each commit on this connection with the write-ahead log's length
  // in pages, instead of SQLite's own checkpoint at 1000 pages: the caller checkpoints
  // (`PRAGMA wal_checkpoint`, on any connection) when it sees fit. Runs on the
  // committing thread; must not use this connection.
  void OnWalCommit(std::function<void(int pages)> hook);

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::function<void(int)> wal_hook_;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

class Statement final : public sql::Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement() override;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(const std::vector<Value>& params) override;
  // Binds parameter `index` (1-based) as a BLOB of `bytes`, after Bind (which clears it).
  // sql::Value's strings bind as TEXT, which SQL functions and casts may cut at a NUL.
  Statement& BindBlob(int index, std::string_view bytes);
  Result<bool> Step() override;
  Result<void> Run() override;
  int64_t Int(int col) const override;
  std::string Text(int col) const override;
  bool IsNull(int col) const override;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// BEGIN IMMEDIATE … COMMIT, rolled back on destruction unless committed.
class Transaction {
 public:
  static Result<Transaction> Begin(Db& db);
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  ~Transaction();
  Result<void> Commit();

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_;
};

}  // namespace tablemere::sqlite
