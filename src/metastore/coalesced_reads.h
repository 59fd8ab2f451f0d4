// Concurrent point reads of one key that share a database round trip without being any
// less exact than a read of their own.
//
// A read only ever joins a round that has not started yet: what it returns was read after
// it arrived, so it reflects every write acknowledged before it arrived, as its own read
// would. While a round for a key is in flight, arrivals queue for the next round; the
// first of them runs the next round's query, for all of them, when the running one ends.
// Under load (many clients loading the same hot table on a replica) one query answers
// many requests; alone, a read runs its own query at the cost of a lock and a map lookup.
//
// Written here because nothing packaged does this: a cache (even one with a short expiry)
// would answer reads that arrived after a write with the state before it.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/result.h"

namespace tablemere::metastore {

template <typename T>
class CoalescedReads {
 public:
  // `load` (returning Result<T>) reads `key` from the database; it may run on any thread
  // that asked for the key, for every reader queued in its round.
  template <typename Load>
  Result<T> Get(const std::string& key, Load&& load) {
    std::unique_lock lock(mu_);
    Slot& slot = slots_[key];
    if (slot.waiting) {
      // A round that has not started: join it.
      std::shared_ptr<Round> round = slot.waiting;
      round->readers++;
      cv_.wait(lock, [&] { return round->value.has_value(); });
      return *round->value;
    }
    if (!slot.running) {
      slot.running = std::make_shared<Round>();
      return Run(lock, key, slot.running, load);
    }
    // A round is in flight (it may have started before this read arrived): open the next
    // one and run it when the running one ends.
    auto round = std::make_shared<Round>();
    round->readers = 1;
    slot.waiting = round;
    cv_.wait(lock, [&] { return slots_.at(key).running == nullptr; });
    Slot& now = slots_.at(key);
    now.running = std::move(now.waiting);
    return Run(lock, key, round, load);
  }

  // How many reads wait for `key`'s next round (not yet started).
  int Queued(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = slots_.find(key);
    return it == slots_.end() || !it->second.waiting ? 0 : it->second.waiting->readers;
  }

 private:
  struct Round {
    std::optional<Result<T>> value;  // set when the round's query returned
    int readers = 0;                 // of a waiting round
  };
  struct Slot {
    std::shared_ptr<Round> running;
    std::shared_ptr<Round> waiting;
  };

  template <typename Load>
  Result<T> Run(std::unique_lock<std::mutex>& lock, const std::string& key,
                const std::shared_ptr<Round>& round, Load& load) {
    lock.unlock();
    std::optional<Result<T>> value;
    try {
      value.emplace(load());
    } catch (...) {
      // The round's readers must not wait forever on a query that threw.
      value.emplace(Fail(ErrorCode::kInternal, "a coalesced read failed"));
    }
    lock.lock();
    round->value = *value;
    Slot& slot = slots_.at(key);
    slot.running = nullptr;
    if (!slot.waiting) slots_.erase(key);
    cv_.notify_all();
    return std::move(*value);
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, Slot> slots_;  // keys with a round running or waiting
};

}  // namespace tablemere::metastore
