#include "postgres/postgres.h"

#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tablemere::postgres {

namespace {

// Seconds a connection attempt may take before the server counts as unreachable.
constexpr const char* kConnectTimeoutS = "10";

// A failed result as a typed error: integrity violations (SQLSTATE class 23) are
// conflicts; everything else, including serialisation failures, deadlocks, timeouts and
// lost connections, means the database is unavailable for now.
Error ResultError(pg_conn* conn, pg_result* res, const char* context) {
  const char* state = res != nullptr ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  const char* message = res != nullptr ? PQresultErrorMessage(res) : PQerrorMessage(conn);
  std::string text = message != nullptr && *message ? message : PQerrorMessage(conn);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  ErrorCode code = ErrorCode::kUnavailable;
  if (state != nullptr && std::strncmp(state, "23", 2) == 0) code = ErrorCode::kConflict;
  Error e{code, std::string("postgres ") + context + ": " + text, {}};
  if (state != nullptr) e = std::move(e).With("sqlstate", state);
  return e;
}

void IgnoreNotice(void*, const char*) {}  // "already exists, skipping" and the like

}  // namespace

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& conninfo,
                                                     int statement_timeout_ms) {
  std::string options = "-c statement_timeout=" + std::to_string(statement_timeout_ms) +
                        " -c lock_timeout=" + std::to_string(statement_timeout_ms);
  // The caller's string first: the keywords after it override what it says of them.
  const char* keys[] = {"dbname",          "connect_timeout",  "options",
                        "client_encoding", "application_name", nullptr};
  const char* values[] = {conninfo.c_str(), kConnectTimeoutS, options.c_str(),
                          "UTF8",           "tablemere",      nullptr};
  pg_conn* conn = PQconnectdbParams(keys, values, 1);
  if (conn == nullptr) return Fail(ErrorCode::kUnavailable, "postgres: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    PQfinish(conn);
    return Fail(ErrorCode::kUnavailable, "cannot connect to PostgreSQL: " + msg);
  }
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  return std::unique_ptr<Connection>(new Connection(conn));
}

Connection::~Connection() {
  cache_.clear();
  PQfinish(conn_);
}

bool Connection::Healthy() const { return PQstatus(conn_) == CONNECTION_OK; }

Result<void> Connection::Check(pg_result* res, const char* context) {
  ExecStatusType status = res != nullptr ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK) {
    const char* tuples = PQcmdTuples(res);
    changes_ = tuples != nullptr && *tuples ? std::atoll(tuples) : 0;
    total_changes_ += changes_;
    return {};
  }
  if (status == PGRES_TUPLES_OK) return {};
  return Fail(ResultError(conn_, res, context));
}

Result<void> Connection::Exec(const std::string& sql) {
  pg_result* res = PQexec(conn_, sql.c_str());
  auto checked = Check(res, "exec");
  PQclear(res);
  return checked;
}

std::string Connection::Numbered(const std::string& sql, int* params) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 0;
  int highest = 0;
  char quote = 0;
  for (size_t i = 0; i < sql.size(); i++) {
    char c = sql[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      out.push_back(c);
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      out.push_back(c);
      continue;
    }
    if (c != '?') {
      out.push_back(c);
      continue;
    }
    size_t j = i + 1;
    while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') j++;
    int n = j > i + 1 ? std::atoi(sql.substr(i + 1, j - i - 1).c_str()) : ++next;
    if (n > highest) highest = n;
    out += "$" + std::to_string(n);
    i = j - 1;
  }
  *params = highest;
  return out;
}

Result<sql::Statement*> Connection::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return it->second.get();
  int params = 0;
  std::string numbered = Numbered(sql, &params);
  std::string name = "s" + std::to_string(++next_statement_);
  // Parameter types are left to the server, which infers each from its use.
  pg_result* res = PQprepare(conn_, name.c_str(), numbered.c_str(), params, nullptr);
  auto checked = Check(res, "prepare");
  PQclear(res);
  TM_TRY(checked);
  auto owned = std::make_unique<Statement>(*this, name, params);
  Statement* ptr = owned.get();
  cache_.emplace(sql, std::move(owned));
  return ptr;
}

Statement::~Statement() { PQclear(result_); }

Statement& Statement::Bind(const std::vector<sql::Value>& params) {
  PQclear(result_);
  result_ = nullptr;
  executed_ = false;
  row_ = -1;
  bound_ = params;
  return *this;
}

Result<void> Statement::Execute() {
  executed_ = true;
  if (static_cast<int>(bound_.size()) != params_) {
    return Fail(ErrorCode::kInternal, "postgres: " + std::to_string(bound_.size()) +
                                          " parameters bound to a statement of " +
                                          std::to_string(params_));
  }
  std::vector<std::string> text(bound_.size());
  std::vector<const char*> values(bound_.size(), nullptr);
  for (size_t i = 0; i < bound_.size(); i++) {
    const sql::Value& v = bound_[i];
    if (const auto* n = std::get_if<int64_t>(&v)) {
      text[i] = std::to_string(*n);
    } else if (const auto* d = std::get_if<double>(&v)) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", *d);
      text[i] = buf;
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      text[i] = *s;
    } else {
      continue;  // NULL
    }
    values[i] = text[i].c_str();
  }
  result_ = PQexecPrepared(conn_.conn_, name_.c_str(), params_, values.data(), nullptr, nullptr, 0);
  return conn_.Check(result_, "statement");
}

Result<bool> Statement::Step() {
  if (!executed_) TM_TRY(Execute());
  if (result_ == nullptr || PQresultStatus(result_) != PGRES_TUPLES_OK) return false;
  row_++;
  return row_ < PQntuples(result_);
}

Result<void> Statement::Run() {
  if (!executed_) TM_TRY(Execute());
  return {};
}

int64_t Statement::Int(int col) const {
  const char* v = PQgetvalue(result_, row_, col);
  if (v == nullptr || *v == '\0') return 0;
  if (v[0] == 't' && v[1] == '\0') return 1;
  if (v[0] == 'f' && v[1] == '\0') return 0;
  return std::strtoll(v, nullptr, 10);
}

std::string Statement::Text(int col) const {
  const char* v = PQgetvalue(result_, row_, col);
  return v != nullptr ? std::string(v, static_cast<size_t>(PQgetlength(result_, row_, col)))
                      : std::string();
}

bool Statement::IsNull(int col) const { return PQgetisnull(result_, row_, col) != 0; }

}  // namespace tablemere::postgres
