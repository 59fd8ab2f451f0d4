#include "maintenance/task_runner.h"

#include <nlohmann/json.hpp>

#include "common/crash_point.h"

namespace tablemere::maintenance {

TaskRunner::TaskRunner(metastore::Metastore& meta, objectstore::RegisteredStore& objects)
    : meta_(meta), objects_(objects) {}

TaskRunner::~TaskRunner() { Stop(); }

void TaskRunner::Register(std::string kind, Handler handler) {
  handlers_[std::move(kind)] = std::move(handler);
}

void TaskRunner::RegisterRecurring(std::string kind, int64_t every_ms, Handler handler) {
  every_ms_[kind] = every_ms;
  Register(std::move(kind), std::move(handler));
}

void TaskRunner::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stop_) {
      lock.unlock();
      RunDue();
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(kPollMs), [&] { return stop_; });
    }
  });
}

void TaskRunner::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int TaskRunner::RunDue() {
  int ran = 0;
  while (true) {
    auto task = meta_.tasks().Claim(kLeaseMs);
    if (!task || !*task) break;
    CrashPoint("task.claimed." + (*task)->kind);  // tests: a runner dead holding its lease
    auto result = Run(**task);
    if (result) {
      // A lease taken over (this run outlived it) leaves the task to its new claim.
      if (auto every = every_ms_.find((*task)->kind); every != every_ms_.end()) {
        (void)meta_.tasks().CompleteAndEnqueue(**task, {(*task)->kind, "{}", every->second});
      } else {
        (void)meta_.tasks().Complete(**task);
      }
    } else {
      // Back off exponentially (1 s, 2 s, … capped at 10 min).
      int64_t delay = std::min<int64_t>(1000LL << std::min((*task)->attempts, 20), kLeaseMs);
      (void)meta_.tasks().Retry(**task, delay);
    }
    ran++;
  }
  return ran;
}

Result<void> TaskRunner::Run(const metastore::Task& task) {
  if (auto h = handlers_.find(task.kind); h != handlers_.end()) return h->second(task);
  auto payload = nlohmann::json::parse(task.payload_json, nullptr, false);
  if (!payload.is_object()) return {};  // malformed: drop it rather than retry forever
  if (task.kind == "purge_prefix") {
    auto text = [&](const char* key) {
      auto it = payload.find(key);
      return it != payload.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string bucket = text("bucket");
    const std::string prefix = text("prefix");
    // A drop's purge may be delayed by a session lifetime; a table created at the
    // emptied location meanwhile (an engine purged it first) now owns what is there.
    TM_ASSIGN(bool claimed, Reoccupied(text("warehouse"), bucket, prefix));
    if (claimed) return {};
    return PurgePrefix(bucket, prefix);
  }
  if (task.kind == kDeleteBucketTask) {
    auto it = payload.find("bucket");
    if (it == payload.end() || !it->is_string()) return {};
    TM_TRY(objectstore::DeleteBucketWithContents(objects_, it->get<std::string>()));
    return {};
  }
  // "drop_record" rows only keep a drop's record until they are due (drop_record.h).
  return {};
}

Result<bool> TaskRunner::Reoccupied(const std::string& warehouse_id, const std::string& bucket,
                                    const std::string& prefix) {
  if (warehouse_id.empty()) return false;  // a task from before drops carried a record
  const std::string root = "s3://" + bucket + "/";
  for (const char* kind : {"table", "view", "generic"}) {
    TM_ASSIGN(auto entries, meta_.catalog().ListEntriesOfKind(warehouse_id, kind));
    for (const auto& e : entries) {
      if (!e.location.starts_with(root)) continue;
      std::string key = e.location.substr(root.size());
      while (key.ends_with("/")) key.pop_back();
      key += "/";
      if (key.starts_with(prefix) || prefix.starts_with(key)) return true;
    }
  }
  return false;
}

Result<void> TaskRunner::PurgePrefix(const std::string& bucket, const std::string& prefix) {
  // Never purge a whole bucket: a table prefix always has at least "<ns>/<table>/".
  if (bucket.empty() || prefix.size() < 3 || !prefix.ends_with("/")) return {};
  while (true) {
    objectstore::ListOptions opts;
    opts.prefix = prefix;
    opts.max_keys = 1000;
    auto page = objects_.List(bucket, opts);
    if (!page) {
      if (page.error().code == ErrorCode::kNotFound) return {};
      return Fail(page.error());
    }
    for (const auto& o : page->objects) TM_TRY(objects_.Delete(bucket, o.key));
    if (!page->truncated) return {};
  }
}

}  // namespace tablemere::maintenance
