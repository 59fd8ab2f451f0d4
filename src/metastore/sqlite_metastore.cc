// The embedded metastore on SQLite (WAL). Writes go through one connection behind a
// mutex (SQLite has one writer anyway); reads use a separate connection so they never
// wait behind a write transaction's fsync. The database belongs to one process (an
// exclusive lock on a file beside it), so the hot point reads can be memoised exactly:
// every write goes through Write(), which bumps the write generation the memos check.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include "common/strings.h"
#include "metastore/metastore.h"
#include "metastore/read_cache.h"
#include "sqlite/sqlite.h"

namespace tablemere::metastore {
namespace {

// Versioned migrations, applied in order at start; each runs once, in a transaction.
const char* const kMigrations[] = {
    // 1: accounts, catalog, tasks
    R"sql(
CREATE TABLE principals (id TEXT PRIMARY KEY, kind TEXT NOT NULL, email TEXT, display_name TEXT,
  org_id TEXT, role TEXT, created_by TEXT, created_ms INTEGER NOT NULL, suspended INTEGER NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX principals_email ON principals(email) WHERE email IS NOT NULL AND email != '';
CREATE UNIQUE INDEX principals_agent_name ON principals(org_id, display_name) WHERE kind = 'agent';
CREATE TABLE api_keys (key_id TEXT PRIMARY KEY, principal_id TEXT NOT NULL REFERENCES principals(id),
  secret_hash TEXT NOT NULL, created_ms INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE orgs (id TEXT PRIMARY KEY, name TEXT NOT NULL, handle TEXT NOT NULL UNIQUE, created_ms INTEGER NOT NULL);
CREATE TABLE memberships (org_id TEXT NOT NULL REFERENCES orgs(id), principal_id TEXT NOT NULL REFERENCES principals(id),
  role TEXT NOT NULL, PRIMARY KEY (org_id, principal_id));
CREATE TABLE projects (id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES orgs(id), name TEXT NOT NULL,
  created_ms INTEGER NOT NULL, UNIQUE (org_id, name));
CREATE TABLE warehouses (id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id),
  org_id TEXT NOT NULL, name TEXT NOT NULL, generation INTEGER NOT NULL, created_ms INTEGER NOT NULL,
  UNIQUE (project_id, name));
CREATE TABLE grants (warehouse_id TEXT NOT NULL REFERENCES warehouses(id), principal_id TEXT NOT NULL REFERENCES principals(id),
  level TEXT NOT NULL, granted_by TEXT, PRIMARY KEY (warehouse_id, principal_id));
CREATE TABLE bucket_owners (bucket TEXT PRIMARY KEY, owner TEXT NOT NULL);
CREATE TABLE namespaces (warehouse_id TEXT NOT NULL, name TEXT NOT NULL, properties TEXT NOT NULL,
  PRIMARY KEY (warehouse_id, name)) WITHOUT ROWID;
CREATE TABLE entries (warehouse_id TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
  kind TEXT NOT NULL, uuid TEXT NOT NULL, location TEXT NOT NULL, metadata_location TEXT NOT NULL,
  metadata TEXT NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL,
  PRIMARY KEY (warehouse_id, namespace, name)) WITHOUT ROWID;
CREATE TABLE tasks (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, payload TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, run_after_ms INTEGER NOT NULL, created_ms INTEGER NOT NULL);
)sql",
    // 2: the audit log
    R"sql(
CREATE TABLE audit_events (id INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL,
  principal_id TEXT NOT NULL, org_id TEXT NOT NULL, action TEXT NOT NULL, target_type TEXT NOT NULL,
  target_id TEXT NOT NULL, request_id TEXT NOT NULL, detail TEXT NOT NULL);
CREATE INDEX audit_by_org ON audit_events(org_id, at_ms);
CREATE INDEX audit_by_principal ON audit_events(principal_id, at_ms);
)sql",
    // 3: API keys get a label and a revocation time (the api-keys routes list them)
    R"sql(
ALTER TABLE api_keys ADD COLUMN label TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN revoked_ms INTEGER NOT NULL DEFAULT 0;
CREATE INDEX api_keys_by_principal ON api_keys(principal_id, created_ms);
)sql",
    // 4: idempotency keys of the control plane's creating POSTs
    R"sql(
CREATE TABLE idempotency_keys (principal_id TEXT NOT NULL, key TEXT NOT NULL, endpoint TEXT NOT NULL,
  resource_id TEXT NOT NULL, created_ms INTEGER NOT NULL, PRIMARY KEY (principal_id, key)) WITHOUT ROWID;
)sql",
};

// Read connections kept open: enough for the cores this runs on to read concurrently.
constexpr int kReaders = 4;

std::string JoinNs(const std::vector<std::string>& levels) {
  std::string out;
  for (size_t i = 0; i < levels.size(); i++) {
    if (i) out.push_back('\x1f');
    out += levels[i];
  }
  return out;
}
std::vector<std::string> SplitNs(const std::string& joined) { return Split(joined, '\x1f'); }

Error NotFound(const std::string& what) { return Error{ErrorCode::kNotFound, what, {}}; }

class SqliteMetastore final : public Metastore,
                              public AccountStore,
                              public CatalogStore,
                              public TaskStore,
                              public AuditStore {
 public:
  SqliteMetastore(int lock_fd, std::unique_ptr<sqlite::Db> writer,
                  std::vector<std::unique_ptr<sqlite::Db>> readers, const Clock& clock)
      : lock_(lock_fd), writer_(std::move(writer)), clock_(clock) {
    for (auto& r : readers) idle_readers_.push_back(std::move(r));
  }

  Result<void> Migrate() {
    std::lock_guard lock(write_mu_);
    TM_TRY(writer_->Exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)"));
    TM_ASSIGN(auto* st,
              writer_->Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
    TM_ASSIGN(bool row, st->Bind({}).Step());
    int64_t current = row ? st->Int(0) : 0;
    st->Bind({});
    int64_t version = 0;
    for (const char* sql : kMigrations) {
      version++;
      if (version <= current) continue;
      TM_ASSIGN(auto txn, sqlite::Transaction::Begin(*writer_));
      TM_TRY(writer_->Exec(sql));
      TM_ASSIGN(auto* ins, writer_->Prepare("INSERT INTO schema_migrations(version) VALUES(?)"));
      TM_TRY(ins->Bind({version}).Run());
      TM_TRY(txn.Commit());
    }
    return {};
  }

  AccountStore& accounts() override { return *this; }
  CatalogStore& catalog() override { return *this; }
  TaskStore& tasks() override { return *this; }
  AuditStore& audit() override { return *this; }
  Result<void> Ping() override {
    return Read([](sqlite::Db& db) { return db.Exec("SELECT 1"); });
  }

  // ---------------- accounts ----------------
  Result<void> CreateSignup(const Principal& human, const ApiKey& key, const Organization& org,
                            const Project& project, const Warehouse& warehouse) override {
    return Write([&](sqlite::Db& db) -> Result<void> {
      TM_TRY(InsertPrincipal(db, human));
      TM_TRY(InsertKey(db, key));
      TM_TRY(Run(db, "INSERT INTO orgs VALUES(?, ?, ?, ?)",
                 {org.id, org.name, org.handle, org.created_ms}));
      TM_TRY(Run(db, "INSERT INTO memberships VALUES(?, ?, 'admin')", {org.id, human.id}));
      TM_TRY(Run(db, "INSERT INTO projects VALUES(?, ?, ?, ?)",
                 {project.id, project.org_id, project.name, project.created_ms}));
      TM_TRY(InsertWarehouse(db, warehouse));
      return Run(db, "INSERT INTO grants VALUES(?, ?, 'write', ?)",
                 {warehouse.id, human.id, human.id});
    });
  }

  Result<void> CreateAgent(const Principal& agent, const ApiKey& key,
                           const std::vector<Grant>& grants) override {
    return Write([&](sqlite::Db& db) -> Result<void> {
      TM_TRY(InsertPrincipal(db, agent));
      TM_TRY(InsertKey(db, key));
      TM_TRY(
          Run(db, "INSERT INTO memberships VALUES(?, ?, ?)", {agent.org_id, agent.id, agent.role}));
      for (const Grant& g : grants) {
        TM_TRY(Run(db, "INSERT OR REPLACE INTO grants VALUES(?, ?, ?, ?)",
                   {g.warehouse_id, g.principal_id, g.level, g.granted_by}));
      }
      return {};
    });
  }

  Result<ApiKey> FindApiKey(const std::string& key_id) override {
    return Read([&](sqlite::Db& db) { return OneApiKey(db, " WHERE key_id = ?", {key_id}); });
  }

  Result<void> CreateApiKey(const ApiKey& key) override {
    return Write([&](sqlite::Db& db) { return InsertKey(db, key); });
  }

  Result<std::vector<ApiKey>> ApiKeysOf(const std::string& principal_id) override {
    return Read([&](sqlite::Db& db) -> Result<std::vector<ApiKey>> {
      return sqlite::Query(
          db, std::string(kApiKeySelect) + " WHERE principal_id = ? ORDER BY created_ms, key_id",
          {principal_id}, ApiKeyRow);
    });
  }

  Result<ApiKey> RevokeApiKey(const std::string& principal_id, const std::string& key_id,
                              int64_t at_ms) override {
    return Write([&](sqlite::Db& db) -> Result<ApiKey> {
      TM_TRY(Run(db,
                 "UPDATE api_keys SET revoked = 1, revoked_ms = ? WHERE key_id = ? AND "
                 "principal_id = ? AND revoked = 0",
                 {at_ms, key_id, principal_id}));
      return OneApiKey(db, " WHERE key_id = ? AND principal_id = ?", {key_id, principal_id});
    });
  }

  Result<bool> HandleTaken(const std::string& handle) override {
    return Read([&](sqlite::Db& db) -> Result<bool> {
      TM_ASSIGN(auto* st, db.Prepare("SELECT 1 FROM orgs WHERE handle = ?"));
      TM_ASSIGN(bool row, st->Bind({handle}).Step());
      st->Bind({});
      return row;
    });
  }

  Result<Principal> FindPrincipal(const std::string& id) override {
    return Read([&](sqlite::Db& db) -> Result<Principal> {
      TM_ASSIGN(auto* st, db.Prepare("SELECT kind, email, display_name, org_id, role, created_by, "
                                     "created_ms, suspended FROM principals WHERE id = ?"));
      TM_ASSIGN(bool row, st->Bind({id}).Step());
      if (!row) return Fail(NotFound("principal not found"));
      Principal p{id,          st->Text(0), st->Text(1), st->Text(2),    st->Text(3),
                  st->Text(4), st->Text(5), st->Int(6),  st->Int(7) != 0};
      st->Bind({});
      return p;
    });
  }

  Result<std::vector<std::pair<Organization, std::string>>> OrgsOf(
      const std::string& principal_id) override {
    return Read([&](sqlite::Db& db) -> Result<std::vector<std::pair<Organization, std::string>>> {
      TM_ASSIGN(auto* st,
                db.Prepare("SELECT o.id, o.name, o.handle, o.created_ms, m.role FROM orgs o "
                           "JOIN memberships m ON m.org_id = o.id WHERE m.principal_id = ? "
                           "ORDER BY o.created_ms"));
      st->Bind({principal_id});
      std::vector<std::pair<Organization, std::string>> out;
      while (true) {
        TM_ASSIGN(bool row, st->Step());
        if (!row) break;
        out.emplace_back(Organization{st->Text(0), st->Text(1), st->Text(2), st->Int(3)},
                         st->Text(4));
      }
      return out;
    });
  }

  Result<std::vector<Warehouse>> WarehousesOfOrg(const std::string& org_id) override {
    return Read([&](sqlite::Db& db) -> Result<std::vector<Warehouse>> {
      return sqlite::Query(db,
                           std::string(kWarehouseSelect) + " WHERE org_id = ? ORDER BY created_ms",
                           {org_id}, [&](sqlite::Statement& st) { return WarehouseRow(st); });
    });
  }

  // Every catalog request checks its warehouse's credential generation: memoised.
  Result<Warehouse> FindWarehouse(const std::string& id) override {
    return warehouse_memo_.Get(id, [&] {
      return Read([&](sqlite::Db& db) -> Result<Warehouse> { return FindWarehouseIn(db, id); });
    });
  }

  Result<std::vector<Grant>> GrantsOf(const std::string& principal_id) override {
    return Read([&](sqlite::Db& db) -> Result<std::vector<Grant>> {
      return sqlite::Query(db,
                           "SELECT warehouse_id, level, granted_by FROM grants WHERE "
                           "principal_id = ?",
                           {principal_id}, [&](sqlite::Statement& st) {
                             return Grant{st.Text(0), principal_id, st.Text(1), st.Text(2)};
                           });
    });
  }

  Result<std::vector<Project>> ProjectsOfOrg(const std::string& org_id) override {
    return Read([&](sqlite::Db& db) -> Result<std::vector<Project>> {
      return sqlite::Query(db,
                           "SELECT id, name, created_ms FROM projects WHERE org_id = ? "
                           "ORDER BY created_ms",
                           {org_id}, [&](sqlite::Statement& st) {
                             return Project{st.Text(0), org_id, st.Text(1), st.Int(2)};
                           });
    });
  }

  Result<Project> FindProject(const std::string& id) override {
    return Read([&](sqlite::Db& db) -> Result<Project> {
      TM_ASSIGN(auto rows,
                sqlite::Query(db,
                              "SELECT id, org_id, name, created_ms FROM projects "
                              "WHERE id = ?",
                              {id}, [](sqlite::Statement& st) {
                                return Project{st.Text(0), st.Text(1), st.Text(2), st.Int(3)};
                              }));
      if (rows.empty()) return Fail(NotFound("project not found"));
      return rows.front();
    });
  }

  Result<void> CreateProject(const Project& p,
                             const std::optional<IdempotencyRecord>& idem) override {
    return Write([&](sqlite::Db& db) -> Result<void> {
      if (idem) {
        auto r = Run(
            db, "INSERT INTO idempotency_keys VALUES(?, ?, ?, ?, ?)",
            {idem->principal_id, idem->key, idem->endpoint, idem->resource_id, idem->created_ms});
        if (!r && r.error().code == ErrorCode::kConflict) {
          return Fail(Error{ErrorCode::kConflict, "idempotency key used before", {}}.With(
              "reason", "idempotency_key"));
        }
        TM_TRY(r);
      }
      auto r = Run(db, "INSERT INTO projects VALUES(?, ?, ?, ?)",
                   {p.id, p.org_id, p.name, p.created_ms});
      if (!r && r.error().code == ErrorCode::kConflict) {
        return Fail(
            Error{ErrorCode::kAlreadyExists, "project name in use", {}}.With("reason", "name"));
      }
      return r;
    });
  }

  Result<std::optional<IdempotencyRecord>> FindIdempotency(const std::string& principal_id,
                                                           const std::string& key) override {
    return Read([&](sqlite::Db& db) -> Result<std::optional<IdempotencyRecord>> {
      TM_ASSIGN(
          auto rows,
          sqlite::Query(
              db,
              "SELECT endpoint, resource_id, created_ms FROM idempotency_keys "
              "WHERE principal_id = ? AND key = ?",
              {principal_id, key}, [&](sqlite::Statement& st) {
                return IdempotencyRecord{principal_id, key, st.Text(0), st.Text(1), st.Int(2)};
              }));
      if (rows.empty()) return std::optional<IdempotencyRecord>();
      return std::optional<IdempotencyRecord>(rows.front());
    });
  }

  Result<Warehouse> RotateWarehouse(const std::string& id) override {
    return Write([&](sqlite::Db& db) -> Result<Warehouse> {
      TM_TRY(Run(db, "UPDATE warehouses SET generation = generation + 1 WHERE id = ?", {id}));
      if (db.Changes() == 0) return Fail(NotFound("warehouse not found"));
      return FindWarehouseIn(db, id);
    });
  }

  Result<void> SetBucketOwner(const std::string& bucket, const std::string& owner) override {
    return Write([&](sqlite::Db& db) {
      return Run(db, "INSERT OR REPLACE INTO bucket_owners VALUES(?, ?)", {bucket, owner});
    });
  }
  Result<std::string> BucketOwner(const std::string& bucket) override {
    return Read([&](sqlite::Db& db) -> Result<std::string> {
      TM_ASSIGN(auto* st, db.Prepare("SELECT owner FROM bucket_owners WHERE bucket = ?"));
      TM_ASSIGN(bool row, st->Bind({bucket}).Step());
      if (!row) return Fail(NotFound("bucket has no recorded owner"));
      std::string owner = st->Text(0);
      st->Bind({});
      return owner;
    });
  }
  Result<void> ClearBucketOwner(const std::string& bucket) override {
    return Write([&](sqlite::Db& db) {
      return Run(db, "DELETE FROM bucket_owners WHERE bucket = ?", {bucket});
    });
  }

  // ---------------- catalog ----------------
  Result<void> CreateNamespace(const Namespace& ns) override {
    return Write([&](sqlite::Db& db) -> Result<void> {
      auto r = Run(db, "INSERT INTO namespaces VALUES(?, ?, ?)",
                   {ns.warehouse_id, JoinNs(ns.levels), ns.properties_json});
      if (!r && r.error().code == ErrorCode::kConflict) {
        return Fail(ErrorCode::kAlreadyExists, "Namespace already exists");
      }
      return r;
    });
  }

  Result<Namespace> GetNamespace(const std::string& warehouse_id,
                                 const std::vector<std::string>& levels) override {
    return Read([&](sqlite::Db& db) -> Result<Namespace> {
      return GetNamespaceIn(db, warehouse_id, levels);
    });
  }

  Result<std::vector<Namespace>> ListNamespaces(const std::string& warehouse_id,
                                                const std::vector<std::string>& parent) override {
    return Read([&](sqlite::Db& db) -> Result<std::vector<Namespace>> {
      TM_ASSIGN(auto* st,
                db.Prepare("SELECT name, properties FROM namespaces WHERE warehouse_id = ? "
                           "ORDER BY name"));
      st->Bind({warehouse_id});
      std::vector<Namespace> out;
      while (true) {
        TM_ASSIGN(bool row, st->Step());
        if (!row) break;
        auto levels = SplitNs(st->Text(0));
        if (levels.size() != parent.size() + 1) continue;
        if (!std::equal(parent.begin(), parent.end(), levels.begin())) continue;
        out.push_back(Namespace{warehouse_id, levels, st->Text(1)});
      }
      return out;
    });
  }

  Result<void> UpdateNamespaceProperties(const std::string& warehouse_id,
                                         const std::vector<std::string>& levels,
                                         const std::string& properties_json) override {
    return Write([&](sqlite::Db& db) -> Result<void> {
      TM_TRY(Run(db, "UPDATE namespaces SET properties = ? WHERE warehouse_id = ? AND name = ?",
                 {properties_json, warehouse_id, JoinNs(levels)}));
      if (db.Changes() == 0) return Fail(NotFound("namespace not found"));
      return {};
    });
  }

  Result<void> DropNamespace(const std::string& warehouse_id,
                             const std::vector<std::string>& levels) override {
    return Write([&](sqlite::Db& db) -> Result<void> {
      std::string name = JoinNs(levels);
      TM_TRY(GetNamespaceIn(db, warehouse_id, levels));
      TM_ASSIGN(
          auto* e,
          db.Prepare("SELECT 1 FROM entries WHERE warehouse_id = ? AND namespace = ? LIMIT 1"));
      TM_ASSIGN(bool has_entries, e->Bind({warehouse_id, name}).Step());
      e->Bind({});
      TM_ASSIGN(auto* c,
                db.Prepare("SELECT 1 FROM namespaces WHERE warehouse_id = ? AND name > ? AND "
                           "name < ? LIMIT 1"));
      TM_ASSIGN(bool has_children, c->Bind({warehouse_id, name + "\x1f", name + "\x20"}).Step());
      c->Bind({});
      if (has_entries || has_children) {
        return Fail(ErrorCode::kConflict, "Namespace is not empty");
      }
      return Run(db, "DELETE FROM namespaces WHERE warehouse_id = ? AND name = ?",
                 {warehouse_id, name});
    });
  }

  Result<TableEntry> GetEntry(const std::string& warehouse_id, const std::vector<std::string>& ns,
                              const std::string& name) override {
    return Read([&](sqlite::Db& db) { return GetEntryIn(db, warehouse_id, ns, name); });
  }

  Result<std::vector<TableEntry>> ListEntries(const std::string& warehouse_id,
                                              const std::vector<std::string>& ns,
                                              const std::string& kind) override {
    return Read([&](sqlite::Db& db) -> Result<std::vector<TableEntry>> {
      return sqlite::Query(
          db,
          std::string(kEntrySelect) +
              " WHERE warehouse_id = ? AND namespace = ? AND kind = ? ORDER BY name",
          {warehouse_id, JoinNs(ns), kind}, [&](sqlite::Statement& st) { return EntryRow(st); });
    });
  }

  Result<TableEntry> GetEntryHead(const std::string& warehouse_id,
                                  const std::vector<std::string>& ns,
                                  const std::string& name) override {
    // loadTable's one read: memoised (the metadata text itself is cached by location).
    std::string key = MemoKey({warehouse_id, JoinNs(ns), name});
    return entry_head_memo_.Get(key, [&] { return ReadEntryHead(warehouse_id, ns, name); });
  }

  Result<TableEntry> ReadEntryHead(const std::string& warehouse_id,
                                   const std::vector<std::string>& ns, const std::string& name) {
    return Read([&](sqlite::Db& db) -> Result<TableEntry> {
      TM_ASSIGN(auto* st, db.Prepare("SELECT warehouse_id, namespace, name, kind, uuid, location, "
                                     "metadata_location, '', created_ms, updated_ms FROM entries "
                                     "WHERE warehouse_id = ? AND namespace = ? AND name = ?"));
      TM_ASSIGN(bool row, st->Bind({warehouse_id, JoinNs(ns), name}).Step());
      if (!row) {
        return Fail(Error{ErrorCode::kNotFound, "not found: " + JoinDots(ns) + "." + name, {}}.With(
            "missing", "entry"));
      }
      TableEntry e = EntryRow(*st);
      st->Bind({});
      return e;
    });
  }

  Result<std::vector<TableEntry>> ListEntriesOfKind(const std::string& warehouse_id,
                                                    const std::string& kind) override {
    return Read([&](sqlite::Db& db) -> Result<std::vector<TableEntry>> {
      return sqlite::Query(db,
                           std::string(kEntrySelect) +
                               " WHERE warehouse_id = ? AND kind = ? ORDER BY namespace, name",
                           {warehouse_id, kind},
                           [&](sqlite::Statement& st) { return EntryRow(st); });
    });
  }

  Result<void> SwapMetadata(const std::vector<MetadataSwap>& swaps) override {
    return Write([&](sqlite::Db& db) -> Result<void> {
      for (const MetadataSwap& s : swaps) {
        auto existing = GetEntryIn(db, s.warehouse_id, s.namespace_levels, s.name);
        const TableEntry& r = s.replacement;
        if (s.expected_metadata_location.empty()) {
          if (existing) {
            return Fail(Error{ErrorCode::kAlreadyExists, "already exists", {}}.With(
                "existing_kind", existing->kind));
          }
          if (existing.error().code != ErrorCode::kNotFound) return Fail(existing.error());
          TM_TRY(GetNamespaceIn(db, s.warehouse_id, s.namespace_levels));
          TM_TRY(
              Run(db, "INSERT INTO entries VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  {r.warehouse_id, JoinNs(r.namespace_levels), r.name, r.kind, r.uuid, r.location,
                   r.metadata_location, r.metadata_json, r.created_ms, r.updated_ms}));
          continue;
        }
        if (!existing) return Fail(existing.error());
        if (existing->metadata_location != s.expected_metadata_location) {
          return Fail(StalePointer());
        }
        TM_TRY(Run(db,
                   "UPDATE entries SET metadata_location = ?, metadata = ?, location = ?, "
                   "updated_ms = ? WHERE warehouse_id = ? AND namespace = ? AND name = ? AND "
                   "metadata_location = ?",
                   {r.metadata_location, r.metadata_json, r.location, r.updated_ms, s.warehouse_id,
                    JoinNs(s.namespace_levels), s.name, s.expected_metadata_location}));
        if (db.Changes() != 1) return Fail(StalePointer());
      }
      return {};
    });
  }

  Result<TableEntry> DropEntry(const std::string& warehouse_id, const std::vector<std::string>& ns,
                               const std::string& name, const std::string& kind,
                               const DropFollowUp& follow_up) override {
    return Write([&](sqlite::Db& db) -> Result<TableEntry> {
      TM_ASSIGN(TableEntry e, GetEntryIn(db, warehouse_id, ns, name));
      if (e.kind != kind) return Fail(NotFound("no " + kind + " with that name"));
      TM_TRY(Run(db, "DELETE FROM entries WHERE warehouse_id = ? AND namespace = ? AND name = ?",
                 {warehouse_id, JoinNs(ns), name}));
      if (follow_up) {
        if (std::optional<NewTask> task = follow_up(e)) TM_TRY(InsertTask(db, *task));
      }
      return e;
    });
  }

  Result<void> RenameEntry(const std::string& warehouse_id, const std::vector<std::string>& from_ns,
                           const std::string& from_name, const std::vector<std::string>& to_ns,
                           const std::string& to_name, const std::string& kind) override {
    return Write([&](sqlite::Db& db) -> Result<void> {
      TM_ASSIGN(TableEntry e, GetEntryIn(db, warehouse_id, from_ns, from_name));
      if (e.kind != kind) return Fail(NotFound("no " + kind + " with that name"));
      TM_TRY(GetNamespaceIn(db, warehouse_id, to_ns));
      auto target = GetEntryIn(db, warehouse_id, to_ns, to_name);
      if (target) {
        return Fail(Error{ErrorCode::kAlreadyExists, "already exists", {}}.With("existing_kind",
                                                                                target->kind));
      }
      return Run(
          db,
          "UPDATE entries SET namespace = ?, name = ?, updated_ms = ? WHERE "
          "warehouse_id = ? AND namespace = ? AND name = ?",
          {JoinNs(to_ns), to_name, clock_.NowMillis(), warehouse_id, JoinNs(from_ns), from_name});
    });
  }

  // ---------------- tasks ----------------
  Result<void> Enqueue(const std::string& kind, const std::string& payload_json) override {
    return Write([&](sqlite::Db& db) { return InsertTask(db, NewTask{kind, payload_json}); });
  }

  Result<std::optional<Task>> Claim(int64_t lease_ms) override {
    int64_t now = clock_.NowMillis();
    return Write([&](sqlite::Db& db) -> Result<std::optional<Task>> {
      TM_ASSIGN(auto* st, db.Prepare("SELECT id, kind, payload, attempts FROM tasks WHERE "
                                     "run_after_ms <= ? ORDER BY id LIMIT 1"));
      TM_ASSIGN(bool row, st->Bind({now}).Step());
      if (!row) return std::optional<Task>();
      Task t{st->Int(0), st->Text(1), st->Text(2), static_cast<int>(st->Int(3))};
      st->Bind({});
      TM_TRY(Run(db, "UPDATE tasks SET run_after_ms = ?, attempts = attempts + 1 WHERE id = ?",
                 {now + lease_ms, t.id}));
      return std::optional<Task>(t);
    });
  }

  Result<void> Complete(int64_t task_id) override {
    return Write(
        [&](sqlite::Db& db) { return Run(db, "DELETE FROM tasks WHERE id = ?", {task_id}); });
  }

  Result<void> Retry(int64_t task_id, int64_t delay_ms) override {
    int64_t at = clock_.NowMillis() + delay_ms;
    return Write([&](sqlite::Db& db) {
      return Run(db, "UPDATE tasks SET run_after_ms = ? WHERE id = ?", {at, task_id});
    });
  }

  Result<std::vector<Task>> ListOfKind(const std::string& kind) override {
    return Read([&](sqlite::Db& db) -> Result<std::vector<Task>> {
      return sqlite::Query(
          db, "SELECT id, kind, payload, attempts FROM tasks WHERE kind = ? ORDER BY id", {kind},
          [](sqlite::Statement& st) {
            return Task{st.Int(0), st.Text(1), st.Text(2), static_cast<int>(st.Int(3))};
          });
    });
  }

  // ---------------------------------------------------------------- audit
  Result<void> Record(const AuditEvent& e) override {
    return Write([&](sqlite::Db& db) {
      return Run(db,
                 "INSERT INTO audit_events(at_ms, principal_id, org_id, action, target_type, "
                 "target_id, request_id, detail) VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
                 {e.at_ms, e.principal_id, e.org_id, e.action, e.target_type, e.target_id,
                  e.request_id, e.detail_json});
    });
  }

  Result<std::vector<AuditEvent>> List(const std::string& org_id, const std::string& principal_id,
                                       const std::string& action_prefix, int64_t since_ms,
                                       int limit) override {
    return Read([&](sqlite::Db& db) -> Result<std::vector<AuditEvent>> {
      std::string sql =
          "SELECT id, at_ms, principal_id, org_id, action, target_type, target_id, request_id, "
          "detail FROM audit_events WHERE ";
      sql += org_id.empty() ? "principal_id = ?" : "org_id = ?";
      sql += " AND at_ms >= ? AND substr(action, 1, ?) = ? ORDER BY at_ms DESC, id DESC LIMIT ?";
      return sqlite::Query(
          db, sql,
          {org_id.empty() ? principal_id : org_id, since_ms,
           static_cast<int64_t>(action_prefix.size()), action_prefix, int64_t{limit}},
          [&](sqlite::Statement& st) {
            return AuditEvent{st.Int(0),  st.Int(1),  st.Text(2), st.Text(3), st.Text(4),
                              st.Text(5), st.Text(6), st.Text(7), st.Text(8)};
          });
    });
  }

 private:
  static constexpr char kWarehouseSelect[] =
      "SELECT id, project_id, org_id, name, generation, created_ms FROM warehouses";
  static constexpr char kEntrySelect[] =
      "SELECT warehouse_id, namespace, name, kind, uuid, location, metadata_location, metadata, "
      "created_ms, updated_ms FROM entries";

  static constexpr char kApiKeySelect[] =
      "SELECT key_id, principal_id, secret_hash, created_ms, revoked, label, revoked_ms FROM "
      "api_keys";

  static ApiKey ApiKeyRow(sqlite::Statement& st) {
    return ApiKey{st.Text(0),     st.Text(1), st.Text(2), st.Int(3),
                  st.Int(4) != 0, st.Text(5), st.Int(6)};
  }
  // The one key `where` selects; kNotFound when none does.
  static Result<ApiKey> OneApiKey(sqlite::Db& db, const char* where,
                                  const std::vector<sqlite::Value>& params) {
    TM_ASSIGN(auto* st, db.Prepare(std::string(kApiKeySelect) + where));
    TM_ASSIGN(bool row, st->Bind(params).Step());
    if (!row) return Fail(NotFound("api key not found"));
    ApiKey k = ApiKeyRow(*st);
    st->Bind({});
    return k;
  }

  static Warehouse WarehouseRow(sqlite::Statement& st) {
    return Warehouse{st.Text(0), st.Text(1), st.Text(2), st.Text(3), st.Int(4), st.Int(5)};
  }
  static TableEntry EntryRow(sqlite::Statement& st) {
    return TableEntry{st.Text(0), SplitNs(st.Text(1)), st.Text(2), st.Text(3), st.Text(4),
                      st.Text(5), st.Text(6),          st.Text(7), st.Int(8),  st.Int(9)};
  }

  template <typename F>
  auto Write(F&& fn) -> decltype(fn(std::declval<sqlite::Db&>())) {
    std::lock_guard lock(write_mu_);
    const int64_t changes_before = writer_->TotalChanges();
    TM_ASSIGN(auto txn, sqlite::Transaction::Begin(*writer_));
    auto result = fn(*writer_);
    if (!result) return result;  // rolled back: nothing changed
    if (writer_->TotalChanges() == changes_before) {
      // Nothing changed (an empty task poll): the memos stay valid.
      TM_TRY(txn.Commit());
      return result;
    }
    // The generation is odd while the commit may become visible (see read_cache.h).
    write_generation_.BeginCommit();
    auto committed = txn.Commit();
    write_generation_.EndCommit();
    TM_TRY(committed);
    return result;
  }

  // Reads borrow one of a few connections, so concurrent readers (loadTable under
  // load) do not queue behind each other; WAL lets them run beside the writer.
  template <typename F>
  auto Read(F&& fn) -> decltype(fn(std::declval<sqlite::Db&>())) {
    std::unique_ptr<sqlite::Db> db;
    {
      std::unique_lock lock(read_mu_);
      read_cv_.wait(lock, [&] { return !idle_readers_.empty(); });
      db = std::move(idle_readers_.back());
      idle_readers_.pop_back();
    }
    auto result = fn(*db);
    {
      std::lock_guard lock(read_mu_);
      idle_readers_.push_back(std::move(db));
    }
    read_cv_.notify_one();
    return result;
  }

  // A task due after its delay, written inside the caller's transaction.
  Result<void> InsertTask(sqlite::Db& db, const NewTask& task) {
    int64_t now = clock_.NowMillis();
    return Run(db, "INSERT INTO tasks(kind, payload, run_after_ms, created_ms) VALUES(?, ?, ?, ?)",
               {task.kind, task.payload_json, now + task.delay_ms, now});
  }

  static Result<void> Run(sqlite::Db& db, const std::string& sql,
                          const std::vector<sqlite::Value>& params) {
    TM_ASSIGN(auto* st, db.Prepare(sql));
    return st->Bind(params).Run();
  }

  static Result<void> InsertPrincipal(sqlite::Db& db, const Principal& p) {
    auto r = Run(
        db, "INSERT INTO principals VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
        {p.id, p.kind, p.email.empty() ? sqlite::Value() : sqlite::Value(p.email), p.display_name,
         p.org_id, p.role, p.created_by, p.created_ms, int64_t{p.suspended ? 1 : 0}});
    if (!r && r.error().code == ErrorCode::kConflict) {
      return Fail(ErrorCode::kAlreadyExists, p.kind == "agent"
                                                 ? "an agent with this name exists"
                                                 : "an account with this email exists");
    }
    return r;
  }
  static Result<void> InsertKey(sqlite::Db& db, const ApiKey& k) {
    return Run(db,
               "INSERT INTO api_keys(key_id, principal_id, secret_hash, created_ms, revoked, "
               "label, revoked_ms) VALUES(?, ?, ?, ?, 0, ?, 0)",
               {k.key_id, k.principal_id, k.secret_hash, k.created_ms, k.label});
  }
  static Result<void> InsertWarehouse(sqlite::Db& db, const Warehouse& w) {
    return Run(db, "INSERT INTO warehouses VALUES(?, ?, ?, ?, ?, ?)",
               {w.id, w.project_id, w.org_id, w.name, w.credential_generation, w.created_ms});
  }

  static Result<Warehouse> FindWarehouseIn(sqlite::Db& db, const std::string& id) {
    TM_ASSIGN(auto* st, db.Prepare(std::string(kWarehouseSelect) + " WHERE id = ?"));
    TM_ASSIGN(bool row, st->Bind({id}).Step());
    if (!row) return Fail(NotFound("warehouse not found"));
    Warehouse w = WarehouseRow(*st);
    st->Bind({});
    return w;
  }

  static Result<Namespace> GetNamespaceIn(sqlite::Db& db, const std::string& warehouse_id,
                                          const std::vector<std::string>& levels) {
    TM_ASSIGN(auto* st,
              db.Prepare("SELECT properties FROM namespaces WHERE warehouse_id = ? AND name = ?"));
    TM_ASSIGN(bool row, st->Bind({warehouse_id, JoinNs(levels)}).Step());
    if (!row) {
      return Fail(
          Error{ErrorCode::kNotFound, "Namespace does not exist: " + JoinDots(levels), {}}.With(
              "missing", "namespace"));
    }
    Namespace ns{warehouse_id, levels, st->Text(0)};
    st->Bind({});
    return ns;
  }

  static std::string JoinDots(const std::vector<std::string>& levels) {
    std::string out;
    for (size_t i = 0; i < levels.size(); i++) out += (i ? "." : "") + levels[i];
    return out;
  }

  static Result<TableEntry> GetEntryIn(sqlite::Db& db, const std::string& warehouse_id,
                                       const std::vector<std::string>& ns,
                                       const std::string& name) {
    TM_ASSIGN(auto* st, db.Prepare(std::string(kEntrySelect) +
                                   " WHERE warehouse_id = ? AND namespace = ? AND name = ?"));
    TM_ASSIGN(bool row, st->Bind({warehouse_id, JoinNs(ns), name}).Step());
    if (!row) {
      return Fail(Error{ErrorCode::kNotFound, "not found: " + JoinDots(ns) + "." + name, {}}.With(
          "missing", "entry"));
    }
    TableEntry e = EntryRow(*st);
    st->Bind({});
    return e;
  }

  // The exclusive lock on "<db>.lock": declared first, so released after every
  // connection has closed.
  struct LockFile {
    explicit LockFile(int fd) : fd(fd) {}
    ~LockFile() { ::close(fd); }
    LockFile(const LockFile&) = delete;
    LockFile& operator=(const LockFile&) = delete;
    int fd;
  } lock_;
  std::mutex write_mu_;
  std::unique_ptr<sqlite::Db> writer_;  // protected by write_mu_
  WriteGeneration write_generation_;
  ReadCache<Warehouse> warehouse_memo_{write_generation_};
  ReadCache<TableEntry> entry_head_memo_{write_generation_};
  std::mutex read_mu_;
  std::condition_variable read_cv_;
  std::vector<std::unique_ptr<sqlite::Db>> idle_readers_;  // protected by read_mu_
  const Clock& clock_;
};

// The writer connection and the pool of readers.
Result<std::pair<std::unique_ptr<sqlite::Db>, std::vector<std::unique_ptr<sqlite::Db>>>>
OpenConnections(const std::string& path) {
  TM_ASSIGN(auto writer, sqlite::Db::Open(path, true));
  std::vector<std::unique_ptr<sqlite::Db>> readers;
  for (int i = 0; i < kReaders; i++) {
    TM_ASSIGN(auto reader, sqlite::Db::Open(path, true));
    readers.push_back(std::move(reader));
  }
  return std::pair{std::move(writer), std::move(readers)};
}

}  // namespace

Result<std::unique_ptr<Metastore>> OpenSqliteMetastore(const std::string& path,
                                                       const Clock& clock) {
  // One process per database: a second server on the same data directory would
  // invalidate the memos above (and race the object store's index). The lock goes with
  // the process, however it ends.
  std::string lock_path = path + ".lock";
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return Fail(ErrorCode::kUnavailable, "cannot open " + lock_path);
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd);
    return Fail(ErrorCode::kUnavailable,
                "the data directory is in use by another tablemere-server (" + lock_path +
                    " is locked); stop it or choose another --data-dir");
  }
  auto connections = OpenConnections(path);
  if (!connections) {
    ::close(lock_fd);
    return Fail(connections.error());
  }
  // From here the store owns the lock.
  auto store = std::make_unique<SqliteMetastore>(lock_fd, std::move(connections->first),
                                                 std::move(connections->second), clock);
  TM_TRY(store->Migrate());
  return std::unique_ptr<Metastore>(std::move(store));
}

}  // namespace tablemere::metastore
