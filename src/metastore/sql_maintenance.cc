// The SQL (SQLite and PostgreSQL) MaintenanceStore: the last run of each maintenance job on each
// table, the noncurrent objects orphan cleanup keeps, and where compactions moved rows.
#include "metastore/sql_backend.h"

namespace tablemere::metastore::sql_backend {
namespace {

class SqlMaintenance final : public MaintenanceStore {
 public:
  explicit SqlMaintenance(Scope scope) : s_(scope) {}

  // kRows writers (a commit notes itself): exact by the visit's key, which refuses a
  // second start, and by the conditional end.
  Result<NotedCommit> NoteCommit(const std::string& key, int64_t now_ms,
                                 const NewTask& visit) override {
    return s_.Write(
        [&](sql::Connection& db) -> Result<NotedCommit> {
          // A visit ended between the two statements is started again by the loop's next
          // round (each statement sees what committed before it).
          for (int round = 0; round < 3; round++) {
            TM_TRY(Run(db, "INSERT INTO maintenance_visits VALUES(?, ?, ?) ON CONFLICT DO NOTHING",
                       {key, now_ms, now_ms}));
            if (db.Changes() == 1) {
              TM_TRY(InsertTask(db, s_.core.clock, visit));
              return NotedCommit{PendingVisit{now_ms, now_ms}, true};
            }
            TM_TRY(Run(db,
                       "UPDATE maintenance_visits SET last_ms = ? WHERE key = ? AND last_ms < ?",
                       {now_ms, key, now_ms}));
            auto pending = FindIn(db, key);
            if (!pending) return Fail(pending.error());
            if (*pending) return NotedCommit{**pending, false};
          }
          return Fail(ErrorCode::kUnavailable, "the table's maintenance visit kept changing");
        },
        WriteLock::kRows);
  }

  Result<std::optional<PendingVisit>> FindPendingVisit(const std::string& key) override {
    return s_.Read([&](sql::Connection& db) { return FindIn(db, key); });
  }

  Result<bool> EndPendingVisit(const std::string& key, int64_t last_ms) override {
    return s_.Write(
        [&](sql::Connection& db) -> Result<bool> {
          TM_TRY(Run(db, "DELETE FROM maintenance_visits WHERE key = ? AND last_ms <= ?",
                     {key, last_ms}));
          return db.Changes() == 1;
        },
        WriteLock::kRows);
  }

  static Result<std::optional<PendingVisit>> FindIn(sql::Connection& db, const std::string& key) {
    auto found = One(db, "SELECT first_ms, last_ms FROM maintenance_visits WHERE key = ?", {key},
                     "visit", [](sql::Statement& st) {
                       return PendingVisit{st.Int(0), st.Int(1)};
                     });
    if (found) return std::optional<PendingVisit>(*found);
    if (found.error().code == ErrorCode::kNotFound) return std::optional<PendingVisit>();
    return Fail(found.error());
  }

  Result<void> RecordRun(const MaintenanceRun& run) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db,
                 "INSERT INTO maintenance_runs (warehouse_id, namespace, name, job, at_ms, result) "
                 "SELECT ?, ?, ?, ?, CAST(? AS BIGINT), ? " +
                     std::string(kTableExists) +
                     " ON CONFLICT(warehouse_id, namespace, name, job) DO UPDATE SET "
                     "at_ms = excluded.at_ms, result = excluded.result",
                 {run.warehouse_id, JoinNs(run.namespace_levels), run.table, run.job, run.at_ms,
                  run.result_json, run.warehouse_id, JoinNs(run.namespace_levels), run.table});
    });
  }

  Result<std::vector<MaintenanceRun>> LastRuns(const std::string& warehouse_id,
                                               const std::vector<std::string>& ns,
                                               const std::string& table) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::vector<MaintenanceRun>> {
      return sql::Query(
          db,
          "SELECT job, at_ms, result FROM maintenance_runs WHERE warehouse_id = ? AND "
          "namespace = ? AND name = ? ORDER BY job",
          {warehouse_id, JoinNs(ns), table}, [&](sql::Statement& st) {
            return MaintenanceRun{warehouse_id, ns, table, st.Text(0), st.Int(1), st.Text(2)};
          });
    });
  }

  Result<std::vector<NoncurrentObject>> Noncurrent(const std::string& warehouse_id,
                                                   const std::vector<std::string>& ns,
                                                   const std::string& table) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db,
                        "SELECT object_key, size, found_ms FROM noncurrent_objects WHERE "
                        "warehouse_id = ? AND namespace = ? AND name = ? ORDER BY object_key",
                        {warehouse_id, JoinNs(ns), table}, ReadObject);
    });
  }

  Result<void> ReplaceNoncurrent(const std::string& warehouse_id,
                                 const std::vector<std::string>& ns, const std::string& table,
                                 const std::vector<NoncurrentObject>& objects) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db,
                 "DELETE FROM noncurrent_objects WHERE warehouse_id = ? AND namespace = ? AND "
                 "name = ?",
                 {warehouse_id, JoinNs(ns), table}));
      for (const auto& o : objects) {
        TM_TRY(Run(db,
                   "INSERT INTO noncurrent_objects (warehouse_id, namespace, name, object_key, "
                   "size, found_ms) SELECT ?, ?, ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT) " +
                       std::string(kTableExists) +
                       " ON CONFLICT(warehouse_id, namespace, name, object_key) DO UPDATE SET "
                       "size = excluded.size, found_ms = excluded.found_ms",
                   {warehouse_id, JoinNs(ns), table, o.object_key, o.size, o.found_ms, warehouse_id,
                    JoinNs(ns), table}));
      }
      return {};
    });
  }

  Result<std::vector<NoncurrentObject>> NoncurrentOfWarehouse(
      const std::string& warehouse_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(
          db, "SELECT object_key, size, found_ms FROM noncurrent_objects WHERE warehouse_id = ?",
          {warehouse_id}, ReadObject);
    });
  }

  Result<void> SaveRowMoves(const std::string& warehouse_id, const std::string& table_uuid,
                            int64_t snapshot_id, const std::string& moves_json, int64_t now_ms,
                            int64_t forget_before_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db, "DELETE FROM row_moves WHERE created_ms < ?", {forget_before_ms}));
      return Run(db,
                 "INSERT INTO row_moves (warehouse_id, table_uuid, snapshot_id, created_ms, moves) "
                 "VALUES (?, ?, ?, ?, ?) ON CONFLICT(warehouse_id, table_uuid, snapshot_id) DO "
                 "UPDATE SET created_ms = excluded.created_ms, moves = excluded.moves",
                 {warehouse_id, table_uuid, snapshot_id, now_ms, moves_json});
    });
  }

  Result<std::optional<std::string>> RowMoves(const std::string& warehouse_id,
                                              const std::string& table_uuid,
                                              int64_t snapshot_id) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::optional<std::string>> {
      TM_ASSIGN(auto rows, sql::Query(db,
                                      "SELECT moves FROM row_moves WHERE warehouse_id = ? AND "
                                      "table_uuid = ? AND snapshot_id = ?",
                                      {warehouse_id, table_uuid, snapshot_id},
                                      [](sql::Statement& st) { return st.Text(0); }));
      if (rows.empty()) return std::optional<std::string>();
      return std::optional<std::string>(rows.front());
    });
  }

 private:
  // A job that finishes after its table was dropped records nothing: the drop deleted the
  // table's maintenance state, and a table created under the name later starts without.
  static constexpr char kTableExists[] =
      "WHERE EXISTS (SELECT 1 FROM entries WHERE warehouse_id = ? AND namespace = ? AND "
      "name = ? AND kind = 'table')";

  static NoncurrentObject ReadObject(sql::Statement& st) {
    return NoncurrentObject{st.Text(0), st.Int(1), st.Int(2)};
  }

  Scope s_;
};

}  // namespace

std::unique_ptr<MaintenanceStore> NewMaintenanceStore(Scope scope) {
  return std::make_unique<SqlMaintenance>(scope);
}

}  // namespace tablemere::metastore::sql_backend
