// The SQL (SQLite and PostgreSQL) ScanPlanStore: server-side scan plans, one row each,
// forgotten once they expire.
#include "metastore/sql_backend.h"

namespace tablemere::metastore::sql_backend {
namespace {

class SqlScanPlans final : public ScanPlanStore {
 public:
  explicit SqlScanPlans(Scope scope) : s_(scope) {}

  Result<void> Create(const ScanPlan& plan, int64_t now_ms) override {
    return s_.Write(
        [&](sql::Connection& db) -> Result<void> {
          TM_TRY(Run(db, "DELETE FROM scan_plans WHERE expires_ms < ?", {now_ms}));
          return Run(db,
                     "INSERT INTO scan_plans (id, warehouse_id, table_uuid, state, body, "
                     "created_ms, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     {plan.id, plan.warehouse_id, plan.table_uuid, static_cast<int64_t>(plan.state),
                      plan.body, plan.created_ms, plan.expires_ms});
        },
        WriteLock::kRows);
  }

  Result<std::optional<ScanPlan>> Find(const std::string& id, int64_t now_ms) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::optional<ScanPlan>> {
      auto found = One(db,
                       "SELECT id, warehouse_id, table_uuid, state, body, created_ms, expires_ms "
                       "FROM scan_plans WHERE id = ? AND expires_ms >= ?",
                       {id, now_ms}, "scan plan", [](sql::Statement& st) {
                         ScanPlan p;
                         p.id = st.Text(0);
                         p.warehouse_id = st.Text(1);
                         p.table_uuid = st.Text(2);
                         p.state = static_cast<ScanPlanState>(st.Int(3));
                         p.body = st.Text(4);
                         p.created_ms = st.Int(5);
                         p.expires_ms = st.Int(6);
                         return p;
                       });
      if (found) return std::optional<ScanPlan>(std::move(*found));
      if (found.error().code == ErrorCode::kNotFound) return std::optional<ScanPlan>();
      return Fail(found.error());
    });
  }

  Result<bool> Finish(const std::string& id, ScanPlanState from, ScanPlanState to,
                      const std::string& body) override {
    return s_.Write(
        [&](sql::Connection& db) -> Result<bool> {
          TM_TRY(Run(db, "UPDATE scan_plans SET state = ?, body = ? WHERE id = ? AND state = ?",
                     {static_cast<int64_t>(to), body, id, static_cast<int64_t>(from)}));
          return db.Changes() == 1;
        },
        WriteLock::kRows);
  }

  Result<bool> Remove(const std::string& id) override {
    return s_.Write(
        [&](sql::Connection& db) -> Result<bool> {
          TM_TRY(Run(db, "DELETE FROM scan_plans WHERE id = ?", {id}));
          return db.Changes() == 1;
        },
        WriteLock::kRows);
  }

 private:
  Scope s_;
};

}  // namespace

std::unique_ptr<ScanPlanStore> NewScanPlanStore(Scope scope) {
  return std::make_unique<SqlScanPlans>(scope);
}

}  // namespace tablemere::metastore::sql_backend
