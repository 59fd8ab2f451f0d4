// S3 versioning over an object store that keeps one object per key. The current version
// of a key stays the object under the key, so everything that reads objects (engines,
// listings, GETs without a versionId, metering) reads it as before. A version that a
// write replaces or a DELETE removes is first copied under kVersionsPrefix + <a hash of
// the key> + "/" + <version id> and recorded in the metastore; a delete marker is a
// record alone. The writers of one key hold it (RegisteredStore::HoldKey, across servers
// too) from keeping the old version until the new one is published, so no acknowledged
// version is lost. A kill at any step leaves at worst a kept copy that no record names
// (bytes, never shown) or a record of the version that is still current (the current
// object wins wherever both are seen); a half-written version is never visible, because
// each version is published by the store's own atomic commit.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>

#include "common/crash_point.h"
#include "common/crypto.h"
#include "s3/errors.h"
#include "s3/service.h"

namespace tablemere::s3 {

using objectstore::ObjectInfo;
using Kind = storage::S3Identity::Kind;

namespace {

// The largest UTF-8 code point: after every key that starts with what it is appended to.
constexpr char kAfterEverything[] = "\xF4\x8F\xBF\xBF";

std::string KeptKey(const std::string& key, const std::string& version_id) {
  return std::string(kVersionsPrefix) + crypto::HexEncode(crypto::Sha256(key)).substr(0, 32) + "/" +
         version_id;
}

std::string VersionOf(const ObjectInfo& o) { return o.version_id.empty() ? "null" : o.version_id; }

Error NoSuchVersion() {
  return S3Error(ErrorCode::kNotFound, "NoSuchVersion", "The specified version does not exist.");
}

// Version ids are 32 lowercase hex digits, or "null".
Result<void> CheckVersionId(const std::string& id) {
  if (id.empty()) return Fail(InvalidArgument("Version id cannot be the empty string"));
  const bool hex = id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                   });
  if (id != "null" && !hex) return Fail(InvalidArgument("Invalid version id specified"));
  return {};
}

// The object under `key`, nullopt when there is none.
Result<std::optional<ObjectInfo>> CurrentObject(objectstore::RegisteredStore& store,
                                                const std::string& bucket, const std::string& key) {
  auto head = store.Head(bucket, key);
  if (head) return std::optional(std::move(*head));
  if (objectstore::FailureOf(head.error()) == objectstore::StoreFailure::kNoSuchKey) {
    return std::optional<ObjectInfo>();
  }
  return Fail(head.error());
}

}  // namespace

std::string S3Service::NewVersionId() { return crypto::HexEncode(random_.Bytes(16)); }

Result<std::string> S3Service::VersioningOf(const std::string& bucket) {
  TM_ASSIGN(auto info, store_.HeadBucket(bucket));
  return info.versioning;
}

Result<void> S3Service::SetVersioning(const storage::S3Identity& id, const std::string& bucket,
                                      const std::string& status) {
  // Who may change the bucket's settings (its CORS, tags): the owner, or a warehouse's
  // writing identity for its blob bucket.
  TM_TRY(Authorize(id, bucket, "",
                   id.kind == Kind::kOperator ? Access::kBucketAdmin : Access::kWriteAttributes));
  if (storage::IsTableBucket(bucket)) {
    return Fail(InvalidRequest(
        "A warehouse's table bucket has no S3 versioning: Iceberg tables keep their own history "
        "(snapshots and time travel), and their files are never overwritten."));
  }
  if (status != kVersioningEnabled && status != kVersioningSuspended) return Fail(MalformedXml());
  TM_ASSIGN(auto lock, ObjectLockOf(bucket));
  if (lock && status == kVersioningSuspended) {
    return Fail(S3Error(ErrorCode::kConflict, "InvalidBucketState",
                        "An Object Lock configuration is present on this bucket, so the "
                        "versioning state cannot be changed."));
  }
  objectstore::AttributeChange change;
  change.versioning = status;
  TM_TRY(store_.SetBucketAttributes(bucket, change));
  return {};
}

Result<VersionedRead> S3Service::ReadVersion(const std::string& bucket, const std::string& key,
                                             const std::optional<std::string>& version_id) {
  if (!version_id) return VersionedRead{key, "", std::nullopt, std::nullopt};
  const std::string& wanted = *version_id;
  TM_TRY(CheckVersionId(wanted));
  TM_ASSIGN(std::string state, VersioningOf(bucket));
  TM_ASSIGN(auto current, CurrentObject(store_, bucket, key));
  if ((current && VersionOf(*current) == wanted) || (state.empty() && wanted == "null")) {
    return VersionedRead{key, wanted, std::nullopt, std::nullopt};
  }
  if (state.empty()) return Fail(InvalidArgument("Invalid version id specified"));
  TM_ASSIGN(auto found, store_.versions().FindVersion(bucket, key, wanted));
  if (!found) return Fail(NoSuchVersion());
  if (found->delete_marker) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "MethodNotAllowed",
                        "The specified method is not allowed against this resource.")
                    .With(kDeleteMarkerDetail, wanted));
  }
  return VersionedRead{KeptKey(key, wanted), wanted, found->etag, found->modified_ms};
}

Result<ObjectInfo> S3Service::HeadVersion(const std::string& bucket, const std::string& key,
                                          const std::optional<std::string>& version_id) {
  TM_ASSIGN(auto where, ReadVersion(bucket, key, version_id));
  TM_ASSIGN(ObjectInfo info, store_.Head(bucket, where.stored_key));
  where.ApplyTo(info);
  return info;
}

Result<ObjectInfo> S3Service::ChangeVersion(const std::string& bucket, const std::string& key,
                                            const std::optional<std::string>& version_id,
                                            const objectstore::AttributeChange& change) {
  TM_ASSIGN(objectstore::KeyGuard hold, store_.HoldKey(bucket, key));
  TM_ASSIGN(auto where, ReadVersion(bucket, key, version_id));
  TM_ASSIGN(ObjectInfo info, store_.SetObjectAttributes(bucket, where.stored_key, change));
  where.ApplyTo(info);
  return info;
}

Result<std::optional<std::string>> S3Service::CurrentDeleteMarker(const std::string& bucket,
                                                                  const std::string& key) {
  TM_ASSIGN(std::string state, VersioningOf(bucket));
  if (state.empty()) return std::optional<std::string>();
  TM_ASSIGN(auto newest, store_.versions().NewestVersion(bucket, key));
  if (!newest || !newest->delete_marker) return std::optional<std::string>();
  return std::optional(newest->version_id);
}

Result<void> S3Service::KeepAsNoncurrent(const std::string& bucket, const std::string& key,
                                         const ObjectInfo& current, const std::string& version_id) {
  ObjectInfo kept = current;
  kept.version_id = version_id;
  TM_TRY(store_.Copy(bucket, key, bucket, KeptKey(key, version_id), kept));
  CrashPoint("s3-version-copied");
  metastore::ObjectVersion record;
  record.bucket = bucket;
  record.key = key;
  record.version_id = version_id;
  record.size = current.size;
  record.etag = current.etag;
  record.modified_ms = current.last_modified_ms;
  TM_TRY(store_.versions().AddVersion(record));
  return {};
}

Result<void> S3Service::DropNoncurrentNull(const std::string& bucket, const std::string& key) {
  TM_ASSIGN(auto found, store_.versions().FindVersion(bucket, key, "null"));
  if (!found) return {};
  // The record first: a kill in between leaves bytes no record names, never a record
  // naming no bytes.
  TM_TRY(store_.versions().RemoveVersion(bucket, key, "null"));
  if (!found->delete_marker) TM_TRY(store_.Delete(bucket, KeptKey(key, "null")));
  return {};
}

Result<void> S3Service::RestoreNewest(const std::string& bucket, const std::string& key) {
  // A record whose copy a kill left unmade is skipped (and dropped).
  for (int tries = 0; tries < 8; tries++) {
    TM_ASSIGN(auto newest, store_.versions().NewestVersion(bucket, key));
    if (!newest || newest->delete_marker) return {};
    const std::string kept_key = KeptKey(key, newest->version_id);
    TM_ASSIGN(auto kept, CurrentObject(store_, bucket, kept_key));
    if (kept) {
      ObjectInfo restored = *kept;
      restored.version_id = newest->version_id;
      TM_TRY(store_.Copy(bucket, kept_key, bucket, key, restored));
      CrashPoint("s3-version-restored");
    }
    TM_TRY(store_.versions().RemoveVersion(bucket, key, newest->version_id));
    if (kept) return store_.Delete(bucket, kept_key);
  }
  return {};
}

Result<ObjectInfo> S3Service::PublishWrite(
    const std::string& bucket, const std::string& key,
    const std::function<Result<ObjectInfo>(const std::string& version_id)>& write) {
  // Table buckets never have versioning: engines' writes skip the bucket lookup.
  if (storage::IsTableBucket(bucket)) return write("");
  TM_ASSIGN(std::string state, VersioningOf(bucket));
  if (state.empty()) return write("");
  TM_ASSIGN(objectstore::KeyGuard hold, store_.HoldKey(bucket, key));
  const bool suspended = state == kVersioningSuspended;
  const std::string version_id = suspended ? "null" : NewVersionId();
  TM_ASSIGN(auto current, CurrentObject(store_, bucket, key));
  std::optional<std::string> kept;
  // A suspended bucket's write replaces the null version; any other current one is kept.
  if (current && !(suspended && VersionOf(*current) == "null")) {
    kept = VersionOf(*current);
    TM_TRY(KeepAsNoncurrent(bucket, key, *current, *kept));
  }
  CrashPoint("s3-version-kept");
  auto written = write(version_id);
  if (!written) {
    // The kept copy is taken back only while the version it keeps is certainly still
    // the current one (a write whose outcome is unknown may have replaced it).
    if (kept) {
      auto now = CurrentObject(store_, bucket, key);
      if (now && *now && VersionOf(**now) == *kept) {
        if (store_.versions().RemoveVersion(bucket, key, *kept)) {
          (void)store_.Delete(bucket, KeptKey(key, *kept));
        }
      }
    }
    return written;
  }
  if (suspended) TM_TRY(DropNoncurrentNull(bucket, key));
  return written;
}

Result<DeleteOutcome> S3Service::DeleteObject(const storage::S3Identity& id,
                                              const std::string& bucket, const std::string& key,
                                              const std::optional<std::string>& version_id,
                                              bool bypass) {
  if (version_id) TM_TRY(CheckVersionId(*version_id));
  TM_ASSIGN(std::string state, storage::IsTableBucket(bucket) ? Result<std::string>(std::string())
                                                              : VersioningOf(bucket));
  if (state.empty()) {
    if (version_id && *version_id != "null") {
      return Fail(InvalidArgument("Invalid version id specified"));
    }
    TM_TRY(store_.Delete(bucket, key));
    return DeleteOutcome{version_id ? "null" : "", false};
  }
  TM_ASSIGN(objectstore::KeyGuard hold, store_.HoldKey(bucket, key));
  TM_ASSIGN(auto current, CurrentObject(store_, bucket, key));
  if (!version_id) {
    // A delete marker becomes the newest version; the object it hides is kept.
    const bool suspended = state == kVersioningSuspended;
    const std::string marker_id = suspended ? "null" : NewVersionId();
    if (current && !(suspended && VersionOf(*current) == "null")) {
      TM_TRY(KeepAsNoncurrent(bucket, key, *current, VersionOf(*current)));
    }
    if (suspended) TM_TRY(DropNoncurrentNull(bucket, key));
    metastore::ObjectVersion marker;
    marker.bucket = bucket;
    marker.key = key;
    marker.version_id = marker_id;
    marker.delete_marker = true;
    marker.modified_ms = store_.clock().NowMillis();
    TM_TRY(store_.versions().AddVersion(marker));
    CrashPoint("s3-delete-marker-recorded");
    if (current) TM_TRY(store_.Delete(bucket, key));
    return DeleteOutcome{marker_id, true};
  }
  const std::string& wanted = *version_id;
  if (current && VersionOf(*current) == wanted) {
    TM_TRY(CheckDeletable(id, bucket, *current, bypass));
    TM_TRY(store_.Delete(bucket, key));
    CrashPoint("s3-current-version-deleted");
    TM_TRY(RestoreNewest(bucket, key));
    return DeleteOutcome{wanted, false};
  }
  TM_ASSIGN(auto found, store_.versions().FindVersion(bucket, key, wanted));
  // A version that is not there is deleted already (S3 answers 204 too).
  if (!found) return DeleteOutcome{wanted, false};
  if (!found->delete_marker) {
    // The kept copy carries the version's lock.
    TM_ASSIGN(auto kept, CurrentObject(store_, bucket, KeptKey(key, wanted)));
    if (kept) TM_TRY(CheckDeletable(id, bucket, *kept, bypass));
  }
  TM_TRY(store_.versions().RemoveVersion(bucket, key, wanted));
  if (!found->delete_marker) TM_TRY(store_.Delete(bucket, KeptKey(key, wanted)));
  // Removing the delete marker that hid the key brings the version before it back.
  if (!current) TM_TRY(RestoreNewest(bucket, key));
  return DeleteOutcome{wanted, found->delete_marker};
}

// ------------------------------------------------------------------ ListObjectVersions

namespace {

// The current objects of a listing, in the store's order, a page of the store at a time.
class ObjectCursor {
 public:
  using ListFn = std::function<Result<objectstore::ListResult>(objectstore::ListOptions)>;
  ObjectCursor(ListFn list, std::string prefix, std::string after)
      : list_(std::move(list)), prefix_(std::move(prefix)), after_(std::move(after)) {}

  Result<const ObjectInfo*> Peek() {
    while (buffer_.empty() && !done_) {
      objectstore::ListOptions options;
      options.prefix = prefix_;
      options.start_after = after_;
      options.max_keys = 1000;
      TM_ASSIGN(auto page, list_(options));
      for (auto& o : page.objects) buffer_.push_back(std::move(o));
      // The store's own order pages on from its marker.
      done_ = !page.truncated || page.next_marker.empty();
      if (!done_) after_ = page.next_marker;
    }
    return buffer_.empty() ? nullptr : &buffer_.front();
  }
  ObjectInfo Pop() {
    ObjectInfo o = std::move(buffer_.front());
    buffer_.pop_front();
    return o;
  }
  // Passes every key under the common prefix `cp`.
  void Skip(const std::string& cp) {
    while (!buffer_.empty() && buffer_.front().key.starts_with(cp)) buffer_.pop_front();
    if (buffer_.empty()) after_ = std::max(after_, cp + kAfterEverything);
  }

 private:
  ListFn list_;
  std::string prefix_, after_;
  std::deque<ObjectInfo> buffer_;
  bool done_ = false;
};

// The recorded (noncurrent) versions, by key and newest first.
class RecordCursor {
 public:
  RecordCursor(metastore::BucketStore& versions, std::string bucket, std::string prefix,
               std::string after_key, int64_t after_seq)
      : versions_(versions),
        bucket_(std::move(bucket)),
        prefix_(std::move(prefix)),
        after_key_(std::move(after_key)),
        after_seq_(after_seq) {}

  Result<const metastore::ObjectVersion*> Peek() {
    if (buffer_.empty() && !done_) {
      constexpr int kBatch = 1000;
      TM_ASSIGN(auto batch,
                versions_.ListVersions(bucket_, prefix_, after_key_, after_seq_, kBatch));
      done_ = static_cast<int>(batch.size()) < kBatch;
      if (!batch.empty()) {
        after_key_ = batch.back().key;
        after_seq_ = batch.back().seq;
      }
      buffer_.assign(batch.begin(), batch.end());
    }
    return buffer_.empty() ? nullptr : &buffer_.front();
  }
  metastore::ObjectVersion Pop() {
    metastore::ObjectVersion v = std::move(buffer_.front());
    buffer_.pop_front();
    return v;
  }
  void Skip(const std::string& cp) {
    while (!buffer_.empty() && buffer_.front().key.starts_with(cp)) buffer_.pop_front();
    if (buffer_.empty() && cp + kAfterEverything > after_key_) {
      after_key_ = cp + kAfterEverything;
      after_seq_ = 0;
    }
  }

 private:
  metastore::BucketStore& versions_;
  std::string bucket_, prefix_, after_key_;
  int64_t after_seq_;
  std::deque<metastore::ObjectVersion> buffer_;
  bool done_ = false;
};

// The common prefix `key` rolls up into under a delimiter, if any.
std::optional<std::string> RolledUp(const VersionListing& q, const std::string& key) {
  if (q.delimiter.empty()) return std::nullopt;
  size_t at = key.find(q.delimiter, q.prefix.size());
  if (at == std::string::npos) return std::nullopt;
  return key.substr(0, at + q.delimiter.size());
}

}  // namespace

Result<VersionPage> S3Service::ListVersions(const storage::S3Identity& id,
                                            const std::string& bucket, const VersionListing& q) {
  TM_TRY(Authorize(id, bucket, q.prefix, Access::kList));
  TM_ASSIGN(std::string state, VersioningOf(bucket));
  VersionPage page;
  const int max_keys = std::clamp(q.max_keys, 0, 1000);
  if (max_keys == 0) return page;

  // Where the previous page stopped: after key_marker, or inside it after one version.
  std::string after = q.key_marker;
  int64_t after_seq = 0;
  bool inside_marker = false;  // resuming among key_marker's versions
  if (!q.key_marker.empty() && !q.version_id_marker.empty()) {
    TM_TRY(CheckVersionId(q.version_id_marker));
    TM_ASSIGN(auto current, CurrentObject(store_, bucket, q.key_marker));
    if (current && VersionOf(*current) == q.version_id_marker) {
      after_seq = std::numeric_limits<int64_t>::max();
      inside_marker = true;
    } else {
      TM_ASSIGN(auto at, store_.versions().FindVersion(bucket, q.key_marker, q.version_id_marker));
      if (at) {
        after_seq = at->seq;
        inside_marker = true;
      }
    }
  }
  // A marker that is a common prefix was listed whole.
  if (auto cp = RolledUp(q, q.key_marker); cp && *cp == q.key_marker) after += kAfterEverything;

  ObjectCursor objects(
      [&](objectstore::ListOptions options) { return List(id, bucket, std::move(options)); },
      q.prefix, after);
  RecordCursor records(store_.versions(), bucket, q.prefix, after, after_seq);

  int shown = 0;
  std::string current_key, current_id;  // the last current object listed
  std::string previous_key;             // the key of the last version listed
  while (true) {
    TM_ASSIGN(const ObjectInfo* object, objects.Peek());
    TM_ASSIGN(const metastore::ObjectVersion* record, records.Peek());
    if (!object && !record) break;
    const bool take_object = object && (!record || object->key <= record->key);
    const std::string key = take_object ? object->key : record->key;
    if (shown == max_keys) {
      page.truncated = true;
      break;
    }
    if (auto cp = RolledUp(q, key)) {
      if (page.common_prefixes.empty() || page.common_prefixes.back() != *cp) {
        page.common_prefixes.push_back(*cp);
        shown++;
        page.next_key_marker = *cp;
        page.next_version_id_marker.clear();
      }
      objects.Skip(*cp);
      records.Skip(*cp);
      continue;
    }
    VersionEntry entry;
    entry.key = key;
    if (take_object) {
      ObjectInfo o = objects.Pop();
      if (!state.empty()) {
        // The listing does not carry the version id; the object does.
        TM_ASSIGN(auto head, CurrentObject(store_, bucket, key));
        if (!head) continue;  // deleted since it was listed
        o = std::move(*head);
      }
      current_key = key;
      current_id = VersionOf(o);
      entry.version_id = current_id;
      entry.latest = true;
      entry.size = o.size;
      entry.etag = o.etag;
      entry.modified_ms = o.last_modified_ms;
    } else {
      metastore::ObjectVersion v = records.Pop();
      // The record of a version that is still current (a kill between keeping it and
      // replacing it): the current object answers for it.
      if (current_key == key && current_id == v.version_id) continue;
      entry.version_id = v.version_id;
      entry.latest =
          current_key != key && previous_key != key && !(inside_marker && key == q.key_marker);
      entry.delete_marker = v.delete_marker;
      entry.size = v.size;
      entry.etag = v.etag;
      entry.modified_ms = v.modified_ms;
    }
    previous_key = key;
    page.next_key_marker = key;
    page.next_version_id_marker = entry.version_id;
    page.versions.push_back(std::move(entry));
    shown++;
  }
  if (!page.truncated) {
    page.next_key_marker.clear();
    page.next_version_id_marker.clear();
  }
  return page;
}

}  // namespace tablemere::s3
