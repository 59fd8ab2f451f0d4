// A fixed set of read connections to one SQLite database, lent one at a time: readers
// in WAL mode never block each other or the writer, but one connection serves one
// thread at a time, so a single shared reader made every read wait for the one before.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "sqlite/sqlite.h"

namespace tablemere::sqlite {

class ReaderPool {
 public:
  // Opens `size` (at least 1) connections to `path`.
  static Result<std::unique_ptr<ReaderPool>> Open(const std::string& path, int size);

  // One borrowed connection, given back when the lease ends. Statements stepped through
  // it must be reset (Bind({}) or done) before then: an active statement pins its read
  // snapshot for whoever borrows the connection next.
  class Lease {
   public:
    Lease(ReaderPool& pool, Db* db) : pool_(&pool), db_(db) {}
    Lease(Lease&& other) noexcept : pool_(other.pool_), db_(other.db_) { other.db_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease() { GiveBack(); }
    // Ends the lease early.
    void GiveBack() {
      if (db_) pool_->GiveBack(std::exchange(db_, nullptr));
    }
    Db& db() const { return *db_; }

   private:
    ReaderPool* pool_;
    Db* db_;
  };

  // Waits for an idle connection.
  Lease Borrow();

  ~ReaderPool();

 private:
  explicit ReaderPool(std::vector<std::unique_ptr<Db>> all);
  void GiveBack(Db* db);

  std::vector<std::unique_ptr<Db>> all_;
  std::mutex mu_;
  std::condition_variable idle_cv_;
  std::vector<Db*> idle_;  // under mu_
};

}  // namespace tablemere::sqlite
