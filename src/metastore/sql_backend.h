// Internal to the SQL metastore: the stores run the same SQL on SQLite and PostgreSQL
// through the driver interface of src/sql. A backend supplies a `Pool` of connections
// (sqlite_metastore.cc, postgres_metastore.cc); `Core` holds it with what every scope
// shares (the write generation the memos check), and `Scope` is where a store's SQL runs:
// in a transaction of its own or inside an open WriteTransaction. Each store class lives
// in its own sql_*.cc file.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "metastore/coalesced_reads.h"
#include "metastore/metastore.h"
#include "metastore/read_cache.h"
#include "sql/sql.h"

namespace tablemere::metastore::sql_backend {

// A connection lent by a pool, given back when the lease ends (a pool discards one that
// is no longer healthy).
class Lease {
 public:
  Lease(sql::Connection& db, std::move_only_function<void()> give_back)
      : db_(&db), give_back_(std::move(give_back)) {}
  Lease(Lease&& other) noexcept
      : txid(other.txid), db_(other.db_), give_back_(std::move(other.give_back_)) {
    other.give_back_ = nullptr;
  }
  Lease& operator=(Lease&&) = delete;
  ~Lease() {
    if (give_back_) give_back_();
  }
  sql::Connection& db() const { return *db_; }

  // The database's id of the write transaction open on this connection (0 when unknown),
  // by which a pool tells, after a COMMIT whose answer was lost, whether it committed.
  int64_t txid = 0;

 private:
  sql::Connection* db_;
  std::move_only_function<void()> give_back_;
};

// How a write transaction keeps its reads and writes exact against the others.
enum class WriteLock {
  // Alone: no other write transaction runs beside it, so any read-then-write is exact.
  // Every write by default, and every WriteTransaction.
  kExclusive,
  // Beside other kRows writers only, never beside a kExclusive one. Fit only for writes
  // made exact by the rows they touch: a conditional UPDATE or DELETE (at READ COMMITTED
  // PostgreSQL re-checks its condition against a row changed meanwhile), an INSERT that
  // a key refuses, rows locked in one stable order, or rows claimed `SKIP LOCKED`. Table
  // commits and task claims use it, so they run in parallel across replicas.
  kRows,
};

// A backend's connections.
class Pool {
 public:
  virtual ~Pool() = default;
  // A connection with a write transaction begun on it, excluding the writers `lock` says
  // (SQLite has one writer whatever the lock; PostgreSQL takes one transaction-scoped
  // advisory lock, exclusive or shared). kUnavailable when the database cannot be reached
  // or the wait for the writer ran out.
  virtual Result<Lease> BeginWrite(WriteLock lock) = 0;
  // What ends a SELECT that locks the row it picks and skips rows other transactions
  // hold ("FOR UPDATE SKIP LOCKED"), or "" where one writer runs at a time.
  virtual const char* SkipLocked() const = 0;
  // A connection for reads outside any transaction (each statement sees committed data).
  virtual Result<Lease> Read() = 0;
  // Whether this process is the database's only writer, which makes the memos exact.
  virtual bool SoleWriter() const = 0;
  // Commits the write transaction open on `lease`. A COMMIT whose connection was lost
  // before its answer is resolved by asking the database whether the transaction
  // committed, never by guessing: kUnavailable only when it did not (or cannot be known
  // yet: detail "outcome" "unknown").
  virtual Result<void> Commit(Lease& lease) = 0;
  // Copies the database as committed into a new file at `path`; kNotImplemented where
  // the database's own tools do it.
  virtual Result<void> Snapshot(const std::string& path) = 0;
  // Runs the versioned migrations not yet applied, each in its own transaction.
  virtual Result<void> Migrate(const std::vector<const char*>& migrations) = 0;
};

// The pool and what every scope shares.
struct Core {
  Core(std::unique_ptr<Pool> p, const Clock& c)
      : pool(std::move(p)),
        warehouse_memo(write_generation, pool->SoleWriter()),
        entry_head_memo(write_generation, pool->SoleWriter()),
        bucket_memo(write_generation, pool->SoleWriter()),
        bucket_owner_memo(write_generation, pool->SoleWriter()),
        clock(c) {}

  std::unique_ptr<Pool> pool;
  // The thread holding an open WriteTransaction (a default id when none), so a write
  // that would wait for that same thread fails instead of deadlocking.
  std::atomic<std::thread::id> txn_owner{};
  WriteGeneration write_generation;
  ReadCache<Warehouse> warehouse_memo;
  ReadCache<TableEntry> entry_head_memo;
  // S3 buckets by name: every S3 request reads its bucket's record.
  ReadCache<S3Bucket> bucket_memo;
  // Operator buckets' owners by name: every S3 request to one reads it.
  ReadCache<std::string> bucket_owner_memo;
  // Where the memos are not exact (several writers): concurrent loadTable reads of one
  // table share a round trip, each as exact as its own read (coalesced_reads.h).
  CoalescedReads<CatalogStore::WarehouseAndHead> head_reads;
  const Clock& clock;

  // Commits the transaction open on `lease`, bumping the write generation around it
  // when rows changed since `changes_before` (see read_cache.h).
  Result<void> Commit(Lease& lease, int64_t changes_before) {
    if (lease.db().TotalChanges() == changes_before) return pool->Commit(lease);
    write_generation.BeginCommit();
    auto committed = pool->Commit(lease);
    write_generation.EndCommit();
    return committed;
  }
};

// Rolls back the transaction open on a lease's connection unless it was committed.
class OpenTransaction {
 public:
  explicit OpenTransaction(Lease lease)
      : lease_(std::move(lease)), changes_before_(lease_.db().TotalChanges()) {}
  OpenTransaction(OpenTransaction&& other) noexcept
      : lease_(std::move(other.lease_)),
        changes_before_(other.changes_before_),
        open_(other.open_) {
    other.open_ = false;
  }
  OpenTransaction& operator=(OpenTransaction&&) = delete;
  ~OpenTransaction() {
    if (open_) (void)lease_.db().Exec("ROLLBACK");
  }
  sql::Connection& db() const { return lease_.db(); }
  Result<void> Commit(Core& core) {
    open_ = false;
    auto committed = core.Commit(lease_, changes_before_);
    // A COMMIT that failed leaves the transaction aborted (PostgreSQL) or still open.
    if (!committed) (void)lease_.db().Exec("ROLLBACK");
    return committed;
  }

 private:
  Lease lease_;
  const int64_t changes_before_;
  bool open_ = true;
};

// Where a store's SQL runs: `txn` is the connection of an open WriteTransaction, or null
// for the metastore's own stores (each call its own transaction).
struct Scope {
  Core& core;
  sql::Connection* txn = nullptr;

  bool InTransaction() const { return txn != nullptr; }

  template <typename F>
  auto Write(F&& fn, WriteLock lock = WriteLock::kExclusive)
      -> decltype(fn(std::declval<sql::Connection&>())) {
    if (txn != nullptr) {
      // One store call is atomic inside the transaction too: a call that fails leaves
      // nothing behind, so the caller may go on (or roll everything back).
      TM_TRY(txn->Exec("SAVEPOINT store_call"));
      auto result = fn(*txn);
      if (!result) TM_TRY(txn->Exec("ROLLBACK TO store_call"));
      TM_TRY(txn->Exec("RELEASE store_call"));
      return result;
    }
    if (core.txn_owner.load() == std::this_thread::get_id()) {
      return Fail(ErrorCode::kInternal,
                  "a metastore write outside the transaction this thread holds");
    }
    TM_ASSIGN(Lease lease, core.pool->BeginWrite(lock));
    OpenTransaction open(std::move(lease));
    auto result = fn(open.db());
    if (!result) return result;  // rolled back: nothing changed
    TM_TRY(open.Commit(core));
    return result;
  }

  // Reads borrow one of a few connections, so concurrent readers (loadTable under load)
  // do not queue behind each other or behind a writer. Inside a transaction they read its
  // connection, which sees its own writes.
  template <typename F>
  auto Read(F&& fn) -> decltype(fn(std::declval<sql::Connection&>())) {
    if (txn != nullptr) return fn(*txn);
    TM_ASSIGN(Lease lease, core.pool->Read());
    return fn(lease.db());
  }
};

// ---- shared SQL helpers
// A warehouse row's columns, each prefixed by `alias` + "." when given, and the
// warehouse read from them starting at column `first` (sql_accounts.cc).
std::string WarehouseColumns(const std::string& alias = "");
Warehouse WarehouseRow(sql::Statement& st, int first = 0);
// The warehouse by id, from the memo when it is exact (sql_accounts.cc).
Result<Warehouse> FindWarehouseIn(Scope& scope, const WarehouseId& id);
Result<void> Run(sql::Connection& db, const std::string& sql,
                 const std::vector<sql::Value>& params);
// Runs `sql`; a constraint violation becomes `on_conflict` (other failures pass through).
Result<void> RunUnique(sql::Connection& db, const std::string& sql,
                       const std::vector<sql::Value>& params, Error on_conflict);
// Whether `sql` returns a row.
Result<bool> Exists(sql::Connection& db, const std::string& sql,
                    const std::vector<sql::Value>& params);
Error NotFound(const std::string& what);
std::string JoinNs(const std::vector<std::string>& levels);
std::vector<std::string> SplitNs(const std::string& joined);
std::string JoinDots(const std::vector<std::string>& levels);
// A task due after its delay, written inside the caller's transaction.
Result<void> InsertTask(sql::Connection& db, const Clock& clock, const NewTask& task);
// The one row `sql` selects through `map`; kNotFound (`what`) when none does.
template <typename F>
auto One(sql::Connection& db, const std::string& sql, const std::vector<sql::Value>& params,
         const std::string& what, F&& map)
    -> Result<decltype(map(std::declval<sql::Statement&>()))> {
  TM_ASSIGN(auto* st, db.Prepare(sql));
  TM_ASSIGN(bool row, st->Bind(params).Step());
  if (!row) return Fail(NotFound(what));
  auto value = map(*st);
  st->Bind({});
  return value;
}

// ---- the stores, one file each
std::unique_ptr<PrincipalStore> NewPrincipalStore(Scope scope);
std::unique_ptr<OrgStore> NewOrgStore(Scope scope);
std::unique_ptr<MembershipStore> NewMembershipStore(Scope scope);
std::unique_ptr<VerificationStore> NewVerificationStore(Scope scope);
std::unique_ptr<SessionStore> NewSessionStore(Scope scope);
std::unique_ptr<DeviceStore> NewDeviceStore(Scope scope);
std::unique_ptr<UsageStore> NewUsageStore(Scope scope);
std::unique_ptr<WarehouseStore> NewWarehouseStore(Scope scope);
std::unique_ptr<IdempotencyStore> NewIdempotencyStore(Scope scope);
std::unique_ptr<BucketOwnerStore> NewBucketOwnerStore(Scope scope);
std::unique_ptr<BucketStore> NewBucketStore(Scope scope);
std::unique_ptr<KeyLockStore> NewKeyLockStore(Scope scope);
std::unique_ptr<SharedValueStore> NewSharedValueStore(Scope scope);
std::unique_ptr<CatalogStore> NewCatalogStore(Scope scope);
std::unique_ptr<TaskStore> NewTaskStore(Scope scope);
std::unique_ptr<AuditStore> NewAuditStore(Scope scope);
std::unique_ptr<MaintenanceStore> NewMaintenanceStore(Scope scope);
std::unique_ptr<ScanPlanStore> NewScanPlanStore(Scope scope);

// The metastore over `pool`, its migrations applied.
Result<std::unique_ptr<Metastore>> OpenSqlMetastore(std::unique_ptr<Pool> pool, const Clock& clock);

}  // namespace tablemere::metastore::sql_backend
