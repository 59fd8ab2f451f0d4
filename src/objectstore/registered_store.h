// The object store the server uses: a backend's bytes, with the S3 buckets (names,
// creation times, tags, canned ACL, CORS) registered in the metastore, so whichever
// backend holds the bytes, and every replica in front of it, sees the same buckets.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "metastore/metastore.h"
#include "objectstore/key_guard.h"
#include "objectstore/object_store.h"

namespace tablemere::objectstore {

// Default arguments repeat ObjectStore's, for callers holding a RegisteredStore.
// Every object call first finds its bucket in the metastore (kNoSuchBucket when it is
// not registered), then goes to the backend.
class RegisteredStore final : public ObjectStore {
 public:
  // `key_locks` (may be null: one server) hold a key across servers (HoldKey).
  RegisteredStore(std::unique_ptr<ObjectStore> backend, metastore::BucketStore& buckets,
                  const Clock& clock, SharedKeyLocks* key_locks = nullptr);
  // Writes the usage counted but not yet flushed.
  ~RegisteredStore() override;
  RegisteredStore(const RegisteredStore&) = delete;
  RegisteredStore& operator=(const RegisteredStore&) = delete;

  // ---- usage counters. Every put, copy, completed upload and delete changes its bucket's
  // bytes and objects by what it added and what it replaced or removed (the key's size,
  // read just before the write). The changes gather here and reach the metastore in one
  // transaction when FlushUsage runs (a background thread calls it every
  // `flush_every_ms`; metering calls it before reading), so counting adds no metastore
  // write to a request. A crash loses at most the unflushed changes; metering's periodic
  // listing corrects the counters (ReconcileUsage), as it does after a write whose
  // replaced size could not be read (marked uncertain).
  Result<void> FlushUsage();
  // Starts the background flush; without it only FlushUsage and destruction write.
  void FlushEvery(int64_t flush_every_ms);

  // Registers the buckets the backend kept itself before they moved to the metastore
  // (LegacyBuckets) when the registry is empty, as it is on the first start after the
  // upgrade; returns how many. Idempotent.
  Result<int> ImportLegacyBuckets();

  // ---- buckets
  // Opens the bucket's room in the backend, then registers it: kBucketExists when it is
  // registered already. A crash in between leaves an empty opened room, which the next
  // create of that name reuses. `location`: the LocationConstraint it was created with.
  Result<void> CreateBucket(const std::string& bucket, const std::string& location = "");
  // Closes the bucket's room (kBucketNotEmpty while an object remains), then unregisters
  // it; kNoSuchBucket when it is not registered. A crash in between leaves a registered
  // bucket without room, which a retried delete removes.
  Result<void> DeleteBucket(const std::string& bucket);
  Result<BucketInfo> HeadBucket(const std::string& bucket);
  Result<BucketInfo> SetBucketAttributes(const std::string& bucket, const AttributeChange& change);
  Result<std::vector<BucketInfo>> ListBuckets();

  // ---- ObjectStore: the bucket is checked, then the backend is called
  Result<void> OpenBucket(const std::string& bucket) override;
  Result<void> CloseBucket(const std::string& bucket) override;
  Result<std::unique_ptr<ObjectWriter>> BeginPut(
      const std::string& bucket, const std::string& key, PutConditions conditions = {},
      std::optional<uint64_t> size = std::nullopt,
      std::optional<std::map<std::string, std::string>> headers = std::nullopt) override;
  Result<ObjectInfo> Head(const std::string& bucket, const std::string& key) override;
  Result<std::unique_ptr<ObjectReader>> Get(const std::string& bucket, const std::string& key,
                                            uint64_t offset, std::optional<uint64_t> length,
                                            ObjectInfo* info) override;
  Result<ObjectInfo> SetObjectAttributes(const std::string& bucket, const std::string& key,
                                         const AttributeChange& change) override;
  Result<void> Delete(const std::string& bucket, const std::string& key) override;
  Result<ObjectInfo> Copy(const std::string& src_bucket, const std::string& src_key,
                          const std::string& dst_bucket, const std::string& dst_key,
                          std::optional<ObjectInfo> replace_metadata) override;
  Result<ListResult> List(const std::string& bucket, const ListOptions& options) override;
  Result<UploadInfo> CreateUpload(const std::string& bucket, const std::string& key,
                                  ObjectInfo pending) override;
  Result<UploadInfo> GetUpload(const std::string& bucket, const std::string& upload_id) override;
  Result<std::unique_ptr<ObjectWriter>> BeginPart(
      const std::string& bucket, const std::string& upload_id, int part_number,
      std::optional<uint64_t> size = std::nullopt) override;
  Result<std::vector<PartInfo>> ListParts(const std::string& bucket,
                                          const std::string& upload_id) override;
  Result<ObjectInfo> CompleteUpload(const std::string& bucket, const std::string& upload_id,
                                    const std::vector<int>& part_numbers, ObjectInfo final_info,
                                    PutConditions conditions = {}) override;
  Result<void> AbortUpload(const std::string& bucket, const std::string& upload_id) override;
  size_t MaxKeyBytes(const std::string& bucket) const override;
  Result<std::unique_ptr<ObjectBackup>> BeginBackup(const std::string& dir) override {
    return backend_->BeginBackup(dir);
  }
  bool ListsInByteOrder() const override;
  Result<std::vector<UploadInfo>> ListUploads(const std::string& bucket,
                                              const std::string& prefix) override;

  ObjectStore& backend() { return *backend_; }

  // ---- S3 versioning: the metastore's records of noncurrent versions and delete markers
  // (BucketStore's *Version calls), and a hold on a key that serialises the writers of a
  // versioned key, in this server and across servers.
  metastore::BucketStore& versions() { return buckets_; }
  const Clock& clock() const { return clock_; }
  Result<KeyGuard> HoldKey(const std::string& bucket, const std::string& key);

 private:
  Result<void> Registered(const std::string& bucket);
  // The size of `key` before a write replaces or removes it: nullopt when absent; an
  // error when it could not be read.
  Result<std::optional<uint64_t>> SizeBefore(const std::string& bucket, const std::string& key);
  // Commits a put through `base` and counts it: the replaced size read before (unless
  // the put `creates` its key or the backend reports what it replaced).
  Result<ObjectInfo> CommitCounted(ObjectWriter& base, ObjectInfo info, const std::string& bucket,
                                   const std::string& key, bool creates);
  // Counts a write that left `key` at `after` bytes (nullopt: deleted) where `before` was.
  void Count(const std::string& bucket, const Result<std::optional<uint64_t>>& before,
             std::optional<uint64_t> after);

  std::unique_ptr<ObjectStore> backend_;
  metastore::BucketStore& buckets_;
  const Clock& clock_;
  SystemRandom random_;
  KeyLocker locker_;

  std::mutex usage_mu_;
  std::map<std::string, metastore::UsageDelta> pending_;  // by bucket; guarded by usage_mu_
  std::condition_variable flush_cv_;
  bool stopping_ = false;  // guarded by usage_mu_
  std::thread flusher_;
};

// What emptying a bucket removed.
struct EmptiedBucket {
  uint64_t objects = 0;
  uint64_t bytes = 0;
};
// Deletes every object and open upload of `bucket`, then the bucket itself. A bucket
// that is already gone is success (a retried deletion). Errors: kUnavailable (I/O);
// kConflict (detail "locked_until") while object lock protects any of its versions,
// before anything is deleted.
Result<EmptiedBucket> DeleteBucketWithContents(RegisteredStore& store, const std::string& bucket);
// Refuses (kConflict, detail "locked_until": the latest time a lock holds, or "legal
// hold") when a bucket with object lock has any version that lock protects now.
Result<void> CheckNothingLocked(RegisteredStore& store, const std::string& bucket);

}  // namespace tablemere::objectstore
