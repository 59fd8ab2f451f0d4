// A memo of point reads that stays exact while its owner is the database's only writer.
//
// Every value is stored with the write generation read *before* the database was
// queried; the owner bumps the generation after each committed write. A value is served
// only while the generation is unchanged, so a read never returns anything older than
// the last write acknowledged to any caller. Any write empties it in effect, which suits
// the catalog's read-mostly hot path (loadTable, token checks) without tracking which
// rows a write touched.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace tablemere::metastore {

class WriteGeneration {
 public:
  uint64_t Current() const { return value_.load(std::memory_order_acquire); }
  // Called after a write transaction ends (committed or not).
  void Bump() { value_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  std::atomic<uint64_t> value_{0};
};

template <typename T>
class ReadCache {
 public:
  explicit ReadCache(const WriteGeneration& generation, size_t capacity = 4096)
      : generation_(generation), capacity_(capacity) {}

  // Returns the memoised value for `key`, or reads it with `load` (a Result<T>) and
  // memoises a success. Failures (not found, database errors) are never memoised.
  template <typename Load>
  auto Get(const std::string& key, Load&& load) -> decltype(load()) {
    const uint64_t generation = generation_.Current();
    {
      std::lock_guard lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end() && it->second.generation == generation) return it->second.value;
    }
    auto loaded = load();
    if (loaded) {
      std::lock_guard lock(mu_);
      // Crude bound: the working set of a catalog's hot tables is far below it.
      if (entries_.size() >= capacity_) entries_.clear();
      entries_.insert_or_assign(key, Entry{generation, *loaded});
    }
    return loaded;
  }

 private:
  struct Entry {
    uint64_t generation;
    T value;
  };
  const WriteGeneration& generation_;
  const size_t capacity_;
  std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // protected by mu_
};

}  // namespace tablemere::metastore
