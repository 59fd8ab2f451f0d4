// The SQL (SQLite and PostgreSQL) account stores: principals and their API keys, organisations and
// members, projects, warehouses and grants, idempotency records, operator bucket owners.
#include "common/strings.h"
#include "metastore/sql_backend.h"

namespace tablemere::metastore::sql_backend {
namespace {

Error Taken(const std::string& what, const std::string& reason) {
  return Error{ErrorCode::kAlreadyExists, what, {}}.With("conflict", reason);
}

// Enum columns are written by Name() and read back through Parse*(); a value outside the
// set (a hand-edited row) reads as the least privileged member rather than failing a read.
PrincipalKind KindColumn(const std::string& text) {
  return ParsePrincipalKind(text).value_or(PrincipalKind::kAgent);
}
Role RoleColumn(const std::string& text) { return ParseRole(text).value_or(Role::kMember); }
Level LevelColumn(const std::string& text) { return ParseLevel(text).value_or(Level::kNone); }

// ------------------------------------------------------------------ principals
class SqlPrincipals final : public PrincipalStore {
 public:
  explicit SqlPrincipals(Scope scope) : s_(scope) {}

  Result<void> CreatePrincipal(const Principal& p) override {
    return s_.Write([&](sql::Connection& db) {
      return RunUnique(
          db, "INSERT INTO principals VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {p.id.str(), Name(p.kind), p.email.empty() ? sql::Value() : sql::Value(p.email),
           p.display_name, p.org_id.str(), Name(p.role), p.created_by.str(), p.created_ms,
           int64_t{p.suspended ? 1 : 0}},
          p.kind == PrincipalKind::kAgent ? Taken("an agent with this name exists", "agent_name")
                                          : Taken("an account with this email exists", "email"));
    });
  }

  Result<Principal> FindPrincipal(const PrincipalId& id) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, std::string(kSelect) + " WHERE id = ?", {id.str()}, "principal not found",
                 Row);
    });
  }

  Result<Principal> FindHumanByEmail(const std::string& email) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, std::string(kSelect) + " WHERE kind = 'human' AND lower(email) = ?",
                 {ToLower(email)}, "no account with this email", Row);
    });
  }

  Result<std::vector<Principal>> AgentsOf(const OrgId& org_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(
          db, std::string(kSelect) + " WHERE kind = 'agent' AND org_id = ? ORDER BY created_ms, id",
          {org_id.str()}, Row);
    });
  }

  Result<void> UpdatePrincipal(const Principal& p) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(RunUnique(
          db,
          "UPDATE principals SET display_name = ?, role = ?, suspended = ?, email = ? WHERE id = ?",
          {p.display_name, Name(p.role), int64_t{p.suspended ? 1 : 0},
           p.email.empty() ? sql::Value() : sql::Value(p.email), p.id.str()},
          Taken("an agent with this name exists", "agent_name")));
      if (db.Changes() == 0) return Fail(NotFound("principal not found"));
      return {};
    });
  }

  Result<void> TouchApiKey(const std::string& key_id, int64_t at_ms) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db, "UPDATE api_keys SET last_used_ms = ? WHERE key_id = ?", {at_ms, key_id});
    });
  }

  Result<void> CreateApiKey(const ApiKey& k) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db,
                 "INSERT INTO api_keys(key_id, principal_id, secret_hash, created_ms, revoked, "
                 "label, revoked_ms) VALUES(?, ?, ?, ?, 0, ?, 0)",
                 {k.key_id, k.principal_id.str(), k.secret_hash, k.created_ms, k.label});
    });
  }

  Result<ApiKey> FindApiKey(const std::string& key_id) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, std::string(kKeySelect) + " WHERE key_id = ?", {key_id}, "api key not found",
                 KeyRow);
    });
  }

  Result<std::vector<ApiKey>> ApiKeysOf(const PrincipalId& principal_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(
          db, std::string(kKeySelect) + " WHERE principal_id = ? ORDER BY created_ms, key_id",
          {principal_id.str()}, KeyRow);
    });
  }

  Result<ApiKey> RevokeApiKey(const PrincipalId& principal_id, const std::string& key_id,
                              int64_t at_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<ApiKey> {
      TM_TRY(Run(db,
                 "UPDATE api_keys SET revoked = 1, revoked_ms = ? WHERE key_id = ? AND "
                 "principal_id = ? AND revoked = 0",
                 {at_ms, key_id, principal_id.str()}));
      return One(db, std::string(kKeySelect) + " WHERE key_id = ? AND principal_id = ?",
                 {key_id, principal_id.str()}, "api key not found", KeyRow);
    });
  }

  Result<int> RevokeAllApiKeys(const PrincipalId& principal_id, int64_t at_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<int> {
      TM_TRY(Run(db,
                 "UPDATE api_keys SET revoked = 1, revoked_ms = ? WHERE principal_id = ? AND "
                 "revoked = 0",
                 {at_ms, principal_id.str()}));
      return static_cast<int>(db.Changes());
    });
  }

 private:
  static constexpr char kSelect[] =
      "SELECT id, kind, email, display_name, org_id, role, created_by, created_ms, suspended "
      "FROM principals";
  static Principal Row(sql::Statement& st) {
    return Principal{PrincipalId(st.Text(0)),
                     KindColumn(st.Text(1)),
                     st.Text(2),
                     st.Text(3),
                     OrgId(st.Text(4)),
                     RoleColumn(st.Text(5)),
                     PrincipalId(st.Text(6)),
                     st.Int(7),
                     st.Int(8) != 0};
  }
  static constexpr char kKeySelect[] =
      "SELECT key_id, principal_id, secret_hash, created_ms, revoked, label, revoked_ms, "
      "last_used_ms FROM api_keys";
  static ApiKey KeyRow(sql::Statement& st) {
    return ApiKey{st.Text(0),     PrincipalId(st.Text(1)),
                  st.Text(2),     st.Int(3),
                  st.Int(4) != 0, st.Text(5),
                  st.Int(6),      st.Int(7)};
  }
  Scope s_;
};

// ------------------------------------------------------------------ organisations
class SqlOrgs final : public OrgStore {
 public:
  explicit SqlOrgs(Scope scope) : s_(scope) {}

  Result<void> CreateOrg(const Organization& o) override {
    return s_.Write([&](sql::Connection& db) {
      return RunUnique(
          db,
          "INSERT INTO orgs(id, name, handle, created_ms, status, domain_join) "
          "VALUES(?, ?, ?, ?, ?, ?)",
          {o.id.str(), o.name, o.handle, o.created_ms, o.status, int64_t{o.domain_join ? 1 : 0}},
          Taken("the handle is taken", "handle"));
    });
  }

  Result<Organization> FindOrg(const OrgId& id) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, std::string(kSelect) + " WHERE o.id = ?", {id.str()}, "organisation not found",
                 Row);
    });
  }

  Result<void> UpdateOrg(const Organization& o) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db, "UPDATE orgs SET name = ?, status = ?, domain_join = ? WHERE id = ?",
                 {o.name, o.status, int64_t{o.domain_join ? 1 : 0}, o.id.str()}));
      if (db.Changes() == 0) return Fail(NotFound("organisation not found"));
      return {};
    });
  }

  Result<bool> HandleTaken(const std::string& handle) override {
    return s_.Read([&](sql::Connection& db) {
      return Exists(db, "SELECT 1 FROM orgs WHERE handle = ?", {handle});
    });
  }

  Result<void> PutMember(const Membership& m) override {
    return s_.Write([&](sql::Connection& db) {
      // A role change keeps when and how the member joined.
      return Run(db,
                 "INSERT INTO memberships(org_id, principal_id, role, created_ms, joined_via) "
                 "VALUES(?, ?, ?, ?, ?) ON CONFLICT(org_id, principal_id) DO UPDATE SET "
                 "role = excluded.role",
                 {m.org_id.str(), m.principal_id.str(), Name(m.role), m.created_ms, m.joined_via});
    });
  }

  Result<void> RemoveMember(const OrgId& org_id, const PrincipalId& principal_id) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db, "DELETE FROM memberships WHERE org_id = ? AND principal_id = ?",
                 {org_id.str(), principal_id.str()}));
      if (db.Changes() == 0) return Fail(NotFound("not a member"));
      return {};
    });
  }

  Result<std::vector<Membership>> MembersOf(const OrgId& org_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(
          db,
          "SELECT m.principal_id, m.role, m.created_ms, m.joined_via, p.kind FROM memberships m "
          "JOIN principals p ON p.id = m.principal_id WHERE m.org_id = ? ORDER BY p.created_ms, "
          "p.id",
          {org_id.str()}, [&](sql::Statement& st) {
            return Membership{
                org_id,     PrincipalId(st.Text(0)), RoleColumn(st.Text(1)), st.Int(2),
                st.Text(3), KindColumn(st.Text(4))};
          });
    });
  }

  Result<std::vector<std::pair<Organization, Role>>> OrgsOf(
      const PrincipalId& principal_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db,
                        std::string(kColumns) +
                            ", m.role FROM orgs o JOIN memberships m ON m.org_id = o.id WHERE "
                            "m.principal_id = ? ORDER BY o.created_ms",
                        {principal_id.str()}, [](sql::Statement& st) {
                          return std::pair{Row(st), RoleColumn(st.Text(6))};
                        });
    });
  }

 private:
  static constexpr char kColumns[] =
      "SELECT o.id, o.name, o.handle, o.created_ms, o.status, o.domain_join";
  static constexpr char kSelect[] =
      "SELECT o.id, o.name, o.handle, o.created_ms, o.status, o.domain_join FROM orgs o";
  static Organization Row(sql::Statement& st) {
    return Organization{OrgId(st.Text(0)), st.Text(1), st.Text(2),
                        st.Int(3),         st.Text(4), st.Int(5) != 0};
  }
  Scope s_;
};

// ------------------------------------------------------------------ memberships
class SqlMemberships final : public MembershipStore {
 public:
  explicit SqlMemberships(Scope scope) : s_(scope) {}

  Result<void> ClaimDomain(const OrgDomain& d) override {
    return s_.Write([&](sql::Connection& db) {
      return RunUnique(db, "INSERT INTO org_domains VALUES(?, ?, ?, ?)",
                       {d.domain, d.org_id.str(), d.verified_via, d.created_ms},
                       Taken("the domain is claimed", "domain"));
    });
  }

  Result<void> ReleaseDomain(const OrgId& org_id, const std::string& domain) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db, "DELETE FROM org_domains WHERE domain = ? AND org_id = ?",
                 {domain, org_id.str()}));
      if (db.Changes() == 0) return Fail(NotFound("domain not claimed by this organisation"));
      return {};
    });
  }

  Result<std::vector<OrgDomain>> DomainsOf(const OrgId& org_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db,
                        "SELECT domain, org_id, verified_via, created_ms FROM org_domains "
                        "WHERE org_id = ? ORDER BY domain",
                        {org_id.str()}, [](sql::Statement& st) {
                          return OrgDomain{st.Text(0), OrgId(st.Text(1)), st.Text(2), st.Int(3)};
                        });
    });
  }

  Result<std::optional<OrgDomain>> DomainOwner(const std::string& domain) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::optional<OrgDomain>> {
      TM_ASSIGN(auto rows,
                sql::Query(db,
                           "SELECT domain, org_id, verified_via, created_ms FROM "
                           "org_domains WHERE domain = ?",
                           {domain}, [](sql::Statement& st) {
                             return OrgDomain{st.Text(0), OrgId(st.Text(1)), st.Text(2), st.Int(3)};
                           }));
      if (rows.empty()) return std::optional<OrgDomain>();
      return std::optional<OrgDomain>(rows.front());
    });
  }

  Result<void> CreateInvitation(const Invitation& i) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db, "INSERT INTO invitations VALUES(?, ?, ?, ?, ?, ?, ?, 0)",
                 {i.token_hash, i.org_id.str(), i.email, Name(i.role), i.invited_by.str(),
                  i.created_ms, i.expires_ms});
    });
  }

  Result<Invitation> FindInvitation(const std::string& token_hash) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, std::string(kInvitationSelect) + " WHERE token_hash = ?", {token_hash},
                 "invitation not found", InvitationRow);
    });
  }

  Result<void> AcceptInvitation(const std::string& token_hash, int64_t at_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db,
                 "UPDATE invitations SET accepted_ms = ? WHERE token_hash = ? AND accepted_ms = 0",
                 {at_ms, token_hash}));
      if (db.Changes() == 0) return Fail(ErrorCode::kConflict, "invitation already accepted");
      return {};
    });
  }

  Result<std::vector<Invitation>> OpenInvitationsFor(const std::string& email,
                                                     int64_t now_ms) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db,
                        std::string(kInvitationSelect) +
                            " WHERE email = ? AND accepted_ms = 0 AND expires_ms > ? "
                            "ORDER BY created_ms",
                        {ToLower(email), now_ms}, InvitationRow);
    });
  }

  Result<void> AcceptTerms(const TermsAcceptance& a) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db, "INSERT INTO terms_acceptances VALUES(?, ?, ?, ?) ON CONFLICT DO NOTHING",
                 {a.principal_id.str(), a.version, a.accepted_ms, a.via});
    });
  }

  Result<std::vector<TermsAcceptance>> TermsHistory(const PrincipalId& principal_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db,
                        "SELECT version, accepted_ms, via FROM terms_acceptances WHERE "
                        "principal_id = ? ORDER BY accepted_ms",
                        {principal_id.str()}, [&](sql::Statement& st) {
                          return TermsAcceptance{principal_id, st.Text(0), st.Int(1), st.Text(2)};
                        });
    });
  }

 private:
  static constexpr char kInvitationSelect[] =
      "SELECT token_hash, org_id, email, role, invited_by, created_ms, expires_ms, accepted_ms "
      "FROM invitations";
  static Invitation InvitationRow(sql::Statement& st) {
    return Invitation{
        st.Text(0), OrgId(st.Text(1)), st.Text(2), RoleColumn(st.Text(3)), PrincipalId(st.Text(4)),
        st.Int(5),  st.Int(6),         st.Int(7)};
  }
  Scope s_;
};

// ------------------------------------------------------------------ warehouses
class SqlWarehouses final : public WarehouseStore {
 public:
  explicit SqlWarehouses(Scope scope) : s_(scope) {}

  Result<void> CreateProject(const Project& p) override {
    return s_.Write([&](sql::Connection& db) {
      return RunUnique(db, "INSERT INTO projects VALUES(?, ?, ?, ?)",
                       {p.id.str(), p.org_id.str(), p.name, p.created_ms},
                       Taken("project name in use", "name"));
    });
  }

  Result<Project> FindProject(const ProjectId& id) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, std::string(kProjectSelect) + " WHERE id = ?", {id.str()}, "project not found",
                 ProjectRow);
    });
  }

  Result<std::vector<Project>> ProjectsOfOrg(const OrgId& org_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db, std::string(kProjectSelect) + " WHERE org_id = ? ORDER BY created_ms",
                        {org_id.str()}, ProjectRow);
    });
  }

  Result<void> CreateWarehouse(const Warehouse& w) override {
    return s_.Write([&](sql::Connection& db) {
      return RunUnique(db,
                       "INSERT INTO warehouses (id, project_id, org_id, name, generation, "
                       "created_ms, published_ms) VALUES(?, ?, ?, ?, ?, ?, ?)",
                       {w.id.str(), w.project_id.str(), w.org_id.str(), w.name,
                        w.credential_generation, w.created_ms, w.published_ms},
                       Taken("warehouse name in use", "name"));
    });
  }

  // Every catalog request checks its warehouse's credential generation: memoised.
  Result<Warehouse> FindWarehouse(const WarehouseId& id) override {
    return FindWarehouseIn(s_, id);
  }

  Result<std::vector<Warehouse>> WarehousesOfOrg(const OrgId& org_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db, std::string(kSelect) + " WHERE org_id = ? ORDER BY created_ms",
                        {org_id.str()}, Row);
    });
  }

  Result<std::vector<Warehouse>> AllWarehouses() override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db, std::string(kSelect) + " ORDER BY created_ms", {}, Row);
    });
  }

  Result<Warehouse> RotateWarehouse(const WarehouseId& id) override {
    return s_.Write([&](sql::Connection& db) -> Result<Warehouse> {
      TM_TRY(Run(db, "UPDATE warehouses SET generation = generation + 1 WHERE id = ?", {id.str()}));
      if (db.Changes() == 0) return Fail(NotFound("warehouse not found"));
      return One(db, std::string(kSelect) + " WHERE id = ?", {id.str()}, "warehouse not found",
                 Row);
    });
  }

  Result<Warehouse> SetWarehousePublic(const WarehouseId& id, int64_t published_ms,
                                       int64_t catalog_public_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<Warehouse> {
      TM_TRY(Run(db, "UPDATE warehouses SET published_ms = ?, catalog_public_ms = ? WHERE id = ?",
                 {published_ms, catalog_public_ms, id.str()}));
      if (db.Changes() == 0) return Fail(NotFound("warehouse not found"));
      return One(db, std::string(kSelect) + " WHERE id = ?", {id.str()}, "warehouse not found",
                 Row);
    });
  }

  Result<Warehouse> SetWarehouseReadOnly(const WarehouseId& id, int64_t read_only_ms) override {
    return SetColumn(id, "read_only_ms", read_only_ms);
  }

  Result<void> DeleteWarehouse(const WarehouseId& id) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db, "DELETE FROM grants WHERE warehouse_id = ?", {id.str()}));
      TM_TRY(Run(db, "DELETE FROM warehouses WHERE id = ?", {id.str()}));
      if (db.Changes() == 0) return Fail(NotFound("warehouse not found"));
      return {};
    });
  }

  Result<void> PutGrant(const Grant& g) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db,
                 "INSERT INTO grants(warehouse_id, principal_id, level, granted_by, granted_ms) "
                 "VALUES(?, ?, ?, ?, ?) ON CONFLICT(warehouse_id, principal_id) DO UPDATE SET "
                 "level = excluded.level, granted_by = excluded.granted_by, "
                 "granted_ms = excluded.granted_ms",
                 {g.warehouse_id.str(), g.principal_id.str(), Name(g.level), g.granted_by.str(),
                  g.granted_ms});
    });
  }

  Result<void> DeleteGrant(const WarehouseId& warehouse_id,
                           const PrincipalId& principal_id) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db, "DELETE FROM grants WHERE warehouse_id = ? AND principal_id = ?",
                 {warehouse_id.str(), principal_id.str()}));
      if (db.Changes() == 0) return Fail(NotFound("grant not found"));
      return {};
    });
  }

  Result<std::vector<Grant>> GrantsOf(const PrincipalId& principal_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db, std::string(kGrantSelect) + " WHERE principal_id = ?",
                        {principal_id.str()}, GrantRow);
    });
  }

  Result<std::vector<Grant>> GrantsOn(const WarehouseId& warehouse_id) override {
    return s_.Read([&](sql::Connection& db) {
      return sql::Query(db,
                        std::string(kGrantSelect) + " WHERE warehouse_id = ? ORDER BY granted_ms",
                        {warehouse_id.str()}, GrantRow);
    });
  }

 private:
  // `column` is one of this class's literals, never input.
  Result<Warehouse> SetColumn(const WarehouseId& id, const char* column, int64_t value) {
    return s_.Write([&](sql::Connection& db) -> Result<Warehouse> {
      TM_TRY(Run(db, std::string("UPDATE warehouses SET ") + column + " = ? WHERE id = ?",
                 {value, id.str()}));
      if (db.Changes() == 0) return Fail(NotFound("warehouse not found"));
      return One(db, std::string(kSelect) + " WHERE id = ?", {id.str()}, "warehouse not found",
                 Row);
    });
  }
  static inline const std::string kSelect = "SELECT " + WarehouseColumns() + " FROM warehouses";
  static Warehouse Row(sql::Statement& st) { return WarehouseRow(st); }
  static constexpr char kProjectSelect[] = "SELECT id, org_id, name, created_ms FROM projects";
  static Project ProjectRow(sql::Statement& st) {
    return Project{ProjectId(st.Text(0)), OrgId(st.Text(1)), st.Text(2), st.Int(3)};
  }
  static constexpr char kGrantSelect[] =
      "SELECT warehouse_id, principal_id, level, granted_by, granted_ms FROM grants";
  static Grant GrantRow(sql::Statement& st) {
    return Grant{WarehouseId(st.Text(0)), PrincipalId(st.Text(1)), LevelColumn(st.Text(2)),
                 PrincipalId(st.Text(3)), st.Int(4)};
  }
  Scope s_;
};

// ------------------------------------------------------------------ idempotency
class SqlIdempotency final : public IdempotencyStore {
 public:
  explicit SqlIdempotency(Scope scope) : s_(scope) {}

  Result<void> PutIdempotency(const IdempotencyRecord& r) override {
    return s_.Write([&](sql::Connection& db) {
      return RunUnique(
          db,
          "INSERT INTO idempotency_keys (principal_id, key, endpoint, resource_id, "
          "created_ms, request_hash) VALUES(?, ?, ?, ?, ?, ?)",
          {r.principal_id.str(), r.key, r.endpoint, r.resource_id, r.created_ms, r.request_hash},
          Error{ErrorCode::kConflict, "idempotency key used before", {}}.With("conflict",
                                                                              "idempotency_key"));
    });
  }

  Result<std::optional<IdempotencyRecord>> FindIdempotency(const PrincipalId& principal_id,
                                                           const std::string& key) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::optional<IdempotencyRecord>> {
      TM_ASSIGN(auto rows, sql::Query(db,
                                      "SELECT endpoint, resource_id, created_ms, request_hash FROM "
                                      "idempotency_keys WHERE principal_id = ? AND key = ?",
                                      {principal_id.str(), key}, [&](sql::Statement& st) {
                                        return IdempotencyRecord{principal_id, key,
                                                                 st.Text(0),   st.Text(1),
                                                                 st.Int(2),    st.Text(3)};
                                      }));
      if (rows.empty()) return std::optional<IdempotencyRecord>();
      return std::optional<IdempotencyRecord>(rows.front());
    });
  }

 private:
  Scope s_;
};

// ------------------------------------------------------------------ bucket owners
class SqlBucketOwners final : public BucketOwnerStore {
 public:
  explicit SqlBucketOwners(Scope scope) : s_(scope) {}

  Result<void> SetBucketOwner(const std::string& bucket, const std::string& owner) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db,
                 "INSERT INTO bucket_owners VALUES(?, ?) ON CONFLICT(bucket) DO UPDATE SET "
                 "owner = excluded.owner",
                 {bucket, owner});
    });
  }
  Result<std::string> BucketOwner(const std::string& bucket) override {
    return s_.core.bucket_owner_memo.Get(bucket, [&] {
      return s_.Read([&](sql::Connection& db) {
        return One(db, "SELECT owner FROM bucket_owners WHERE bucket = ?", {bucket},
                   "no owner recorded", [](sql::Statement& st) { return st.Text(0); });
      });
    });
  }
  Result<void> ClearBucketOwner(const std::string& bucket) override {
    return s_.Write([&](sql::Connection& db) {
      return Run(db, "DELETE FROM bucket_owners WHERE bucket = ?", {bucket});
    });
  }

 private:
  Scope s_;
};

}  // namespace

std::unique_ptr<PrincipalStore> NewPrincipalStore(Scope scope) {
  return std::make_unique<SqlPrincipals>(scope);
}
std::unique_ptr<OrgStore> NewOrgStore(Scope scope) { return std::make_unique<SqlOrgs>(scope); }
std::unique_ptr<MembershipStore> NewMembershipStore(Scope scope) {
  return std::make_unique<SqlMemberships>(scope);
}
std::string WarehouseColumns(const std::string& alias) {
  static constexpr const char* kColumns[] = {"id",           "project_id",   "org_id",
                                             "name",         "generation",   "created_ms",
                                             "published_ms", "read_only_ms", "catalog_public_ms"};
  std::string out;
  for (const char* column : kColumns) {
    if (!out.empty()) out += ", ";
    if (!alias.empty()) out += alias + ".";
    out += column;
  }
  return out;
}

Warehouse WarehouseRow(sql::Statement& st, int first) {
  return Warehouse{WarehouseId(st.Text(first)),
                   ProjectId(st.Text(first + 1)),
                   OrgId(st.Text(first + 2)),
                   st.Text(first + 3),
                   st.Int(first + 4),
                   st.Int(first + 5),
                   st.Int(first + 6),
                   st.Int(first + 7),
                   st.Int(first + 8)};
}

Result<Warehouse> FindWarehouseIn(Scope& scope, const WarehouseId& id) {
  auto read = [&] {
    return scope.Read([&](sql::Connection& db) {
      return One(db, "SELECT " + WarehouseColumns() + " FROM warehouses WHERE id = ?", {id.str()},
                 "warehouse not found", [](sql::Statement& st) { return WarehouseRow(st); });
    });
  };
  if (scope.InTransaction()) return read();
  return scope.core.warehouse_memo.Get(id.str(), read);
}

std::unique_ptr<WarehouseStore> NewWarehouseStore(Scope scope) {
  return std::make_unique<SqlWarehouses>(scope);
}
std::unique_ptr<IdempotencyStore> NewIdempotencyStore(Scope scope) {
  return std::make_unique<SqlIdempotency>(scope);
}
std::unique_ptr<BucketOwnerStore> NewBucketOwnerStore(Scope scope) {
  return std::make_unique<SqlBucketOwners>(scope);
}

}  // namespace tablemere::metastore::sql_backend
