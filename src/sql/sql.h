// The narrow interface the metastore's stores run their SQL through, implemented by the
// SQLite wrapper (src/sqlite) and the PostgreSQL one (src/postgres). Statements use `?`
// placeholders in the order parameters are bound (`?1` to repeat the first); the stores
// write SQL both databases accept, and a driver translates only placeholders.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "common/result.h"

namespace tablemere::sql {

using Value = std::variant<std::monostate, int64_t, double, std::string>;

// A prepared statement, owned by the connection that prepared it.
class Statement {
 public:
  virtual ~Statement() = default;
  // Resets and binds all parameters.
  virtual Statement& Bind(const std::vector<Value>& params) = 0;
  // Steps once; true when a row is available. Errors: kConflict on a constraint
  // violation, kUnavailable when the database is busy, failing or unreachable.
  virtual Result<bool> Step() = 0;
  // Runs to completion (for INSERT/UPDATE/DELETE).
  virtual Result<void> Run() = 0;

  // Columns of the current row. Int reads booleans as 0/1.
  virtual int64_t Int(int col) const = 0;
  virtual std::string Text(int col) const = 0;
  virtual bool IsNull(int col) const = 0;
};

// One connection. Not thread-safe: its owner serialises access.
class Connection {
 public:
  virtual ~Connection() = default;
  // One or more statements without parameters.
  virtual Result<void> Exec(const std::string& sql) = 0;
  // Prepares (or reuses) a statement.
  virtual Result<Statement*> Prepare(const std::string& sql) = 0;
  // Rows changed by the last statement run.
  virtual int64_t Changes() const = 0;
  // Rows changed by every statement since the connection opened.
  virtual int64_t TotalChanges() const = 0;
  // False once the connection is lost: its owner discards it rather than reuse it.
  virtual bool Healthy() const = 0;
};

// Runs `sql` with `params` and maps every row through `map(Statement&)`.
template <typename F>
auto Query(Connection& db, const std::string& sql, const std::vector<Value>& params, F&& map)
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

}  // namespace tablemere::sql
