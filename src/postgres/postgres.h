// A minimal RAII wrapper over libpq implementing the driver-neutral interface of src/sql,
// for the metastore's PostgreSQL backend. Statements are prepared once per connection and
// SQL text; `?` placeholders become `$n`. Parameters go as text: integers typed int8 and
// floats float8, strings left for the server to type from their use.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sql/sql.h"

struct pg_conn;
struct pg_result;

namespace tablemere::postgres {

class Statement;

class Connection final : public sql::Connection {
 public:
  // Connects with `conninfo` (a libpq URI or key=value string); every statement is
  // bounded by `statement_timeout_ms`. kUnavailable when the server cannot be reached.
  static Result<std::unique_ptr<Connection>> Open(const std::string& conninfo,
                                                  int statement_timeout_ms);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Result<void> Exec(const std::string& sql) override;
  Result<sql::Statement*> Prepare(const std::string& sql) override;
  int64_t Changes() const override { return changes_; }
  int64_t TotalChanges() const override { return total_changes_; }
  bool Healthy() const override;

  // `sql` with `?`/`?N` placeholders rewritten to `$N` (outside quoted text).
  static std::string Numbered(const std::string& sql, int* params);

 private:
  friend class Statement;
  explicit Connection(pg_conn* conn) : conn_(conn) {}
  // The result's status as a Result; records the rows it changed.
  Result<void> Check(pg_result* res, const char* context);
  pg_conn* conn_;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
  int64_t changes_ = 0;
  int64_t total_changes_ = 0;
  int next_statement_ = 0;
};

class Statement final : public sql::Statement {
 public:
  Statement(Connection& conn, std::string name, int params)
      : conn_(conn), name_(std::move(name)), params_(params) {}
  ~Statement() override;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(const std::vector<sql::Value>& params) override;
  Result<bool> Step() override;
  Result<void> Run() override;
  int64_t Int(int col) const override;
  std::string Text(int col) const override;
  bool IsNull(int col) const override;

 private:
  Result<void> Execute();
  Connection& conn_;
  const std::string name_;
  const int params_;
  std::vector<sql::Value> bound_;
  pg_result* result_ = nullptr;  // of the last execution, rows read from `row_`
  bool executed_ = false;
  int row_ = -1;
};

}  // namespace tablemere::postgres
