#include "sqlite/reader_pool.h"

#include <algorithm>

namespace tablemere::sqlite {

Result<std::unique_ptr<ReaderPool>> ReaderPool::Open(const std::string& path, int size) {
  std::vector<std::unique_ptr<Db>> all;
  for (int i = 0; i < std::max(size, 1); i++) {
    TM_ASSIGN(auto db, Db::Open(path, true));
    all.push_back(std::move(db));
  }
  return std::unique_ptr<ReaderPool>(new ReaderPool(std::move(all)));
}

ReaderPool::ReaderPool(std::vector<std::unique_ptr<Db>> all) : all_(std::move(all)) {
  for (auto& db : all_) idle_.push_back(db.get());
}

ReaderPool::~ReaderPool() = default;

ReaderPool::Lease ReaderPool::Borrow() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return !idle_.empty(); });
  Db* db = idle_.back();
  idle_.pop_back();
  return Lease(*this, db);
}

void ReaderPool::GiveBack(Db* db) {
  {
    std::lock_guard lock(mu_);
    idle_.push_back(db);
  }
  idle_cv_.notify_one();
}

}  // namespace tablemere::sqlite
