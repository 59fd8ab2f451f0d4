// The embedded metastore on SQLite (WAL): the pool behind the SQL metastore. Writes go
// through one connection behind a mutex (SQLite has one writer anyway); reads use separate
// connections so they never wait behind a write transaction's fsync. The database belongs
// to one process (an exclusive lock on a file beside it), so the hot point reads can be
// memoised exactly (SoleWriter).
#include <mutex>

#include "common/files.h"
#include "metastore/sql_backend.h"
#include "sqlite/reader_pool.h"
#include "sqlite/sqlite.h"

namespace tablemere::metastore {
namespace {

// Read connections kept open: enough for the cores this runs on to read concurrently.
constexpr int kReaders = 4;

class SqlitePool final : public sql_backend::Pool {
 public:
  SqlitePool(FileLock lock, std::unique_ptr<sqlite::Db> writer,
             std::unique_ptr<sqlite::ReaderPool> readers)
      : lock_(std::move(lock)), writer_(std::move(writer)), readers_(std::move(readers)) {}

  // One writer at a time, whatever the lock asked for.
  Result<sql_backend::Lease> BeginWrite(sql_backend::WriteLock) override {
    std::unique_lock lock(write_mu_);
    TM_TRY(writer_->Exec("BEGIN IMMEDIATE"));
    return sql_backend::Lease(*writer_, [lock = std::move(lock)]() mutable { lock.unlock(); });
  }

  const char* SkipLocked() const override { return ""; }

  Result<sql_backend::Lease> Read() override {
    sqlite::ReaderPool::Lease borrowed = readers_->Borrow();
    sqlite::Db& db = borrowed.db();
    return sql_backend::Lease(db,
                              [borrowed = std::move(borrowed)]() mutable { borrowed.GiveBack(); });
  }

  bool SoleWriter() const override { return true; }

  Result<void> Snapshot(const std::string& path) override {
    TM_ASSIGN(sql_backend::Lease lease, Read());
    return static_cast<sqlite::Db&>(lease.db()).BackupTo(path);
  }

  // A file's COMMIT has no lost answer: it returns, or the process is gone.
  Result<void> Commit(sql_backend::Lease& lease) override { return lease.db().Exec("COMMIT"); }

  Result<void> Migrate(const std::vector<const char*>& migrations) override {
    std::lock_guard lock(write_mu_);
    sqlite::Db& writer = *writer_;
    TM_TRY(
        writer.Exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)"));
    TM_ASSIGN(auto* st, writer.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
    TM_ASSIGN(bool row, st->Bind({}).Step());
    int64_t current = row ? st->Int(0) : 0;
    st->Bind({});
    int64_t version = 0;
    for (const char* sql : migrations) {
      version++;
      if (version <= current) continue;
      TM_ASSIGN(auto txn, sqlite::Transaction::Begin(writer));
      TM_TRY(writer.Exec(sql));
      TM_ASSIGN(auto* ins, writer.Prepare("INSERT INTO schema_migrations(version) VALUES(?)"));
      TM_TRY(ins->Bind({version}).Run());
      TM_TRY(txn.Commit());
    }
    return {};
  }

 private:
  // The exclusive lock on "<db>.lock": declared first, so released after every
  // connection has closed.
  FileLock lock_;
  std::mutex write_mu_;
  std::unique_ptr<sqlite::Db> writer_;  // leased under write_mu_
  std::unique_ptr<sqlite::ReaderPool> readers_;
};

}  // namespace

Result<std::unique_ptr<Metastore>> OpenSqliteMetastore(const std::string& path,
                                                       const Clock& clock) {
  // One process per database: a second server on the same data directory would
  // invalidate the memos (and race the object store's index). The lock goes with the
  // process, however it ends.
  TM_ASSIGN(FileLock lock, FileLock::Take(path + ".lock"));
  TM_ASSIGN(auto writer, sqlite::Db::Open(path, true));
  TM_ASSIGN(auto readers, sqlite::ReaderPool::Open(path, kReaders));
  return sql_backend::OpenSqlMetastore(
      std::make_unique<SqlitePool>(std::move(lock), std::move(writer), std::move(readers)), clock);
}

}  // namespace tablemere::metastore
