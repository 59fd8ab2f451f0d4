// The S3 service: what an S3 request may do and what it means, between the wire adapter
// (api/s3, which parses and renders) and the object store (which keeps bytes). It decides
// identity × bucket × key authorisation, bucket ownership, session-scoped listing, the
// table buckets' key layout, write preconditions and the multipart rules. No HTTP here.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "objectstore/registered_store.h"
#include "s3/conditions.h"
#include "storage/access.h"

namespace tablemere::s3 {

// S3 refuses single PUTs and parts over 5 GiB; so do we.
inline constexpr uint64_t kMaxObjectSize = 5ull * 1024 * 1024 * 1024;
// Every part but the last must be at least 5 MiB (S3's rule; clients size parts for it).
inline constexpr uint64_t kMinPartSize = 5ull * 1024 * 1024;
inline constexpr int kMaxPartNumber = 10000;

// kWriteAttributes: an object's ACL and tags, which a bucket's public WRITE does not give.
enum class Access {
  kListBuckets,
  kBucketRead,
  kList,
  kRead,
  kWrite,
  kWriteAttributes,
  kDelete,
  kBucketAdmin
};

// One <Part> of a CompleteMultipartUpload request.
struct RequestedPart {
  int number = 0;
  std::string etag;                              // unquoted; may be empty
  std::map<std::string, std::string> checksums;  // algorithm name ("CRC32") → base64
};

// A checksum named by its algorithm ("CRC32", base64 value), as a request header gives it.
using NamedChecksum = std::pair<std::string, std::string>;

struct CompletedUpload {
  objectstore::ObjectInfo object;
  std::string checksum_algorithm;  // "" when the object has no whole-object checksum
  std::string checksum_value;
  std::string checksum_type;  // FULL_OBJECT | COMPOSITE
};

// ETag of a multipart object: MD5 over the parts' binary MD5s, then "-<count>".
std::string MultipartEtag(const std::vector<std::string>& part_etags);

bool ValidBucketName(const std::string& name);

// The canned ACLs this server offers: private (stored as "") and public-read.
inline constexpr char kPublicRead[] = "public-read";
inline constexpr char kPublicReadWrite[] = "public-read-write";
inline constexpr char kAuthenticatedRead[] = "authenticated-read";

// ---- versioning (versioning.cc). The current version of a key is the object under the
// key itself (so reads, listings and engines' paths are those of any object); every other
// version is kept under a reserved prefix of the same bucket, with a record in the
// metastore (BucketStore's versions), and a delete marker is a record alone.
inline constexpr char kVersionsPrefix[] = ".tablemere-versions/";
inline constexpr char kVersioningEnabled[] = "Enabled";
inline constexpr char kVersioningSuspended[] = "Suspended";

// Where a read of one version finds its bytes.
struct VersionedRead {
  std::string stored_key;  // the key itself for the current version
  std::string version_id;  // "" when none was asked for
  // A noncurrent version's own ETag and time (its kept copy's differ).
  std::optional<std::string> etag;
  std::optional<int64_t> modified_ms;
  // `info`, the stored object's, as this version answers: its own ETag, time and id.
  void ApplyTo(objectstore::ObjectInfo& info) const {
    if (etag) info.etag = *etag;
    if (modified_ms) info.last_modified_ms = *modified_ms;
    if (!version_id.empty()) info.version_id = version_id;
  }
};

// What a DELETE did: the version it removed or the delete marker it made.
struct DeleteOutcome {
  std::string version_id;  // "" in a bucket that never had versioning
  bool delete_marker = false;
};

// One entry of ListObjectVersions.
struct VersionEntry {
  std::string key;
  std::string version_id;
  bool latest = false;
  bool delete_marker = false;
  uint64_t size = 0;
  std::string etag;
  int64_t modified_ms = 0;
};
struct VersionListing {
  std::string prefix, delimiter, key_marker, version_id_marker;
  int max_keys = 1000;
};
struct VersionPage {
  std::vector<VersionEntry> versions;  // by key, newest first within a key
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_key_marker, next_version_id_marker;
};

// ---- object lock (object_lock.cc)
inline constexpr char kGovernance[] = "GOVERNANCE";
inline constexpr char kCompliance[] = "COMPLIANCE";

// The object lock a write asks for (x-amz-object-lock-* headers); empty fields when none.
struct LockRequest {
  std::string mode;        // GOVERNANCE | COMPLIANCE
  int64_t until_ms = 0;    // with mode
  std::string legal_hold;  // ON | OFF
  bool Empty() const { return mode.empty() && until_ms == 0 && legal_hold.empty(); }
};

class S3Service {
 public:
  S3Service(objectstore::RegisteredStore& store, storage::IdentityResolver& identities)
      : store_(store), identities_(identities) {}

  objectstore::RegisteredStore& store() { return store_; }

  Result<void> Authorize(const storage::S3Identity& id, const std::string& bucket,
                         const std::string& key, Access access);
  // The bucket owner's canonical id: the operator user who created it, or the identity of
  // the warehouse whose table or blob bucket it is; "" for neither.
  Result<std::string> OwnerIdOf(const std::string& bucket);

  // ---- ACLs
  // The canned ACL an x-amz-acl header asks for on a write or a PUT ?acl: "" (private)
  // or a public one (public-read, public-read-write, authenticated-read), which only
  // operator users' buckets and objects may be, and not while the bucket's
  // PublicAccessBlock has BlockPublicAcls on; other canned ACLs are 501 (not offered),
  // never silently ignored.
  Result<std::string> CannedAclForWrite(const storage::S3Identity& id, const std::string& bucket,
                                        const std::optional<std::string>& header);

  // ---- buckets
  Result<std::vector<objectstore::BucketInfo>> ListBuckets(const storage::S3Identity& id);
  // `location`: the LocationConstraint asked for ("" for the server's region), kept and
  // echoed by GetBucketLocation. `us_east_1`: the service's region is us-east-1, where an
  // owner creating a bucket they already own succeeds and resets its ACL (every other
  // region answers 409).
  Result<void> CreateBucket(const storage::S3Identity& id, const std::string& bucket,
                            const std::string& acl, const std::string& location, bool us_east_1,
                            bool object_lock = false);
  Result<void> DeleteBucket(const storage::S3Identity& id, const std::string& bucket);

  // ---- listing (authorised for `options.prefix`, held to a session's scope)
  Result<objectstore::ListResult> List(const storage::S3Identity& id, const std::string& bucket,
                                       objectstore::ListOptions options);
  Result<std::vector<objectstore::UploadInfo>> ListUploads(const storage::S3Identity& id,
                                                           const std::string& bucket,
                                                           const std::string& prefix);

  // ---- writes
  // Authorises a write of `key` and checks a table bucket's layout for it.
  Result<void> CheckWritable(const storage::S3Identity& id, const std::string& bucket,
                             const std::string& key);
  // An early check of write conditions against the current object (the store re-checks
  // them when it publishes).
  Result<void> CheckWriteConditions(const std::string& bucket, const std::string& key,
                                    const Conditions& conditions);

  // ---- versioning (versioning.cc)
  // The bucket's versioning: "" (never enabled), "Enabled" or "Suspended".
  Result<std::string> VersioningOf(const std::string& bucket);
  // PutBucketVersioning: `status` Enabled or Suspended, on an operator user's or a
  // warehouse's blob bucket (table buckets keep Iceberg's own immutability).
  Result<void> SetVersioning(const storage::S3Identity& id, const std::string& bucket,
                             const std::string& status);
  // Where version `version_id` of `key` is read (the key itself when none is named):
  // NoSuchVersion when the bucket has no such version, MethodNotAllowed (with the
  // marker's headers) for a delete marker, InvalidArgument for an id other than "null"
  // in a bucket that never had versioning.
  Result<VersionedRead> ReadVersion(const std::string& bucket, const std::string& key,
                                    const std::optional<std::string>& version_id);
  // The object info of version `version_id` of `key` (the current one when none is
  // named), as that version answers (ReadVersion's errors, then NoSuchKey).
  Result<objectstore::ObjectInfo> HeadVersion(const std::string& bucket, const std::string& key,
                                              const std::optional<std::string>& version_id);
  // Changes the attributes (tags, ACL, lock) of one version, under the key's hold so the
  // version is not moved aside meanwhile; answers it as HeadVersion does.
  Result<objectstore::ObjectInfo> ChangeVersion(const std::string& bucket, const std::string& key,
                                                const std::optional<std::string>& version_id,
                                                const objectstore::AttributeChange& change);
  // After a read of the current object found none: the delete marker that is the key's
  // newest version, if there is one (its version id), for the 404's headers.
  Result<std::optional<std::string>> CurrentDeleteMarker(const std::string& bucket,
                                                         const std::string& key);
  // Publishes a write of `key` (a put, copy, POST or completed upload) through `write`,
  // which is given the version id the new object is to carry ("" in a bucket that never
  // had versioning) and stores it. In a bucket with versioning the key is held against
  // other writers, the current object is kept as a noncurrent version first (unless it
  // is the null version a suspended bucket replaces), and a null version the write
  // replaces is removed after it. Answers the stored object.
  Result<objectstore::ObjectInfo> PublishWrite(
      const std::string& bucket, const std::string& key,
      const std::function<Result<objectstore::ObjectInfo>(const std::string& version_id)>& write);
  // DELETE of the current object (`version_id` nullopt: in a bucket with versioning it
  // becomes a delete marker) or of one version (the one before it becomes current when
  // it was current); AccessDenied while object lock holds that version (`bypass`: the
  // caller asks to bypass a GOVERNANCE retention). Authorised by the caller.
  Result<DeleteOutcome> DeleteObject(const storage::S3Identity& id, const std::string& bucket,
                                     const std::string& key,
                                     const std::optional<std::string>& version_id,
                                     bool bypass = false);
  // ListObjectVersions, authorised for the prefix.
  Result<VersionPage> ListVersions(const storage::S3Identity& id, const std::string& bucket,
                                   const VersionListing& listing);

  // ---- object lock (object_lock.cc). Only a bucket with versioning Enabled can have it
  // (and its versioning can then not be suspended); a locked version cannot be deleted
  // by anyone, the operator included, until its retention runs out and its legal hold is
  // off — a GOVERNANCE retention gives way to its bucket's owner asking to bypass it.
  Result<std::optional<objectstore::ObjectLockConfig>> ObjectLockOf(const std::string& bucket);
  // PutObjectLockConfiguration (the default retention, if any); InvalidBucketState unless
  // versioning is Enabled.
  Result<void> SetObjectLock(const storage::S3Identity& id, const std::string& bucket,
                             const objectstore::ObjectLockConfig& config);
  // The lock a new version of `bucket` gets: what the write asked for, else the bucket's
  // default retention. InvalidRequest when the bucket has no object lock but the write
  // asks for it; InvalidArgument for a retention without a date in the future.
  Result<void> LockForWrite(const std::string& bucket, const LockRequest& asked,
                            objectstore::ObjectInfo& info);
  // PutObjectRetention / PutObjectLegalHold on one version (the current one unless
  // `version_id`). Shortening a retention or changing its mode needs a GOVERNANCE one and
  // `bypass` by the bucket's owner; a COMPLIANCE one only ever grows.
  Result<std::string> SetRetention(const storage::S3Identity& id, const std::string& bucket,
                                   const std::string& key,
                                   const std::optional<std::string>& version_id,
                                   const std::string& mode, int64_t until_ms, bool bypass);
  Result<std::string> SetLegalHold(const std::string& bucket, const std::string& key,
                                   const std::optional<std::string>& version_id,
                                   const std::string& status);
  // The lock of one version, for GetObjectRetention / GetObjectLegalHold (InvalidRequest
  // when the bucket has no object lock).
  Result<objectstore::ObjectInfo> LockedVersion(const std::string& bucket, const std::string& key,
                                                const std::optional<std::string>& version_id);

  // ---- multipart
  // The upload `upload_id` of `key` (NoSuchUpload when it is another key's).
  Result<objectstore::UploadInfo> Upload(const std::string& bucket, const std::string& key,
                                         const std::string& upload_id);
  // Completes `upload_id` from `parts` (S3's rules: ascending, present, ETags and
  // checksums matching, every part but the last at least 5 MiB), under `conditions`. A
  // complete repeated after it succeeded (SDKs retry one that timed out) answers the
  // object these parts made.
  Result<CompletedUpload> Complete(
      const storage::S3Identity& id, const std::string& bucket, const std::string& key,
      const std::string& upload_id, const std::vector<RequestedPart>& parts,
      const Conditions& conditions,
      const std::optional<NamedChecksum>& whole_object_checksum = std::nullopt);

 private:
  Result<void> RefuseOverQuota(const std::string& bucket, Access access);
  Result<objectstore::ListResult> ListWithoutKeptVersions(const std::string& bucket,
                                                          objectstore::ListOptions opts);
  Result<void> AuthorizeAnonymous(const std::string& bucket, const std::string& key, Access access);
  // What a caller who is not the owner may do by the canned ACLs (AllUsers, and
  // AuthenticatedUsers when `signed_caller`): list a bucket by the bucket's ACL, read an
  // object by its own ACL, write and delete objects in a public-read-write bucket, read a
  // published warehouse's table bucket.
  Result<bool> PublicAllows(const std::string& bucket, const std::string& key, Access access,
                            bool signed_caller);
  Result<void> CheckWarehouseLayout(const storage::S3Identity& id, const std::string& bucket,
                                    const std::string& key);
  std::optional<CompletedUpload> RepeatedComplete(const std::string& bucket, const std::string& key,
                                                  const std::vector<RequestedPart>& parts);

  // ---- versioning (versioning.cc)
  std::string NewVersionId();
  // Keeps the current object `current` of `key` as noncurrent version `version_id`.
  Result<void> KeepAsNoncurrent(const std::string& bucket, const std::string& key,
                                const objectstore::ObjectInfo& current,
                                const std::string& version_id);
  // Removes the noncurrent null version of `key`, if there is one.
  Result<void> DropNoncurrentNull(const std::string& bucket, const std::string& key);
  // When `key` has no current object and its newest version is not a delete marker,
  // makes that version current again.
  Result<void> RestoreNewest(const std::string& bucket, const std::string& key);
  // AccessDenied when object lock keeps `version` (stored as `stored_key`) from deletion.
  Result<void> CheckDeletable(const storage::S3Identity& id, const std::string& bucket,
                              const objectstore::ObjectInfo& version, bool bypass);
  // Whether `id` may bypass GOVERNANCE retention in `bucket`: its owner.
  Result<bool> MayBypassGovernance(const storage::S3Identity& id, const std::string& bucket);

  objectstore::RegisteredStore& store_;
  storage::IdentityResolver& identities_;
  SystemRandom random_;
};

}  // namespace tablemere::s3
