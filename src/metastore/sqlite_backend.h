// Internal to the SQLite metastore: the shared connections (one writer behind a mutex,
// a pool of readers), the write generation the memos check, and `Scope`, through which
// every store runs its SQL either in a transaction of its own or inside an open
// WriteTransaction. Each store class lives in its own sqlite_*.cc file.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "metastore/metastore.h"
#include "metastore/read_cache.h"
#include "sqlite/sqlite.h"

namespace tablemere::metastore::sqlite_backend {

// The connections and what every scope shares.
struct Core {
  Core(std::unique_ptr<sqlite::Db> w, std::vector<std::unique_ptr<sqlite::Db>> readers,
       const Clock& c)
      : writer(std::move(w)), clock(c) {
    for (auto& r : readers) idle_readers.push_back(std::move(r));
  }

  std::mutex write_mu;
  std::unique_ptr<sqlite::Db> writer;  // protected by write_mu
  // The thread holding an open WriteTransaction (a default id when none), so a write
  // that would wait for that same thread fails instead of deadlocking.
  std::atomic<std::thread::id> txn_owner{};
  WriteGeneration write_generation;
  ReadCache<Warehouse> warehouse_memo{write_generation};
  ReadCache<TableEntry> entry_head_memo{write_generation};
  std::mutex read_mu;
  std::condition_variable read_cv;
  std::vector<std::unique_ptr<sqlite::Db>> idle_readers;  // protected by read_mu
  const Clock& clock;

  // Commits `txn` on the writer, bumping the write generation around it when rows
  // changed since `changes_before` (see read_cache.h). Requires write_mu.
  Result<void> CommitWriter(sqlite::Transaction& txn, int64_t changes_before) {
    if (writer->TotalChanges() == changes_before) return txn.Commit();
    write_generation.BeginCommit();
    auto committed = txn.Commit();
    write_generation.EndCommit();
    return committed;
  }
};

// Where a store's SQL runs: `txn` is the writer of an open WriteTransaction, or null
// for the metastore's own stores (each call its own transaction).
struct Scope {
  Core& core;
  sqlite::Db* txn = nullptr;

  bool InTransaction() const { return txn != nullptr; }

  template <typename F>
  auto Write(F&& fn) -> decltype(fn(std::declval<sqlite::Db&>())) {
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
    std::lock_guard lock(core.write_mu);
    const int64_t changes_before = core.writer->TotalChanges();
    TM_ASSIGN(auto sql_txn, sqlite::Transaction::Begin(*core.writer));
    auto result = fn(*core.writer);
    if (!result) return result;  // rolled back: nothing changed
    TM_TRY(core.CommitWriter(sql_txn, changes_before));
    return result;
  }

  // Reads borrow one of a few connections, so concurrent readers (loadTable under load)
  // do not queue behind each other; WAL lets them run beside the writer. Inside a
  // transaction they read its connection, which sees its own writes.
  template <typename F>
  auto Read(F&& fn) -> decltype(fn(std::declval<sqlite::Db&>())) {
    if (txn != nullptr) return fn(*txn);
    std::unique_ptr<sqlite::Db> db;
    {
      std::unique_lock lock(core.read_mu);
      core.read_cv.wait(lock, [&] { return !core.idle_readers.empty(); });
      db = std::move(core.idle_readers.back());
      core.idle_readers.pop_back();
    }
    auto result = fn(*db);
    {
      std::lock_guard lock(core.read_mu);
      core.idle_readers.push_back(std::move(db));
    }
    core.read_cv.notify_one();
    return result;
  }
};

// ---- shared SQL helpers
Result<void> Run(sqlite::Db& db, const std::string& sql, const std::vector<sqlite::Value>& params);
// Runs `sql`; a constraint violation becomes `on_conflict` (other failures pass through).
Result<void> RunUnique(sqlite::Db& db, const std::string& sql,
                       const std::vector<sqlite::Value>& params, Error on_conflict);
// Whether `sql` returns a row.
Result<bool> Exists(sqlite::Db& db, const std::string& sql,
                    const std::vector<sqlite::Value>& params);
Error NotFound(const std::string& what);
std::string JoinNs(const std::vector<std::string>& levels);
std::vector<std::string> SplitNs(const std::string& joined);
std::string JoinDots(const std::vector<std::string>& levels);
// A task due after its delay, written inside the caller's transaction.
Result<void> InsertTask(sqlite::Db& db, const Clock& clock, const NewTask& task);
// The one row `sql` selects through `map`; kNotFound (`what`) when none does.
template <typename F>
auto One(sqlite::Db& db, const std::string& sql, const std::vector<sqlite::Value>& params,
         const std::string& what, F&& map)
    -> Result<decltype(map(std::declval<sqlite::Statement&>()))> {
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
std::unique_ptr<CatalogStore> NewCatalogStore(Scope scope);
std::unique_ptr<TaskStore> NewTaskStore(Scope scope);
std::unique_ptr<AuditStore> NewAuditStore(Scope scope);
std::unique_ptr<MaintenanceStore> NewMaintenanceStore(Scope scope);

}  // namespace tablemere::metastore::sqlite_backend
