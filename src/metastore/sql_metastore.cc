// The SQL metastore shared by the SQLite and PostgreSQL backends: the versioned
// migrations (written once, in SQL both accept after postgres_metastore.cc's type
// rewrites), the shared helpers, the transactions and the Metastore over a backend's
// Pool. The stores live one file each (sql_accounts.cc, sql_catalog.cc, sql_queue.cc, …).
#include "common/strings.h"
#include "metastore/sql_backend.h"

namespace tablemere::metastore {
namespace sql_backend {

Result<void> Run(sql::Connection& db, const std::string& sql,
                 const std::vector<sql::Value>& params) {
  TM_ASSIGN(auto* st, db.Prepare(sql));
  return st->Bind(params).Run();
}

Result<void> RunUnique(sql::Connection& db, const std::string& sql,
                       const std::vector<sql::Value>& params, Error on_conflict) {
  auto r = Run(db, sql, params);
  if (!r && r.error().code == ErrorCode::kConflict) return Fail(std::move(on_conflict));
  return r;
}

Result<bool> Exists(sql::Connection& db, const std::string& sql,
                    const std::vector<sql::Value>& params) {
  TM_ASSIGN(auto* st, db.Prepare(sql));
  TM_ASSIGN(bool row, st->Bind(params).Step());
  st->Bind({});
  return row;
}

Error NotFound(const std::string& what) { return Error{ErrorCode::kNotFound, what, {}}; }

std::string JoinNs(const std::vector<std::string>& levels) {
  std::string out;
  for (size_t i = 0; i < levels.size(); i++) {
    if (i) out.push_back('\x1f');
    out += levels[i];
  }
  return out;
}
std::vector<std::string> SplitNs(const std::string& joined) { return Split(joined, '\x1f'); }

std::string JoinDots(const std::vector<std::string>& levels) {
  std::string out;
  for (size_t i = 0; i < levels.size(); i++) out += (i ? "." : "") + levels[i];
  return out;
}

Result<void> InsertTask(sql::Connection& db, const Clock& clock, const NewTask& task) {
  int64_t now = clock.NowMillis();
  return Run(db, "INSERT INTO tasks(kind, payload, run_after_ms, created_ms) VALUES(?, ?, ?, ?)",
             {task.kind, task.payload_json, now + task.delay_ms, now});
}

}  // namespace sql_backend

namespace {

using sql_backend::Core;
using sql_backend::Scope;

// Versioned migrations, applied in order at start; each runs once, in a transaction.
// Written in SQLite's spelling of the common subset (INTEGER, WITHOUT ROWID,
// AUTOINCREMENT), which the PostgreSQL pool rewrites; statements the stores run need no
// rewriting.
const std::vector<const char*> kMigrations = {
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
    // 5: when a grant was made (the grants route lists it); emails looked up case-blind
    R"sql(
ALTER TABLE grants ADD COLUMN granted_ms INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX principals_email_lower ON principals(lower(email)) WHERE email IS NOT NULL AND email != '';
)sql",
    // 6: organisations' status and domain join, claimed domains, invitations, Terms
    R"sql(
ALTER TABLE orgs ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
ALTER TABLE orgs ADD COLUMN domain_join INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memberships ADD COLUMN created_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memberships ADD COLUMN joined_via TEXT NOT NULL DEFAULT '';
CREATE TABLE org_domains (domain TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES orgs(id),
  verified_via TEXT NOT NULL, created_ms INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE invitations (token_hash TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES orgs(id),
  email TEXT NOT NULL, role TEXT NOT NULL, invited_by TEXT NOT NULL, created_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL, accepted_ms INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE INDEX invitations_by_email ON invitations(email, created_ms);
CREATE TABLE terms_acceptances (principal_id TEXT NOT NULL, version TEXT NOT NULL,
  accepted_ms INTEGER NOT NULL, via TEXT NOT NULL, PRIMARY KEY (principal_id, version)) WITHOUT ROWID;
)sql",
    // 7: mailed codes and rate-limit windows
    R"sql(
CREATE TABLE pending_codes (purpose TEXT NOT NULL, email TEXT NOT NULL, code_hash TEXT NOT NULL,
  sealed_code TEXT NOT NULL, payload TEXT NOT NULL, created_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (purpose, email)) WITHOUT ROWID;
CREATE TABLE rate_events (bucket TEXT NOT NULL, at_ms INTEGER NOT NULL);
CREATE INDEX rate_events_by_bucket ON rate_events(bucket, at_ms);
)sql",
    // 8: device authorisations (the CLI's login)
    R"sql(
CREATE TABLE device_grants (device_code_hash TEXT PRIMARY KEY, user_code TEXT NOT NULL UNIQUE,
  client TEXT NOT NULL, hostname TEXT NOT NULL, client_name TEXT NOT NULL,
  requested_level TEXT NOT NULL, warehouse_ids TEXT NOT NULL, created_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL, interval_s INTEGER NOT NULL, last_poll_ms INTEGER NOT NULL,
  status TEXT NOT NULL, agent_id TEXT NOT NULL, approved_by TEXT NOT NULL) WITHOUT ROWID;
)sql",
    // 9: storage samples of warehouses
    R"sql(
CREATE TABLE usage_samples (warehouse_id TEXT NOT NULL, at_ms INTEGER NOT NULL,
  table_bytes INTEGER NOT NULL, table_objects INTEGER NOT NULL, blob_bytes INTEGER NOT NULL,
  blob_objects INTEGER NOT NULL, PRIMARY KEY (warehouse_id, at_ms)) WITHOUT ROWID;
)sql",
    // 10: passwords, login sessions and mailed login links
    R"sql(
CREATE TABLE passwords (principal_id TEXT PRIMARY KEY REFERENCES principals(id),
  hash TEXT NOT NULL, changed_ms INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE sessions (id TEXT PRIMARY KEY, principal_id TEXT NOT NULL,
  refresh_hash TEXT NOT NULL UNIQUE, previous_refresh_hash TEXT NOT NULL,
  created_ms INTEGER NOT NULL, last_used_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,
  revoked_ms INTEGER NOT NULL DEFAULT 0, user_agent TEXT NOT NULL, ip TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX sessions_by_principal ON sessions(principal_id, created_ms);
CREATE INDEX sessions_by_previous ON sessions(previous_refresh_hash);
CREATE TABLE login_links (token_hash TEXT PRIMARY KEY, purpose TEXT NOT NULL,
  email TEXT NOT NULL, sealed_token TEXT NOT NULL, payload TEXT NOT NULL,
  created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL, used_ms INTEGER NOT NULL DEFAULT 0)
  WITHOUT ROWID;
CREATE INDEX login_links_by_email ON login_links(email, purpose, created_ms);
)sql",
    // 11: published warehouses (anonymous reads of the table bucket and the catalog)
    R"sql(
ALTER TABLE warehouses ADD COLUMN published_ms INTEGER NOT NULL DEFAULT 0;
)sql",
    // 12: warehouses made read-only by the quota enforcement pass
    R"sql(
ALTER TABLE warehouses ADD COLUMN read_only_ms INTEGER NOT NULL DEFAULT 0;
)sql",
    // 13: S3 traffic counters with the storage samples
    R"sql(
ALTER TABLE usage_samples ADD COLUMN requests INTEGER NOT NULL DEFAULT -1;
ALTER TABLE usage_samples ADD COLUMN requests_failed INTEGER NOT NULL DEFAULT -1;
ALTER TABLE usage_samples ADD COLUMN bytes_in INTEGER NOT NULL DEFAULT -1;
ALTER TABLE usage_samples ADD COLUMN bytes_out INTEGER NOT NULL DEFAULT -1;
ALTER TABLE usage_samples ADD COLUMN counter_epoch TEXT NOT NULL DEFAULT '';
)sql",
    // 14: when API keys were last used
    R"sql(
ALTER TABLE api_keys ADD COLUMN last_used_ms INTEGER NOT NULL DEFAULT 0;
)sql",
    // 15: the last run of each maintenance job on each table
    R"sql(
CREATE TABLE maintenance_runs (warehouse_id TEXT NOT NULL, namespace TEXT NOT NULL,
  name TEXT NOT NULL, job TEXT NOT NULL, at_ms INTEGER NOT NULL, result TEXT NOT NULL,
  PRIMARY KEY (warehouse_id, namespace, name, job)) WITHOUT ROWID;
)sql",
    // 16: orphans in their noncurrent stage (kept, not counted in usage)
    R"sql(
CREATE TABLE noncurrent_objects (warehouse_id TEXT NOT NULL, namespace TEXT NOT NULL,
  name TEXT NOT NULL, object_key TEXT NOT NULL, size INTEGER NOT NULL,
  found_ms INTEGER NOT NULL,
  PRIMARY KEY (warehouse_id, namespace, name, object_key)) WITHOUT ROWID;
)sql",
    // 17: where each compaction moved rows (the commit rebase re-aims deletes with them)
    R"sql(
CREATE TABLE row_moves (warehouse_id TEXT NOT NULL, snapshot_id INTEGER NOT NULL,
  created_ms INTEGER NOT NULL, moves TEXT NOT NULL,
  PRIMARY KEY (warehouse_id, snapshot_id)) WITHOUT ROWID;
)sql",
    // 18: maintenance state of tables dropped before drops deleted it
    R"sql(
DELETE FROM maintenance_runs WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE
  e.warehouse_id = maintenance_runs.warehouse_id AND e.namespace = maintenance_runs.namespace
  AND e.name = maintenance_runs.name AND e.kind = 'table');
DELETE FROM noncurrent_objects WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE
  e.warehouse_id = noncurrent_objects.warehouse_id AND
  e.namespace = noncurrent_objects.namespace AND e.name = noncurrent_objects.name AND
  e.kind = 'table');
)sql",
    // 19: row moves tied to their table too (snapshot ids are only unique within one); the
    // moves kept so far are dropped: they only let a commit in flight be rebased
    R"sql(
DROP TABLE row_moves;
CREATE TABLE row_moves (warehouse_id TEXT NOT NULL, table_uuid TEXT NOT NULL,
  snapshot_id INTEGER NOT NULL, created_ms INTEGER NOT NULL, moves TEXT NOT NULL,
  PRIMARY KEY (warehouse_id, table_uuid, snapshot_id)) WITHOUT ROWID;
)sql",
    // 20: a published warehouse's REST catalog opens to anonymous reads only on its own
    // opt-in (publishing is storage-level); catalogs opened before stay closed until asked
    R"sql(
ALTER TABLE warehouses ADD COLUMN catalog_public_ms INTEGER NOT NULL DEFAULT 0;
)sql",
    // 21: the body an Idempotency-Key was first used with (its reuse with another body is
    // refused)
    R"sql(
ALTER TABLE idempotency_keys ADD COLUMN request_hash TEXT NOT NULL DEFAULT '';
)sql",
    // 22: the caller's address of each audit event
    R"sql(
ALTER TABLE audit_events ADD COLUMN ip TEXT NOT NULL DEFAULT '';
)sql",
    // 23: S3 buckets and their attributes, moved here from the object store (the local
    // disk's index keeps them until the server imports them at start)
    R"sql(
CREATE TABLE s3_buckets (name TEXT PRIMARY KEY, created_ms INTEGER NOT NULL,
  acl TEXT NOT NULL, cors TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE s3_bucket_tags (bucket TEXT NOT NULL REFERENCES s3_buckets(name) ON DELETE CASCADE,
  key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (bucket, key)) WITHOUT ROWID;
)sql",
    // 24: each bucket's usage counters, kept as objects are written and deleted (metering
    // reads them instead of listing the store every hour)
    R"sql(
ALTER TABLE s3_buckets ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE s3_buckets ADD COLUMN objects INTEGER NOT NULL DEFAULT 0;
ALTER TABLE s3_buckets ADD COLUMN reconciled_ms INTEGER NOT NULL DEFAULT 0;
)sql",
    // 25: leased locks on object keys (conditional writes enforced by the server)
    R"sql(
CREATE TABLE key_locks (key TEXT PRIMARY KEY, holder TEXT NOT NULL,
  expires_ms INTEGER NOT NULL) WITHOUT ROWID;
)sql",
    // 26: values every server sharing the metastore holds alike (the sealed signing keys)
    R"sql(
CREATE TABLE shared_values (name TEXT PRIMARY KEY, value TEXT NOT NULL,
  version INTEGER NOT NULL) WITHOUT ROWID;
)sql",
    // 27: each table's pending maintenance visit, shared by every server
    R"sql(
CREATE TABLE maintenance_visits (key TEXT PRIMARY KEY, first_ms INTEGER NOT NULL,
  last_ms INTEGER NOT NULL) WITHOUT ROWID;
)sql",
    // 28: a rate event may be a hold, taken back by its id (HoldRate, ReleaseRate)
    R"sql(
ALTER TABLE rate_events ADD COLUMN hold TEXT NOT NULL DEFAULT '';
)sql",
    // 29: server-side scan plans (planTableScan), answered by any server until they expire
    R"sql(
CREATE TABLE scan_plans (id TEXT PRIMARY KEY, warehouse_id TEXT NOT NULL,
  table_uuid TEXT NOT NULL, state INTEGER NOT NULL, body TEXT NOT NULL,
  created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX scan_plans_expiry ON scan_plans (expires_ms);
)sql",
    // 30: a bucket's location constraint and PublicAccessBlock configuration
    R"sql(
ALTER TABLE s3_buckets ADD COLUMN location TEXT NOT NULL DEFAULT '';
ALTER TABLE s3_buckets ADD COLUMN public_access_block TEXT NOT NULL DEFAULT '';
)sql",
    // 31: S3 versioning: a bucket's state, and the versions of its objects that are not
    // current (the current one is the object itself) and delete markers
    R"sql(
ALTER TABLE s3_buckets ADD COLUMN versioning TEXT NOT NULL DEFAULT '';
CREATE TABLE s3_object_versions (bucket TEXT NOT NULL, key TEXT NOT NULL,
  version_id TEXT NOT NULL, seq INTEGER NOT NULL, delete_marker INTEGER NOT NULL,
  size INTEGER NOT NULL, etag TEXT NOT NULL, modified_ms INTEGER NOT NULL,
  PRIMARY KEY (bucket, key, version_id)) WITHOUT ROWID;
CREATE UNIQUE INDEX s3_object_versions_order ON s3_object_versions (bucket, key, seq);
)sql",
    // 32: a bucket's object lock configuration
    R"sql(
ALTER TABLE s3_buckets ADD COLUMN object_lock TEXT NOT NULL DEFAULT '';
)sql",
};

// Every store bound to one scope.
class ScopedStores {
 public:
  explicit ScopedStores(Scope scope)
      : principals_(sql_backend::NewPrincipalStore(scope)),
        orgs_(sql_backend::NewOrgStore(scope)),
        memberships_(sql_backend::NewMembershipStore(scope)),
        verification_(sql_backend::NewVerificationStore(scope)),
        sessions_(sql_backend::NewSessionStore(scope)),
        devices_(sql_backend::NewDeviceStore(scope)),
        usage_(sql_backend::NewUsageStore(scope)),
        warehouses_(sql_backend::NewWarehouseStore(scope)),
        idempotency_(sql_backend::NewIdempotencyStore(scope)),
        bucket_owners_(sql_backend::NewBucketOwnerStore(scope)),
        buckets_(sql_backend::NewBucketStore(scope)),
        key_locks_(sql_backend::NewKeyLockStore(scope)),
        shared_values_(sql_backend::NewSharedValueStore(scope)),
        catalog_(sql_backend::NewCatalogStore(scope)),
        tasks_(sql_backend::NewTaskStore(scope)),
        audit_(sql_backend::NewAuditStore(scope)),
        maintenance_(sql_backend::NewMaintenanceStore(scope)),
        scan_plans_(sql_backend::NewScanPlanStore(scope)) {}

  std::unique_ptr<PrincipalStore> principals_;
  std::unique_ptr<OrgStore> orgs_;
  std::unique_ptr<MembershipStore> memberships_;
  std::unique_ptr<VerificationStore> verification_;
  std::unique_ptr<SessionStore> sessions_;
  std::unique_ptr<DeviceStore> devices_;
  std::unique_ptr<UsageStore> usage_;
  std::unique_ptr<WarehouseStore> warehouses_;
  std::unique_ptr<IdempotencyStore> idempotency_;
  std::unique_ptr<BucketOwnerStore> bucket_owners_;
  std::unique_ptr<BucketStore> buckets_;
  std::unique_ptr<KeyLockStore> key_locks_;
  std::unique_ptr<SharedValueStore> shared_values_;
  std::unique_ptr<CatalogStore> catalog_;
  std::unique_ptr<TaskStore> tasks_;
  std::unique_ptr<AuditStore> audit_;
  std::unique_ptr<MaintenanceStore> maintenance_;
  std::unique_ptr<ScanPlanStore> scan_plans_;
};

#define TM_SCOPED_STORE_ACCESSORS(stores)                                       \
  PrincipalStore& principals() override { return *stores.principals_; }         \
  OrgStore& orgs() override { return *stores.orgs_; }                           \
  MembershipStore& memberships() override { return *stores.memberships_; }      \
  VerificationStore& verification() override { return *stores.verification_; }  \
  SessionStore& sessions() override { return *stores.sessions_; }               \
  DeviceStore& devices() override { return *stores.devices_; }                  \
  UsageStore& usage() override { return *stores.usage_; }                       \
  WarehouseStore& warehouses() override { return *stores.warehouses_; }         \
  IdempotencyStore& idempotency() override { return *stores.idempotency_; }     \
  BucketOwnerStore& bucket_owners() override { return *stores.bucket_owners_; } \
  BucketStore& buckets() override { return *stores.buckets_; }                  \
  KeyLockStore& key_locks() override { return *stores.key_locks_; }             \
  SharedValueStore& shared_values() override { return *stores.shared_values_; } \
  CatalogStore& catalog() override { return *stores.catalog_; }                 \
  TaskStore& tasks() override { return *stores.tasks_; }                        \
  AuditStore& audit() override { return *stores.audit_; }                       \
  MaintenanceStore& maintenance() override { return *stores.maintenance_; }     \
  ScanPlanStore& scan_plans() override { return *stores.scan_plans_; }

// A write transaction on one of the pool's connections, from BeginWrite until it is
// committed or destroyed (rolled back).
class SqlTransaction final : public WriteTransaction {
 public:
  SqlTransaction(Core& core, sql_backend::OpenTransaction open)
      : core_(core), open_(std::move(open)), stores_(Scope{core, &open_.db()}) {
    core_.txn_owner.store(std::this_thread::get_id());
  }
  ~SqlTransaction() override { core_.txn_owner.store(std::thread::id()); }

  TM_SCOPED_STORE_ACCESSORS(stores_)

  Result<void> Commit() override {
    if (committed_) return Fail(ErrorCode::kInternal, "transaction committed twice");
    committed_ = true;
    return open_.Commit(core_);
  }

 private:
  Core& core_;
  sql_backend::OpenTransaction open_;
  ScopedStores stores_;
  bool committed_ = false;
};

class SqlMetastore final : public Metastore {
 public:
  SqlMetastore(std::unique_ptr<sql_backend::Pool> pool, const Clock& clock)
      : core_(std::move(pool), clock), stores_(Scope{core_, nullptr}) {}

  TM_SCOPED_STORE_ACCESSORS(stores_)

  Result<std::unique_ptr<WriteTransaction>> BeginWrite() override {
    if (core_.txn_owner.load() == std::this_thread::get_id()) {
      return Fail(ErrorCode::kInternal, "a second write transaction on the same thread");
    }
    TM_ASSIGN(sql_backend::Lease lease, core_.pool->BeginWrite(sql_backend::WriteLock::kExclusive));
    return std::unique_ptr<WriteTransaction>(
        std::make_unique<SqlTransaction>(core_, sql_backend::OpenTransaction(std::move(lease))));
  }

  Result<void> Backup(const std::string& path,
                      const std::function<Result<void>()>& while_frozen) override {
    if (core_.txn_owner.load() == std::this_thread::get_id()) {
      return Fail(ErrorCode::kInternal, "a backup inside a write transaction");
    }
    // Holding the writer freezes the committed state; the transaction writes nothing and
    // rolls back when `frozen` goes.
    TM_ASSIGN(sql_backend::Lease lease, core_.pool->BeginWrite(sql_backend::WriteLock::kExclusive));
    sql_backend::OpenTransaction frozen(std::move(lease));
    TM_TRY(core_.pool->Snapshot(path));
    return while_frozen();
  }

  Result<void> Ping() override {
    return Scope{core_, nullptr}.Read([](sql::Connection& db) { return db.Exec("SELECT 1"); });
  }

 private:
  Core core_;
  ScopedStores stores_;
};

#undef TM_SCOPED_STORE_ACCESSORS

}  // namespace

namespace sql_backend {

Result<std::unique_ptr<Metastore>> OpenSqlMetastore(std::unique_ptr<Pool> pool,
                                                    const Clock& clock) {
  TM_TRY(pool->Migrate(kMigrations));
  return std::unique_ptr<Metastore>(std::make_unique<SqlMetastore>(std::move(pool), clock));
}

}  // namespace sql_backend

}  // namespace tablemere::metastore
