// The SQL (SQLite and PostgreSQL) SessionStore: passwords, login sessions and mailed login links.
#include "metastore/sql_backend.h"

namespace tablemere::metastore::sql_backend {
namespace {

constexpr char kSessionSelect[] =
    "SELECT id, principal_id, refresh_hash, previous_refresh_hash, created_ms, last_used_ms, "
    "expires_ms, revoked_ms, user_agent, ip FROM sessions";
constexpr char kLinkSelect[] =
    "SELECT token_hash, purpose, email, sealed_token, payload, created_ms, expires_ms, used_ms "
    "FROM login_links";

Session SessionRow(sql::Statement& st) {
  return Session{st.Text(0), PrincipalId(st.Text(1)),
                 st.Text(2), st.Text(3),
                 st.Int(4),  st.Int(5),
                 st.Int(6),  st.Int(7),
                 st.Text(8), st.Text(9)};
}

LoginLink LinkRow(sql::Statement& st) {
  return LoginLink{st.Text(0), st.Text(1), st.Text(2), st.Text(3),
                   st.Text(4), st.Int(5),  st.Int(6),  st.Int(7)};
}

class SqlSessions final : public SessionStore {
 public:
  explicit SqlSessions(Scope scope) : s_(scope) {}

  Result<void> SetPassword(const PasswordRecord& r) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db,
                 "INSERT INTO passwords VALUES(?, ?, ?) ON CONFLICT(principal_id) DO UPDATE SET "
                 "hash = excluded.hash, changed_ms = excluded.changed_ms",
                 {r.principal_id.str(), r.hash, r.changed_ms});
    });
  }

  Result<PasswordRecord> FindPassword(const PrincipalId& principal_id) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, "SELECT principal_id, hash, changed_ms FROM passwords WHERE principal_id = ?",
                 {principal_id.str()}, "no password", [](sql::Statement& st) {
                   return PasswordRecord{PrincipalId(st.Text(0)), st.Text(1), st.Int(2)};
                 });
    });
  }

  Result<void> CreateSession(const Session& x) override {
    return s_.Write([&](sql::Connection& db) {
      return RunUnique(
          db, "INSERT INTO sessions VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {x.id, x.principal_id.str(), x.refresh_hash, x.previous_refresh_hash, x.created_ms,
           x.last_used_ms, x.expires_ms, x.revoked_ms, x.user_agent, x.ip},
          Error{ErrorCode::kAlreadyExists, "session exists", {}});
    });
  }

  Result<Session> FindSession(const std::string& session_id) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, std::string(kSessionSelect) + " WHERE id = ?", {session_id}, "no such session",
                 SessionRow);
    });
  }

  Result<Session> SessionByRefresh(const std::string& hash) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db,
                 std::string(kSessionSelect) +
                     " WHERE refresh_hash = ?1 OR previous_refresh_hash = ?1 LIMIT 1",
                 {hash}, "no such session", SessionRow);
    });
  }

  Result<void> RotateRefresh(const std::string& session_id, const std::string& expected_hash,
                             const std::string& new_hash, int64_t now_ms,
                             int64_t expires_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db,
                 "UPDATE sessions SET previous_refresh_hash = refresh_hash, refresh_hash = ?, "
                 "last_used_ms = ?, expires_ms = ? WHERE id = ? AND refresh_hash = ? AND "
                 "revoked_ms = 0",
                 {new_hash, now_ms, expires_ms, session_id, expected_hash}));
      if (db.Changes() == 0) return Fail(ErrorCode::kConflict, "the session changed");
      return {};
    });
  }

  Result<bool> RevokeSession(const std::string& session_id, int64_t now_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<bool> {
      TM_TRY(Run(db, "UPDATE sessions SET revoked_ms = ? WHERE id = ? AND revoked_ms = 0",
                 {now_ms, session_id}));
      return db.Changes() > 0;
    });
  }

  Result<int> RevokeSessionsOf(const PrincipalId& principal_id, const std::string& keep,
                               int64_t now_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<int> {
      TM_TRY(Run(db,
                 "UPDATE sessions SET revoked_ms = ? WHERE principal_id = ? AND id != ? AND "
                 "revoked_ms = 0 AND expires_ms > ?",
                 {now_ms, principal_id.str(), keep, now_ms}));
      return static_cast<int>(db.Changes());
    });
  }

  Result<std::vector<Session>> LiveSessionsOf(const PrincipalId& principal_id,
                                              int64_t now_ms) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db,
                        std::string(kSessionSelect) +
                            " WHERE principal_id = ? AND revoked_ms = 0 AND expires_ms > ? "
                            "ORDER BY created_ms DESC, id",
                        {principal_id.str(), now_ms}, SessionRow);
    });
  }

  Result<void> PutLink(const LoginLink& l) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db, "INSERT INTO login_links VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
                 {l.token_hash, l.purpose, l.email, l.sealed_token, l.payload_json, l.created_ms,
                  l.expires_ms, l.used_ms});
    });
  }

  Result<LoginLink> FindLink(const std::string& token_hash) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, std::string(kLinkSelect) + " WHERE token_hash = ?", {token_hash},
                 "no such link", LinkRow);
    });
  }

  Result<void> SpendLink(const std::string& token_hash, int64_t now_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db, "UPDATE login_links SET used_ms = ? WHERE token_hash = ? AND used_ms = 0",
                 {now_ms, token_hash}));
      if (db.Changes() == 0) return Fail(ErrorCode::kConflict, "the link was spent");
      return {};
    });
  }

  Result<std::vector<LoginLink>> OpenLinksFor(const std::string& email, int64_t now_ms) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::vector<LoginLink>> {
      TM_ASSIGN(auto all, sql::Query(db,
                                     std::string(kLinkSelect) +
                                         " WHERE email = ? AND used_ms = 0 AND expires_ms > ? "
                                         "ORDER BY created_ms DESC",
                                     {email, now_ms}, LinkRow));
      std::vector<LoginLink> newest;
      for (auto& link : all) {
        bool seen = false;
        for (const auto& n : newest) seen = seen || n.purpose == link.purpose;
        if (!seen) newest.push_back(std::move(link));
      }
      return newest;
    });
  }

 private:
  Scope s_;
};

}  // namespace

std::unique_ptr<SessionStore> NewSessionStore(Scope scope) {
  return std::make_unique<SqlSessions>(scope);
}

}  // namespace tablemere::metastore::sql_backend
