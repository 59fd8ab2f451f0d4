#include "objectstore/registered_store.h"

#include <algorithm>
#include <chrono>
#include <functional>

namespace tablemere::objectstore {
namespace {

Error NoSuchBucket() {
  return StoreError(StoreFailure::kNoSuchBucket, ErrorCode::kNotFound,
                    "The specified bucket does not exist");
}

// A put's writer whose Commit also counts the write (see RegisteredStore::FlushUsage).
class CountingWriter final : public ObjectWriter {
 public:
  using CommitFn = std::function<Result<ObjectInfo>(ObjectWriter& base, ObjectInfo info)>;
  CountingWriter(std::unique_ptr<ObjectWriter> base, CommitFn commit)
      : base_(std::move(base)), commit_(std::move(commit)) {}
  Result<void> Write(const char* data, size_t size) override { return base_->Write(data, size); }
  Result<ObjectInfo> Commit(ObjectInfo info) override { return commit_(*base_, std::move(info)); }
  void Abort() override { base_->Abort(); }
  uint64_t bytes_written() const override { return base_->bytes_written(); }
  bool ReportsReplaced() const override { return base_->ReportsReplaced(); }

 private:
  std::unique_ptr<ObjectWriter> base_;
  CommitFn commit_;
};

BucketInfo InfoOf(const metastore::S3Bucket& b) {
  BucketInfo info{b.name,
                  b.created_ms,
                  b.tags,
                  b.acl,
                  b.cors,
                  b.location,
                  DecodePublicAccessBlock(b.public_access_block)};
  info.versioning = b.versioning;
  info.object_lock = DecodeObjectLock(b.object_lock);
  return info;
}

// The metastore's kNotFound for a bucket is the store's kNoSuchBucket; other failures
// (the database unavailable) pass through.
Error BucketError(const Error& e) { return e.code == ErrorCode::kNotFound ? NoSuchBucket() : e; }

}  // namespace

RegisteredStore::RegisteredStore(std::unique_ptr<ObjectStore> backend,
                                 metastore::BucketStore& buckets, const Clock& clock,
                                 SharedKeyLocks* key_locks)
    : backend_(std::move(backend)), buckets_(buckets), clock_(clock), locker_(key_locks, random_) {}

Result<KeyGuard> RegisteredStore::HoldKey(const std::string& bucket, const std::string& key) {
  // Named apart from the S3 backend's own key locks, which a write under this hold takes.
  return locker_.Lock("version:" + bucket + "/" + key);
}

RegisteredStore::~RegisteredStore() {
  {
    std::lock_guard lock(usage_mu_);
    stopping_ = true;
  }
  flush_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  (void)FlushUsage();  // best effort: what it cannot write, the next listing corrects
}

void RegisteredStore::FlushEvery(int64_t flush_every_ms) {
  if (flusher_.joinable()) return;
  flusher_ = std::thread([this, flush_every_ms] {
    std::unique_lock lock(usage_mu_);
    while (!stopping_) {
      flush_cv_.wait_for(lock, std::chrono::milliseconds(flush_every_ms));
      if (stopping_) break;
      lock.unlock();
      (void)FlushUsage();  // kept for the next round when the metastore refused it
      lock.lock();
    }
  });
}

Result<void> RegisteredStore::FlushUsage() {
  std::map<std::string, metastore::UsageDelta> taken;
  {
    std::lock_guard lock(usage_mu_);
    taken.swap(pending_);
  }
  if (taken.empty()) return {};
  std::vector<metastore::UsageDelta> deltas;
  deltas.reserve(taken.size());
  for (auto& [bucket, d] : taken) deltas.push_back(d);
  auto added = buckets_.AddUsage(deltas);
  if (!added) {
    // Put back for the next flush, merged with what was counted meanwhile.
    std::lock_guard lock(usage_mu_);
    for (const auto& d : deltas) {
      auto& into = pending_[d.bucket];
      into.bucket = d.bucket;
      into.bytes += d.bytes;
      into.objects += d.objects;
      into.uncertain = into.uncertain || d.uncertain;
    }
    return Fail(added.error());
  }
  return {};
}

Result<std::optional<uint64_t>> RegisteredStore::SizeBefore(const std::string& bucket,
                                                            const std::string& key) {
  auto head = backend_->Head(bucket, key);
  if (head) return std::optional<uint64_t>(head->size);
  if (FailureOf(head.error()) == StoreFailure::kNoSuchKey) return std::optional<uint64_t>();
  return Fail(head.error());
}

void RegisteredStore::Count(const std::string& bucket,
                            const Result<std::optional<uint64_t>>& before,
                            std::optional<uint64_t> after) {
  std::lock_guard lock(usage_mu_);
  auto& d = pending_[bucket];
  d.bucket = bucket;
  if (!before) d.uncertain = true;
  const std::optional<uint64_t> was = before ? *before : std::nullopt;
  if (was) {
    d.bytes -= static_cast<int64_t>(*was);
    d.objects -= 1;
  }
  if (after) {
    d.bytes += static_cast<int64_t>(*after);
    d.objects += 1;
  }
}

Result<int> RegisteredStore::ImportLegacyBuckets() {
  // Only into an empty registry: the first start after the upgrade. Later, a bucket the
  // backend has room for but the registry lacks is one whose creation never finished.
  TM_ASSIGN(auto registered, buckets_.AllBuckets());
  if (!registered.empty()) return 0;
  TM_ASSIGN(auto legacy, backend_->LegacyBuckets());
  int imported = 0;
  for (const auto& b : legacy) {
    auto added =
        buckets_.AddBucket(metastore::S3Bucket{b.name, b.created_ms, b.acl, b.cors, b.tags});
    if (added) {
      imported++;
    } else if (added.error().code != ErrorCode::kAlreadyExists) {
      return Fail(added.error());
    }
  }
  return imported;
}

Result<void> RegisteredStore::Registered(const std::string& bucket) {
  auto found = buckets_.FindBucket(bucket);
  if (!found) return Fail(BucketError(found.error()));
  return {};
}

// ---- buckets

Result<void> RegisteredStore::CreateBucket(const std::string& bucket, const std::string& location) {
  TM_TRY(backend_->OpenBucket(bucket));
  metastore::S3Bucket registered{bucket, clock_.NowMillis(), "", "", {}};
  registered.location = location;
  auto added = buckets_.AddBucket(registered);
  if (!added && added.error().code == ErrorCode::kAlreadyExists) {
    return Fail(StoreError(StoreFailure::kBucketExists, ErrorCode::kAlreadyExists,
                           "Your previous request to create the named bucket succeeded and you "
                           "already own it."));
  }
  return added;
}

Result<void> RegisteredStore::DeleteBucket(const std::string& bucket) {
  TM_TRY(Registered(bucket));
  TM_TRY(backend_->CloseBucket(bucket));
  TM_ASSIGN(bool removed, buckets_.RemoveBucket(bucket));
  if (!removed) return Fail(NoSuchBucket());  // a concurrent delete got there first
  return {};
}

Result<BucketInfo> RegisteredStore::HeadBucket(const std::string& bucket) {
  auto found = buckets_.FindBucket(bucket);
  if (!found) return Fail(BucketError(found.error()));
  return InfoOf(*found);
}

Result<BucketInfo> RegisteredStore::SetBucketAttributes(const std::string& bucket,
                                                        const AttributeChange& change) {
  metastore::S3BucketChange registered{change.acl, change.cors, change.tags};
  registered.versioning = change.versioning;
  if (change.object_lock) registered.object_lock = EncodeObjectLock(*change.object_lock);
  if (change.public_access_block) {
    registered.public_access_block = EncodePublicAccessBlock(*change.public_access_block);
  }
  auto updated = buckets_.UpdateBucket(bucket, registered);
  if (!updated) return Fail(BucketError(updated.error()));
  return InfoOf(*updated);
}

Result<std::vector<BucketInfo>> RegisteredStore::ListBuckets() {
  TM_ASSIGN(auto all, buckets_.AllBuckets());
  std::vector<BucketInfo> out;
  out.reserve(all.size());
  for (const auto& b : all) out.push_back(InfoOf(b));
  return out;
}

// ---- objects

Result<void> RegisteredStore::OpenBucket(const std::string& bucket) {
  return backend_->OpenBucket(bucket);
}
Result<void> RegisteredStore::CloseBucket(const std::string& bucket) {
  return backend_->CloseBucket(bucket);
}

Result<std::unique_ptr<ObjectWriter>> RegisteredStore::BeginPut(
    const std::string& bucket, const std::string& key, PutConditions conditions,
    std::optional<uint64_t> size, std::optional<std::map<std::string, std::string>> headers) {
  TM_TRY(Registered(bucket));
  // A put that must create its key replaced nothing when it succeeds: no HEAD needed.
  const bool creates = conditions.if_none_match;
  TM_ASSIGN(auto writer,
            backend_->BeginPut(bucket, key, std::move(conditions), size, std::move(headers)));
  return std::unique_ptr<ObjectWriter>(std::make_unique<CountingWriter>(
      std::move(writer), [this, bucket, key, creates](ObjectWriter& base, ObjectInfo info) {
        return CommitCounted(base, std::move(info), bucket, key, creates);
      }));
}

Result<ObjectInfo> RegisteredStore::CommitCounted(ObjectWriter& base, ObjectInfo info,
                                                  const std::string& bucket, const std::string& key,
                                                  bool creates) {
  using Before = Result<std::optional<uint64_t>>;
  if (!creates && !base.ReportsReplaced()) {
    Before before = SizeBefore(bucket, key);
    TM_ASSIGN(ObjectInfo stored, base.Commit(std::move(info)));
    Count(bucket, before, stored.size);
    return stored;
  }
  // The put created its key, or the backend says what it replaced.
  TM_ASSIGN(ObjectInfo stored, base.Commit(std::move(info)));
  Before before = std::nullopt;
  if (!creates && !stored.replaced) {
    before = Fail(ErrorCode::kUnavailable, "the store could not tell what the put replaced");
  } else if (!creates && stored.replaced->existed) {
    before = std::optional<uint64_t>(stored.replaced->size);
  }
  Count(bucket, before, stored.size);
  return stored;
}

Result<ObjectInfo> RegisteredStore::Head(const std::string& bucket, const std::string& key) {
  TM_TRY(Registered(bucket));
  return backend_->Head(bucket, key);
}

Result<std::unique_ptr<ObjectReader>> RegisteredStore::Get(const std::string& bucket,
                                                           const std::string& key, uint64_t offset,
                                                           std::optional<uint64_t> length,
                                                           ObjectInfo* info) {
  TM_TRY(Registered(bucket));
  return backend_->Get(bucket, key, offset, length, info);
}

Result<ObjectInfo> RegisteredStore::SetObjectAttributes(const std::string& bucket,
                                                        const std::string& key,
                                                        const AttributeChange& change) {
  TM_TRY(Registered(bucket));
  return backend_->SetObjectAttributes(bucket, key, change);
}

Result<void> RegisteredStore::Delete(const std::string& bucket, const std::string& key) {
  TM_TRY(Registered(bucket));
  auto before = SizeBefore(bucket, key);
  TM_TRY(backend_->Delete(bucket, key));
  Count(bucket, before, std::nullopt);
  return {};
}

Result<ObjectInfo> RegisteredStore::Copy(const std::string& src_bucket, const std::string& src_key,
                                         const std::string& dst_bucket, const std::string& dst_key,
                                         std::optional<ObjectInfo> replace_metadata) {
  TM_TRY(Registered(src_bucket));
  if (dst_bucket != src_bucket) TM_TRY(Registered(dst_bucket));
  auto before = SizeBefore(dst_bucket, dst_key);
  TM_ASSIGN(ObjectInfo copied,
            backend_->Copy(src_bucket, src_key, dst_bucket, dst_key, std::move(replace_metadata)));
  Count(dst_bucket, before, copied.size);
  return copied;
}

Result<ListResult> RegisteredStore::List(const std::string& bucket, const ListOptions& options) {
  TM_TRY(Registered(bucket));
  return backend_->List(bucket, options);
}

Result<UploadInfo> RegisteredStore::CreateUpload(const std::string& bucket, const std::string& key,
                                                 ObjectInfo pending) {
  TM_TRY(Registered(bucket));
  return backend_->CreateUpload(bucket, key, std::move(pending));
}

Result<UploadInfo> RegisteredStore::GetUpload(const std::string& bucket,
                                              const std::string& upload_id) {
  TM_TRY(Registered(bucket));
  return backend_->GetUpload(bucket, upload_id);
}

Result<std::unique_ptr<ObjectWriter>> RegisteredStore::BeginPart(const std::string& bucket,
                                                                 const std::string& upload_id,
                                                                 int part_number,
                                                                 std::optional<uint64_t> size) {
  TM_TRY(Registered(bucket));
  return backend_->BeginPart(bucket, upload_id, part_number, size);
}

Result<std::vector<PartInfo>> RegisteredStore::ListParts(const std::string& bucket,
                                                         const std::string& upload_id) {
  TM_TRY(Registered(bucket));
  return backend_->ListParts(bucket, upload_id);
}

Result<ObjectInfo> RegisteredStore::CompleteUpload(const std::string& bucket,
                                                   const std::string& upload_id,
                                                   const std::vector<int>& part_numbers,
                                                   ObjectInfo final_info,
                                                   PutConditions conditions) {
  TM_TRY(Registered(bucket));
  TM_ASSIGN(UploadInfo upload, backend_->GetUpload(bucket, upload_id));
  auto before = SizeBefore(bucket, upload.key);
  TM_ASSIGN(ObjectInfo completed,
            backend_->CompleteUpload(bucket, upload_id, part_numbers, std::move(final_info),
                                     std::move(conditions)));
  Count(bucket, before, completed.size);
  return completed;
}

Result<void> RegisteredStore::AbortUpload(const std::string& bucket, const std::string& upload_id) {
  TM_TRY(Registered(bucket));
  return backend_->AbortUpload(bucket, upload_id);
}

size_t RegisteredStore::MaxKeyBytes(const std::string& bucket) const {
  return backend_->MaxKeyBytes(bucket);
}

bool RegisteredStore::ListsInByteOrder() const { return backend_->ListsInByteOrder(); }

Result<std::vector<UploadInfo>> RegisteredStore::ListUploads(const std::string& bucket,
                                                             const std::string& prefix) {
  TM_TRY(Registered(bucket));
  return backend_->ListUploads(bucket, prefix);
}

// ---- emptying

Result<void> CheckNothingLocked(RegisteredStore& store, const std::string& bucket) {
  auto info = store.HeadBucket(bucket);
  if (!info)
    return FailureOf(info.error()) == StoreFailure::kNoSuchBucket ? Result<void>{}
                                                                  : Fail(info.error());
  if (!info->object_lock) return {};
  // Every version is an object of the bucket (the current ones under their keys, the
  // others kept under the versions prefix), each with its own lock.
  const int64_t now = store.clock().NowMillis();
  int64_t latest = 0;
  bool held = false;
  ListOptions opts;
  opts.max_keys = 1000;
  while (true) {
    TM_ASSIGN(auto page, store.List(bucket, opts));
    for (const auto& o : page.objects) {
      auto head = store.Head(bucket, o.key);
      if (!head) {
        if (FailureOf(head.error()) == StoreFailure::kNoSuchKey) continue;
        return Fail(head.error());
      }
      if (!LockedAt(*head, now)) continue;
      held = held || head->legal_hold == "ON";
      if (head->lock_until_ms > now) latest = std::max(latest, head->lock_until_ms);
    }
    if (!page.truncated) break;
    opts.start_after = page.next_marker;
  }
  if (!held && latest == 0) return {};
  return Fail(Error{
      ErrorCode::kConflict,
      "The bucket " + bucket + " has object versions under object lock (" +
          (held ? std::string("a legal hold") : "retention until " + FormatIso8601(latest)) +
          "); they cannot be deleted until it ends.",
      {}}.With("locked_until", held ? "legal hold" : FormatIso8601(latest)));
}

Result<EmptiedBucket> DeleteBucketWithContents(RegisteredStore& store, const std::string& bucket) {
  EmptiedBucket out;
  TM_TRY(CheckNothingLocked(store, bucket));
  auto gone = [](const Error& e) { return FailureOf(e) == StoreFailure::kNoSuchBucket; };
  // A bucket the backend no longer has room for is still unregistered below (a deletion
  // that stopped between closing and unregistering).
  auto uploads = store.ListUploads(bucket, "");
  if (!uploads && !gone(uploads.error())) return Fail(uploads.error());
  for (const auto& u : uploads ? *uploads : std::vector<UploadInfo>{}) {
    auto aborted = store.AbortUpload(bucket, u.upload_id);
    if (!aborted && !(aborted.error().code == ErrorCode::kNotFound)) return Fail(aborted.error());
  }
  while (uploads) {
    ListOptions opts;
    opts.max_keys = 1000;
    auto page = store.List(bucket, opts);
    if (!page && gone(page.error())) break;
    if (!page) return Fail(page.error());
    for (const auto& o : page->objects) {
      auto deleted = store.Delete(bucket, o.key);
      if (!deleted && deleted.error().code != ErrorCode::kNotFound) return Fail(deleted.error());
      out.objects++;
      out.bytes += o.size;
    }
    if (!page->truncated) break;
  }
  auto deleted = store.DeleteBucket(bucket);
  if (!deleted && !gone(deleted.error())) return Fail(deleted.error());
  return out;
}

}  // namespace tablemere::objectstore
