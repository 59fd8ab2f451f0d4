// A minimal RAII wrapper over the SQLite C API, shared by the SQLite metastore and the
// local-disk object index. Statements are prepared once per call site and cached.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tablemere::sqlite {

using Value = std::variant<std::monostate, int64_t, double, std::string>;

class Statement;

// One connection. Not thread-safe: callers serialise access (one per thread or a mutex).
class Db {
 public:
  // Opens (creating) `path` in WAL mode with foreign keys on and a busy timeout.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, bool synchronous_full);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  Result<void> Exec(const std::string& sql);  // one or more statements, no parameters
  // Prepares (or reuses) a statement; bind parameters in order.
  Result<Statement*> Prepare(const std::string& sql);
  int64_t Changes() const;
  // Rows changed by every statement since the connection opened.
  int64_t TotalChanges() const;

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Resets and binds all parameters.
  Statement& Bind(const std::vector<Value>& params);
  // Steps once; true when a row is available. Errors: kConflict on a constraint
  // violation, kUnavailable when the database is busy or failing.
  Result<bool> Step();
  // Runs to completion (for INSERT/UPDATE/DELETE).
  Result<void> Run();

  int64_t Int(int col) const;
  std::string Text(int col) const;
  bool IsNull(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// Runs `sql` with `params` and maps every row through `map(Statement&)`.
template <typename F>
auto Query(Db& db, const std::string& sql, const std::vector<Value>& params, F&& map)
    -> Result<std::vector<decltype(map(std::declval<Statement&>()))>> {
  std::vector<decltype(map(std::declval<Statement&>()))> out;
  TM_ASSIGN(Statement * st, db.Prepare(sql));
  st->Bind(params);
  while (true) {
    TM_ASSIGN(bool row, st->Step());
    if (!row) break;
    out.push_back(map(*st));
  }
  return out;
}

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
