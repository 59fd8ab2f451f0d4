// The SQL (SQLite and PostgreSQL) VerificationStore: mailed codes and rate-limit windows.
#include "metastore/sql_backend.h"

namespace tablemere::metastore::sql_backend {
namespace {

class SqlVerification final : public VerificationStore {
 public:
  explicit SqlVerification(Scope scope) : s_(scope) {}

  Result<void> PutCode(const PendingCode& c) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db,
                 "INSERT INTO pending_codes VALUES(?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(purpose, "
                 "email) DO UPDATE SET code_hash = excluded.code_hash, sealed_code = "
                 "excluded.sealed_code, payload = excluded.payload, created_ms = "
                 "excluded.created_ms, expires_ms = excluded.expires_ms, attempts = "
                 "excluded.attempts",
                 {c.purpose, c.email, c.code_hash, c.sealed_code, c.payload_json, c.created_ms,
                  c.expires_ms, int64_t{c.attempts}});
    });
  }

  Result<PendingCode> FindCode(const std::string& purpose, const std::string& email) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db,
                 "SELECT purpose, email, code_hash, sealed_code, payload, created_ms, expires_ms, "
                 "attempts FROM pending_codes WHERE purpose = ? AND email = ?",
                 {purpose, email}, "no pending code", [](sql::Statement& st) {
                   return PendingCode{
                       st.Text(0), st.Text(1), st.Text(2), st.Text(3),
                       st.Text(4), st.Int(5),  st.Int(6),  static_cast<int>(st.Int(7))};
                 });
    });
  }

  Result<int> AddCodeAttempt(const std::string& purpose, const std::string& email) override {
    return s_.Write([&](sql::Connection& db) -> Result<int> {
      TM_TRY(Run(db,
                 "UPDATE pending_codes SET attempts = attempts + 1 WHERE purpose = ? AND email = ?",
                 {purpose, email}));
      if (db.Changes() == 0) return Fail(NotFound("no pending code"));
      return One(db, "SELECT attempts FROM pending_codes WHERE purpose = ? AND email = ?",
                 {purpose, email}, "no pending code",
                 [](sql::Statement& st) { return static_cast<int>(st.Int(0)); });
    });
  }

  Result<void> DeleteCode(const std::string& purpose, const std::string& email) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db, "DELETE FROM pending_codes WHERE purpose = ? AND email = ?", {purpose, email});
    });
  }

  Result<bool> SpendCode(const std::string& purpose, const std::string& email,
                         const std::string& code_hash) override {
    return s_.Write([&](sql::Connection& db) -> Result<bool> {
      TM_TRY(Run(db, "DELETE FROM pending_codes WHERE purpose = ? AND email = ? AND code_hash = ?",
                 {purpose, email, code_hash}));
      return db.Changes() == 1;
    });
  }

  Result<RateDecision> TakeRate(const std::string& bucket, int limit, int64_t window_ms,
                                int64_t now_ms) override {
    return HoldRate(bucket, limit, window_ms, now_ms, "");
  }

  Result<RateDecision> HoldRate(const std::string& bucket, int limit, int64_t window_ms,
                                int64_t now_ms, const std::string& hold_id) override {
    return s_.Write([&](sql::Connection& db) -> Result<RateDecision> {
      // Events that left the window are dropped as the bucket is used.
      TM_TRY(Run(db, "DELETE FROM rate_events WHERE bucket = ? AND at_ms <= ?",
                 {bucket, now_ms - window_ms}));
      TM_ASSIGN(RateDecision d, Decide(db, bucket, limit, window_ms, now_ms));
      if (!d.allowed) return d;
      TM_TRY(Run(db, "INSERT INTO rate_events(bucket, at_ms, hold) VALUES(?, ?, ?)",
                 {bucket, now_ms, hold_id}));
      d.count++;
      return d;
    });
  }

  Result<void> ReleaseRate(const std::string& bucket, const std::string& hold_id) override {
    if (hold_id.empty()) return Fail(ErrorCode::kInvalidInput, "a hold has an id");
    return s_.Write([&](sql::Connection& db) {
      return Run(db, "DELETE FROM rate_events WHERE bucket = ? AND hold = ?", {bucket, hold_id});
    });
  }

  Result<RateDecision> PeekRate(const std::string& bucket, int limit, int64_t window_ms,
                                int64_t now_ms) override {
    return s_.Read(
        [&](sql::Connection& db) { return Decide(db, bucket, limit, window_ms, now_ms); });
  }

  Result<void> RecordRate(const std::string& bucket, int64_t now_ms) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db, "INSERT INTO rate_events(bucket, at_ms) VALUES(?, ?)", {bucket, now_ms});
    });
  }

  Result<int64_t> PurgeRateEvents(int64_t before_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<int64_t> {
      TM_TRY(Run(db, "DELETE FROM rate_events WHERE at_ms < ?", {before_ms}));
      return db.Changes();
    });
  }

 private:
  static Result<RateDecision> Decide(sql::Connection& db, const std::string& bucket, int limit,
                                     int64_t window_ms, int64_t now_ms) {
    TM_ASSIGN(auto row,
              One(db,
                  "SELECT count(*), COALESCE(min(at_ms), 0) FROM rate_events WHERE bucket = ? "
                  "AND at_ms > ?",
                  {bucket, now_ms - window_ms}, "", [](sql::Statement& st) {
                    return std::pair{st.Int(0), st.Int(1)};
                  }));
    RateDecision d;
    d.count = static_cast<int>(row.first);
    d.allowed = d.count < limit;
    if (!d.allowed) d.retry_after_ms = std::max<int64_t>(1, row.second + window_ms - now_ms);
    return d;
  }
  Scope s_;
};

class SqlDevices final : public DeviceStore {
 public:
  explicit SqlDevices(Scope scope) : s_(scope) {}

  Result<void> CreateDevice(const DeviceGrant& g) override {
    return s_.Write([&](sql::Connection& db) {
      return RunUnique(
          db, "INSERT INTO device_grants VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {g.device_code_hash, g.user_code, g.client, g.hostname, g.client_name,
           Name(g.requested_level), g.warehouse_ids_json, g.created_ms, g.expires_ms,
           int64_t{g.interval_s}, g.last_poll_ms, g.status, g.agent_id.str(), g.approved_by.str()},
          Error{ErrorCode::kAlreadyExists, "user code in use", {}});
    });
  }

  Result<DeviceGrant> DeviceByUserCode(const std::string& user_code) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, std::string(kSelect) + " WHERE user_code = ?", {user_code},
                 "no such device code", Row);
    });
  }

  Result<DeviceGrant> DeviceByCodeHash(const std::string& hash) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, std::string(kSelect) + " WHERE device_code_hash = ?", {hash},
                 "no such device code", Row);
    });
  }

  Result<void> UpdateDevice(const DeviceGrant& g, const std::string& expected_status) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db,
                 "UPDATE device_grants SET status = ?, interval_s = ?, last_poll_ms = ?, "
                 "agent_id = ?, approved_by = ? WHERE device_code_hash = ? AND status = ?",
                 {g.status, int64_t{g.interval_s}, g.last_poll_ms, g.agent_id.str(),
                  g.approved_by.str(), g.device_code_hash, expected_status}));
      if (db.Changes() == 0) return Fail(ErrorCode::kConflict, "the device grant changed");
      return {};
    });
  }

 private:
  static constexpr char kSelect[] =
      "SELECT device_code_hash, user_code, client, hostname, client_name, requested_level, "
      "warehouse_ids, created_ms, expires_ms, interval_s, last_poll_ms, status, agent_id, "
      "approved_by FROM device_grants";
  static DeviceGrant Row(sql::Statement& st) {
    return DeviceGrant{st.Text(0),
                       st.Text(1),
                       st.Text(2),
                       st.Text(3),
                       st.Text(4),
                       ParseLevel(st.Text(5)).value_or(Level::kRead),
                       st.Text(6),
                       st.Int(7),
                       st.Int(8),
                       static_cast<int>(st.Int(9)),
                       st.Int(10),
                       st.Text(11),
                       PrincipalId(st.Text(12)),
                       PrincipalId(st.Text(13))};
  }
  Scope s_;
};

class SqlUsage final : public UsageStore {
  static constexpr char kSelect[] =
      "SELECT at_ms, table_bytes, table_objects, blob_bytes, blob_objects, requests, "
      "requests_failed, bytes_in, bytes_out, counter_epoch FROM usage_samples WHERE "
      "warehouse_id = ?";
  static UsageSample Row(const WarehouseId& w, sql::Statement& st) {
    return UsageSample{w,         st.Int(0), st.Int(1), st.Int(2), st.Int(3), st.Int(4),
                       st.Int(5), st.Int(6), st.Int(7), st.Int(8), st.Text(9)};
  }

 public:
  explicit SqlUsage(Scope scope) : s_(scope) {}

  Result<void> RecordSample(const UsageSample& u) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db,
                 "INSERT INTO usage_samples (warehouse_id, at_ms, table_bytes, table_objects, "
                 "blob_bytes, blob_objects, requests, requests_failed, bytes_in, bytes_out, "
                 "counter_epoch) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(warehouse_id, "
                 "at_ms) DO UPDATE SET table_bytes = excluded.table_bytes, table_objects = "
                 "excluded.table_objects, blob_bytes = excluded.blob_bytes, blob_objects = "
                 "excluded.blob_objects, requests = excluded.requests, requests_failed = "
                 "excluded.requests_failed, bytes_in = excluded.bytes_in, bytes_out = "
                 "excluded.bytes_out, counter_epoch = excluded.counter_epoch",
                 {u.warehouse_id.str(), u.at_ms, u.table_bytes, u.table_objects, u.blob_bytes,
                  u.blob_objects, u.requests, u.requests_failed, u.bytes_in, u.bytes_out,
                  u.counter_epoch});
    });
  }

  Result<std::optional<UsageSample>> LatestSample(const WarehouseId& w) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::optional<UsageSample>> {
      TM_ASSIGN(auto rows, sql::Query(db, std::string(kSelect) + " ORDER BY at_ms DESC LIMIT 1",
                                      {w.str()}, [&](sql::Statement& st) { return Row(w, st); }));
      if (rows.empty()) return std::optional<UsageSample>();
      return std::optional<UsageSample>(rows.front());
    });
  }

  Result<std::vector<UsageSample>> SamplesSince(const WarehouseId& w, int64_t since_ms) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db, std::string(kSelect) + " AND at_ms >= ? ORDER BY at_ms",
                        {w.str(), since_ms}, [&](sql::Statement& st) { return Row(w, st); });
    });
  }

  Result<int> DeleteSamples(const WarehouseId& w) override {
    return s_.Write([&](sql::Connection& db) -> Result<int> {
      TM_TRY(Run(db, "DELETE FROM usage_samples WHERE warehouse_id = ?", {w.str()}));
      return static_cast<int>(db.Changes());
    });
  }

 private:
  Scope s_;
};

}  // namespace

std::unique_ptr<UsageStore> NewUsageStore(Scope scope) { return std::make_unique<SqlUsage>(scope); }

std::unique_ptr<DeviceStore> NewDeviceStore(Scope scope) {
  return std::make_unique<SqlDevices>(scope);
}

std::unique_ptr<VerificationStore> NewVerificationStore(Scope scope) {
  return std::make_unique<SqlVerification>(scope);
}

}  // namespace tablemere::metastore::sql_backend
