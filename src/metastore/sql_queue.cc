// The SQL (SQLite and PostgreSQL) TaskStore (a durable queue with leases) and AuditStore (who did
// what).
#include "metastore/sql_backend.h"

namespace tablemere::metastore::sql_backend {
namespace {

// Claims, results and plain enqueues are kRows writers (see sql_backend.h), exact by
// their own rows: a claim locks the task it picks and skips those other claims hold, and
// every result is conditional on the claim's attempt number. Only EnqueueFirstOfKind,
// which reads before it writes, runs alone.
class SqlTasks final : public TaskStore {
 public:
  explicit SqlTasks(Scope scope) : s_(scope) {}

  Result<void> Enqueue(const std::string& kind, const std::string& payload_json) override {
    return s_.Write(
        [&](sql::Connection& db) {
          return InsertTask(db, s_.core.clock, NewTask{kind, payload_json});
        },
        WriteLock::kRows);
  }

  Result<void> EnqueueTask(const NewTask& task) override {
    return s_.Write([&](sql::Connection& db) { return InsertTask(db, s_.core.clock, task); },
                    WriteLock::kRows);
  }

  Result<bool> EnqueueFirstOfKind(const NewTask& task) override {
    return s_.Write([&](sql::Connection& db) -> Result<bool> {
      TM_ASSIGN(bool queued, Exists(db, "SELECT 1 FROM tasks WHERE kind = ?", {task.kind}));
      if (queued) return false;
      TM_TRY(InsertTask(db, s_.core.clock, task));
      return true;
    });
  }

  // After a fenced change: kConflict when it changed nothing (the claim was taken over).
  static Result<void> Fenced(sql::Connection& db) {
    if (db.Changes() > 0) return {};
    return Fail(Error{ErrorCode::kConflict, "the task's lease was taken over", {}}.With("conflict",
                                                                                        "lease"));
  }

  Result<std::optional<Task>> Claim(int64_t lease_ms) override {
    int64_t now = s_.core.clock.NowMillis();
    const std::string pick =
        std::string(
            "SELECT id, kind, payload, attempts FROM tasks WHERE run_after_ms <= ? "
            "ORDER BY id LIMIT 1") +
        s_.core.pool->SkipLocked();
    return s_.Write(
        [&](sql::Connection& db) -> Result<std::optional<Task>> {
          TM_ASSIGN(auto* st, db.Prepare(pick));
          TM_ASSIGN(bool row, st->Bind({now}).Step());
          if (!row) return std::optional<Task>();
          Task t{st->Int(0), st->Text(1), st->Text(2), static_cast<int>(st->Int(3))};
          t.claim = t.attempts + 1;
          st->Bind({});
          TM_TRY(Run(db, "UPDATE tasks SET run_after_ms = ?, attempts = attempts + 1 WHERE id = ?",
                     {now + lease_ms, t.id}));
          return std::optional<Task>(t);
        },
        WriteLock::kRows);
  }

  Result<void> Complete(const Task& task) override {
    return s_.Write(
        [&](sql::Connection& db) -> Result<void> {
          TM_TRY(Run(db, "DELETE FROM tasks WHERE id = ? AND attempts = ?",
                     {task.id, int64_t{task.claim}}));
          return Fenced(db);
        },
        WriteLock::kRows);
  }

  Result<void> CompleteAndEnqueue(const Task& task, const NewTask& next) override {
    return s_.Write(
        [&](sql::Connection& db) -> Result<void> {
          TM_TRY(Run(db, "DELETE FROM tasks WHERE id = ? AND attempts = ?",
                     {task.id, int64_t{task.claim}}));
          TM_TRY(Fenced(db));
          return InsertTask(db, s_.core.clock, next);
        },
        WriteLock::kRows);
  }

  Result<void> Retry(const Task& task, int64_t delay_ms) override {
    int64_t at = s_.core.clock.NowMillis() + delay_ms;
    return s_.Write(
        [&](sql::Connection& db) -> Result<void> {
          TM_TRY(Run(db, "UPDATE tasks SET run_after_ms = ? WHERE id = ? AND attempts = ?",
                     {at, task.id, int64_t{task.claim}}));
          return Fenced(db);
        },
        WriteLock::kRows);
  }

  Result<std::vector<Task>> ListOfKind(const std::string& kind) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::vector<Task>> {
      return sql::Query(
          db, "SELECT id, kind, payload, attempts FROM tasks WHERE kind = ? ORDER BY id", {kind},
          [](sql::Statement& st) {
            return Task{st.Int(0), st.Text(1), st.Text(2), static_cast<int>(st.Int(3))};
          });
    });
  }

  Result<int64_t> QueueDepth() override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, "SELECT count(*) FROM tasks", {}, "",
                 [](sql::Statement& st) { return st.Int(0); });
    });
  }

 private:
  Scope s_;
};

class SqlAudit final : public AuditStore {
 public:
  explicit SqlAudit(Scope scope) : s_(scope) {}

  Result<void> Record(const AuditEvent& e) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db,
                 "INSERT INTO audit_events(at_ms, principal_id, org_id, action, target_type, "
                 "target_id, request_id, detail, ip) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 {e.at_ms, e.principal_id, e.org_id, e.action, e.target_type, e.target_id,
                  e.request_id, e.detail_json, e.ip});
    });
  }

  Result<std::vector<AuditEvent>> List(const std::string& org_id, const std::string& principal_id,
                                       const std::string& action_prefix, int64_t since_ms,
                                       int limit) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::vector<AuditEvent>> {
      std::string sql =
          "SELECT id, at_ms, principal_id, org_id, action, target_type, target_id, request_id, "
          "detail, ip FROM audit_events WHERE ";
      sql += org_id.empty() ? "principal_id = ?" : "org_id = ?";
      sql +=
          " AND at_ms >= ? AND substr(action, 1, CAST(? AS INTEGER)) = ? ORDER BY at_ms DESC, id "
          "DESC LIMIT ?";
      return sql::Query(db, sql,
                        {org_id.empty() ? principal_id : org_id, since_ms,
                         static_cast<int64_t>(action_prefix.size()), action_prefix, int64_t{limit}},
                        [&](sql::Statement& st) {
                          return AuditEvent{st.Int(0),  st.Int(1),  st.Text(2), st.Text(3),
                                            st.Text(4), st.Text(5), st.Text(6), st.Text(7),
                                            st.Text(8), st.Text(9)};
                        });
    });
  }

 private:
  Scope s_;
};

}  // namespace

std::unique_ptr<TaskStore> NewTaskStore(Scope scope) { return std::make_unique<SqlTasks>(scope); }
std::unique_ptr<AuditStore> NewAuditStore(Scope scope) { return std::make_unique<SqlAudit>(scope); }

}  // namespace tablemere::metastore::sql_backend
