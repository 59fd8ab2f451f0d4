// S3 object lock: a bucket's lock configuration and default retention, each version's
// retention (GOVERNANCE or COMPLIANCE, until a time) and legal hold, kept with the version
// itself (ObjectInfo, which the store keeps and every copy of a version carries), and the
// checks that keep a locked version's bytes. Every path that removes a version's bytes
// asks here first: DELETE and DeleteObjects by version id (versioning.cc), bucket deletion
// (a bucket with any version is not empty), and the deletion of a warehouse or of an
// account's warehouses (objectstore::CheckNothingLocked, before anything is removed).
// Other writes never remove a version in a bucket with object lock: its versioning stays
// Enabled, so a write keeps the version it replaces.
#include <algorithm>

#include "s3/errors.h"
#include "s3/post_policy.h"
#include "s3/service.h"

namespace tablemere::s3 {

using objectstore::ObjectInfo;
using Kind = storage::S3Identity::Kind;

namespace {

Error NoLockConfiguration() {
  return InvalidRequest("Bucket is missing Object Lock Configuration");
}

bool ValidMode(const std::string& mode) { return mode == kGovernance || mode == kCompliance; }

}  // namespace

Result<std::optional<objectstore::ObjectLockConfig>> S3Service::ObjectLockOf(
    const std::string& bucket) {
  TM_ASSIGN(auto info, store_.HeadBucket(bucket));
  return info.object_lock;
}

Result<void> S3Service::SetObjectLock(const storage::S3Identity& id, const std::string& bucket,
                                      const objectstore::ObjectLockConfig& config) {
  TM_TRY(Authorize(id, bucket, "",
                   id.kind == Kind::kOperator ? Access::kBucketAdmin : Access::kWriteAttributes));
  if (storage::IsTableBucket(bucket)) {
    return Fail(InvalidRequest(
        "A warehouse's table bucket has no object lock: Iceberg's maintenance must be able to "
        "remove the files of expired snapshots."));
  }
  TM_ASSIGN(std::string versioning, VersioningOf(bucket));
  if (versioning != kVersioningEnabled) {
    return Fail(S3Error(ErrorCode::kConflict, "InvalidBucketState",
                        "Object Lock configuration cannot be enabled on a bucket without "
                        "versioning Enabled; enable versioning first."));
  }
  objectstore::AttributeChange change;
  change.object_lock = config;
  TM_TRY(store_.SetBucketAttributes(bucket, change));
  return {};
}

Result<void> S3Service::LockForWrite(const std::string& bucket, const LockRequest& asked,
                                     ObjectInfo& info) {
  TM_ASSIGN(auto lock, ObjectLockOf(bucket));
  if (!lock) {
    if (!asked.Empty()) return Fail(NoLockConfiguration());
    return {};
  }
  if (asked.mode.empty() != (asked.until_ms == 0)) {
    return Fail(InvalidArgument(
        "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied"));
  }
  if (!asked.mode.empty()) {
    if (!ValidMode(asked.mode)) return Fail(InvalidArgument("Unknown wormMode directive."));
    if (asked.until_ms <= store_.clock().NowMillis()) {
      return Fail(InvalidArgument("The retain until date must be in the future!"));
    }
    info.lock_mode = asked.mode;
    info.lock_until_ms = asked.until_ms;
  } else if (!lock->default_mode.empty()) {
    constexpr int64_t kDayMs = 24LL * 3600 * 1000;
    const int64_t days = lock->days > 0 ? lock->days : int64_t{lock->years} * 365;
    info.lock_mode = lock->default_mode;
    info.lock_until_ms = store_.clock().NowMillis() + days * kDayMs;
  }
  if (!asked.legal_hold.empty()) {
    if (asked.legal_hold != "ON" && asked.legal_hold != "OFF") {
      return Fail(InvalidArgument("Legal Hold must be either of 'ON' or 'OFF'"));
    }
    info.legal_hold = asked.legal_hold;
  }
  return {};
}

Result<ObjectInfo> S3Service::LockedVersion(const std::string& bucket, const std::string& key,
                                            const std::optional<std::string>& version_id) {
  TM_ASSIGN(auto lock, ObjectLockOf(bucket));
  if (!lock) return Fail(NoLockConfiguration());
  return HeadVersion(bucket, key, version_id);
}

Result<bool> S3Service::MayBypassGovernance(const storage::S3Identity& id,
                                            const std::string& bucket) {
  switch (id.kind) {
    case Kind::kOperator: {
      TM_ASSIGN(std::string owner, identities_.OperatorBucketOwner(bucket));
      return owner == id.access_key;
    }
    case Kind::kWarehouse:
      // A warehouse's writing identity owns its blob bucket.
      return !id.read_only && storage::WarehouseOfBucket(bucket) == id.warehouse_id;
    default:
      return false;
  }
}

Result<void> S3Service::CheckDeletable(const storage::S3Identity& id, const std::string& bucket,
                                       const ObjectInfo& version, bool bypass) {
  const int64_t now = store_.clock().NowMillis();
  if (!objectstore::LockedAt(version, now)) return {};
  if (version.legal_hold == "ON") {
    return Fail(AccessDenied("This version is under a legal hold; remove the hold first."));
  }
  const std::string until = FormatIso8601(version.lock_until_ms);
  if (version.lock_mode == kGovernance && bypass) {
    TM_ASSIGN(bool may, MayBypassGovernance(id, bucket));
    if (may) return {};
  }
  return Fail(
      AccessDenied("This version is under " + version.lock_mode + " retention until " + until +
                   (version.lock_mode == kGovernance ? "; its bucket's owner may bypass it "
                                                       "(x-amz-bypass-governance-retention: true)."
                                                     : "; nobody can delete it before then.")));
}

Result<std::string> S3Service::SetRetention(const storage::S3Identity& id,
                                            const std::string& bucket, const std::string& key,
                                            const std::optional<std::string>& version_id,
                                            const std::string& mode, int64_t until_ms,
                                            bool bypass) {
  TM_ASSIGN(auto lock, ObjectLockOf(bucket));
  if (!lock) return Fail(NoLockConfiguration());
  if (!ValidMode(mode) || until_ms <= 0) return Fail(MalformedXml());
  // Under the key's hold, so the version is not moved (made noncurrent) meanwhile.
  TM_ASSIGN(objectstore::KeyGuard hold, store_.HoldKey(bucket, key));
  TM_ASSIGN(auto where, ReadVersion(bucket, key, version_id));
  TM_ASSIGN(ObjectInfo current, store_.Head(bucket, where.stored_key));
  const int64_t now = store_.clock().NowMillis();
  if (until_ms <= now) return Fail(InvalidArgument("The retain until date must be in the future!"));
  const bool active = !current.lock_mode.empty() && current.lock_until_ms > now;
  const bool weakens = mode != current.lock_mode || until_ms < current.lock_until_ms;
  if (active && weakens) {
    if (current.lock_mode == kCompliance) {
      return Fail(
          AccessDenied("A COMPLIANCE retention can only be extended, never shortened or "
                       "changed, until " +
                       FormatIso8601(current.lock_until_ms) + "."));
    }
    TM_ASSIGN(bool may, MayBypassGovernance(id, bucket));
    if (!bypass || !may) {
      return Fail(AccessDenied(
          "Shortening or changing a GOVERNANCE retention needs its bucket's owner to bypass it "
          "(x-amz-bypass-governance-retention: true)."));
    }
  }
  objectstore::AttributeChange change;
  change.retention = std::pair(mode, until_ms);
  TM_ASSIGN(auto info, store_.SetObjectAttributes(bucket, where.stored_key, change));
  where.ApplyTo(info);
  return info.version_id;
}

Result<std::string> S3Service::SetLegalHold(const std::string& bucket, const std::string& key,
                                            const std::optional<std::string>& version_id,
                                            const std::string& status) {
  TM_ASSIGN(auto lock, ObjectLockOf(bucket));
  if (!lock) return Fail(NoLockConfiguration());
  if (status != "ON" && status != "OFF") return Fail(MalformedXml());
  objectstore::AttributeChange change;
  change.legal_hold = status;
  TM_ASSIGN(auto info, ChangeVersion(bucket, key, version_id, change));
  return info.version_id;
}

}  // namespace tablemere::s3
