// Background work from the metastore's task queue (purge after drop, later expiry,
// orphan cleanup and compaction). Any replica may run it; a crash leaves the task
// leased until the lease runs out, then another run resumes it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "metastore/metastore.h"
#include "objectstore/registered_store.h"

namespace tablemere::maintenance {

// A deleted warehouse's bucket, emptied and removed ({"bucket": "w-…"}); enqueued in the
// deletion's transaction, so a crash midway is finished by the runner.
inline constexpr char kDeleteBucketTask[] = "delete_bucket";

class TaskRunner {
 public:
  TaskRunner(metastore::Metastore& meta, objectstore::RegisteredStore& objects);
  ~TaskRunner();
  // A handler for tasks of `kind` that live above this layer (metering needs accounts).
  // Register before Start(). A failed run is retried with back-off.
  using Handler = std::function<Result<void>(const metastore::Task&)>;
  void Register(std::string kind, Handler handler);
  // A recurring task: after each successful run the next is queued `every_ms` later in
  // the transaction that completes this one, fenced by its claim, so a run that outlived
  // its lease (and was taken over) cannot start a second chain.
  void RegisterRecurring(std::string kind, int64_t every_ms, Handler handler);
  void Start();
  void Stop();
  // Runs every task that is due now; returns how many ran. For tests and shutdown.
  int RunDue();

 private:
  Result<void> Run(const metastore::Task& task);
  Result<void> PurgePrefix(const std::string& bucket, const std::string& prefix);
  // Whether a live entry of the warehouse has its location overlapping `prefix`.
  Result<bool> Reoccupied(const std::string& warehouse_id, const std::string& bucket,
                          const std::string& prefix);

  // How long a claimed task is reserved for this runner before others may take it.
  static constexpr int64_t kLeaseMs = 10 * 60 * 1000;
  // How often the queue is polled when idle.
  static constexpr int kPollMs = 500;

  metastore::Metastore& meta_;
  objectstore::RegisteredStore& objects_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // protected by mu_
  // Fixed once started.
  std::map<std::string, Handler> handlers_;
  std::map<std::string, int64_t> every_ms_;  // of the recurring kinds
};

}  // namespace tablemere::maintenance
