// A memo of point reads that stays exact while its owner is the database's only writer.
//
// The owner's write generation works like a seqlock: it is odd while a commit is in
// flight (bumped just before COMMIT and again after it returns). A value is memoised only
// when the generation was even and unchanged from before its query to after it, so no
// commit became visible while it was read and every value stored under one generation
// reflects the same committed state. A value is served only under that same generation,
// so a read never returns anything older than a write acknowledged to any caller, nor
// anything older than a value another reader already saw. Reads during a commit go to
// the database. Any write empties the memo in effect, which suits the catalog's
// read-mostly hot path (loadTable, token checks) without tracking which rows it touched.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tablemere::metastore {

class WriteGeneration {
 public:
  uint64_t Current() const { return value_.load(std::memory_order_acquire); }
  // Around a commit that changed something (the owner serialises its writers).
  void BeginCommit() { value_.fetch_add(1, std::memory_order_acq_rel); }
  void EndCommit() { value_.fetch_add(1, std::memory_order_acq_rel); }
  static bool Stable(uint64_t generation) { return generation % 2 == 0; }

 private:
  std::atomic<uint64_t> value_{0};
};

// Joins key parts unambiguously (each part length-prefixed), so no choice of names,
// whatever bytes they hold, can make two different lookups share a key.
inline std::string MemoKey(std::initializer_list<std::string_view> parts) {
  std::string key;
  for (std::string_view part : parts) {
    key += std::to_string(part.size());
    key += ':';
    key += part;
  }
  return key;
}

template <typename T>
class ReadCache {
 public:
  // `exact` says the generation sees every write to the database (its owner is the only
  // writer); when it does not, nothing is memoised and every Get reads.
  explicit ReadCache(const WriteGeneration& generation, bool exact = true, size_t capacity = 4096)
      : generation_(generation), exact_(exact), capacity_(capacity) {}

  // Returns the memoised value for `key`, or reads it with `load` (a Result<T>) and
  // memoises a success read under a stable generation. Failures (not found, database
  // errors) are never memoised.
  template <typename Load>
  auto Get(const std::string& key, Load&& load) -> decltype(load()) {
    if (!exact_) return load();
    const uint64_t before = generation_.Current();
    if (WriteGeneration::Stable(before)) {
      std::lock_guard lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end() && it->second.generation == before) return it->second.value;
    }
    auto loaded = load();
    if (loaded && WriteGeneration::Stable(before) && generation_.Current() == before) {
      std::lock_guard lock(mu_);
      // Crude bound: the working set of a catalog's hot tables is far below it.
      if (entries_.size() >= capacity_) entries_.clear();
      entries_.insert_or_assign(key, Entry{before, *loaded});
    }
    return loaded;
  }

 private:
  struct Entry {
    uint64_t generation;
    T value;
  };
  const WriteGeneration& generation_;
  const bool exact_;
  const size_t capacity_;
  std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // protected by mu_
};

}  // namespace tablemere::metastore
