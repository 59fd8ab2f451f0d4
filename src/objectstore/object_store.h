// The object-store interface: bytes, keyed by (bucket, key), with S3's listing order.
// Implemented by the local-disk backend (embedded default) and, for scale-out, by an
// external S3-compatible store. S3 protocol semantics (auth, checksum verification,
// policy) live above this, in src/storage/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/byte_source.h"
#include "common/result.h"

namespace tablemere::objectstore {

// What a put's Commit replaced, as a backend that can tell reports it (see
// ObjectWriter::ReportsReplaced).
struct Replaced {
  bool existed = false;
  uint64_t size = 0;  // the replaced object's, when one existed
};

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  std::string etag;  // unquoted: "<md5 hex>" or "<hex>-<parts>"
  int64_t last_modified_ms = 0;
  // Stored response headers (Content-Type, Content-Encoding, Cache-Control,
  // Content-Disposition, Content-Language, Expires, x-amz-meta-*), wire-cased.
  std::map<std::string, std::string> headers;
  // Flexible checksums: "CRC32" → base64, plus "type" → FULL_OBJECT|COMPOSITE.
  std::map<std::string, std::string> checksums;
  // Sizes of the parts a multipart upload was completed from, in order; empty for an
  // object written in one piece. GetObject?partNumber=N reads part N.
  std::vector<uint64_t> part_sizes;
  // The parts' checksums (base64, of the upload's algorithm), in order, when the upload
  // had one; else empty.
  std::vector<std::string> part_checksums;
  // The object's tags (key → value) and canned ACL ("" is private).
  std::map<std::string, std::string> tags;
  std::string acl;
  // The S3 version id the object was written as in a bucket with versioning ("null" in a
  // suspended one); "" for an object written while its bucket never had versioning. Kept
  // by the store with the object, as its tags are.
  std::string version_id;
  // Object lock (buckets with it): the retention mode, "GOVERNANCE" or "COMPLIANCE" (""
  // for none), the time it holds until, and the legal hold ("" never set, "ON", "OFF").
  std::string lock_mode;
  int64_t lock_until_ms = 0;
  std::string legal_hold;
  // Set only in the answer of a Commit whose writer ReportsReplaced(); never stored.
  std::optional<Replaced> replaced;
};

// A bucket's PublicAccessBlock configuration: S3's four switches. Bucket policies are not
// offered, so the two about policies are kept and reported but have nothing to act on.
struct PublicAccessBlock {
  bool block_public_acls = false;        // refuse setting a public canned ACL
  bool ignore_public_acls = false;       // treat public canned ACLs as private
  bool block_public_policy = false;      // (policies)
  bool restrict_public_buckets = false;  // (policies)
  bool operator==(const PublicAccessBlock&) const = default;
};
// Its encoding in the metastore: four '0'/'1' in the order above; "" for none.
std::string EncodePublicAccessBlock(const std::optional<PublicAccessBlock>& block);
std::optional<PublicAccessBlock> DecodePublicAccessBlock(const std::string& text);

// A bucket's object lock configuration: enabled, with an optional default retention
// (mode and a period of days or years) that new versions get unless they name their own.
struct ObjectLockConfig {
  std::string default_mode;  // "" (no default), "GOVERNANCE" or "COMPLIANCE"
  int days = 0;
  int years = 0;
  bool operator==(const ObjectLockConfig&) const = default;
};
// Its encoding in the metastore: "Enabled", or "Enabled|<mode>|<days>|<years>"; "" none.
std::string EncodeObjectLock(const std::optional<ObjectLockConfig>& config);
std::optional<ObjectLockConfig> DecodeObjectLock(const std::string& text);

struct BucketInfo {
  std::string name;
  int64_t created_ms = 0;
  std::map<std::string, std::string> tags;
  std::string acl;       // canned ACL; "" is private
  std::string cors;      // the bucket's CORS configuration as S3 XML; "" when none
  std::string location;  // the LocationConstraint it was created with; "" is the server's region
  std::optional<PublicAccessBlock> public_access_block;
  std::string versioning;                       // "" (never enabled), "Enabled" or "Suspended"
  std::optional<ObjectLockConfig> object_lock;  // nullopt: the bucket has no object lock
};

// A change to an object's or bucket's attributes; each set field replaces the old value.
struct AttributeChange {
  std::optional<std::map<std::string, std::string>> tags;
  std::optional<std::string> acl;
  std::optional<std::string> cors;  // buckets only
  // Buckets only: set to a configuration, or to none (nullopt inside) to remove it.
  std::optional<std::optional<PublicAccessBlock>> public_access_block;
  std::optional<std::string> versioning;        // buckets only
  std::optional<ObjectLockConfig> object_lock;  // buckets only (never removed)
  // Objects only: the retention (mode and until) and the legal hold.
  std::optional<std::pair<std::string, int64_t>> retention;
  std::optional<std::string> legal_hold;
};

// Applies an object's attribute change (tags, ACL, retention, legal hold) to `info`.
void ApplyObjectChange(const AttributeChange& change, ObjectInfo& info);
// Whether object lock keeps `info` from being deleted at `now_ms`: a legal hold, or a
// retention that has not run out (GOVERNANCE ones can be bypassed by who may).
bool LockedAt(const ObjectInfo& info, int64_t now_ms);

// A readable object body (or range of it).
class ObjectReader : public ByteSource {};

// Bytes being written; nothing is visible to readers until Commit returns.
class ObjectWriter {
 public:
  virtual ~ObjectWriter() = default;
  virtual Result<void> Write(const char* data, size_t size) = 0;
  // Makes the object durable and visible atomically, replacing any previous version.
  // `info.size` and `info.etag` are filled in by the store. Errors: kUnavailable (disk).
  virtual Result<ObjectInfo> Commit(ObjectInfo info) = 0;
  // Discards everything written. Safe to call after a failed Write; implied by destruction
  // without Commit.
  virtual void Abort() = 0;
  virtual uint64_t bytes_written() const = 0;
  // Whether a successful Commit's answer says what the put replaced (ObjectInfo::replaced),
  // so a caller counting usage need not read the key's size beforehand. Known when the
  // writer is handed out; a wrapper answers as the writer it wraps.
  virtual bool ReportsReplaced() const { return false; }
};

// Conditions a put must still meet at the moment it is published (checked atomically
// with the publish, so two conditional writers cannot both win).
struct PutConditions {
  bool if_none_match = false;           // the key must not exist
  std::optional<std::string> if_match;  // the current etag (unquoted) must equal this; "*": exists
};

struct ListOptions {
  std::string prefix;
  std::string delimiter;
  std::string start_after;  // exclusive
  // A marker returned as next_marker by an earlier page. When it is a common prefix,
  // every key under it was already reported and is skipped.
  std::string continuation;
  int max_keys = 1000;
};

struct ListResult {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_marker;  // last key or common prefix returned, when truncated
};

struct UploadInfo {
  std::string upload_id;
  std::string key;
  int64_t initiated_ms = 0;
  ObjectInfo pending;  // headers and checksum settings given at creation
};

struct PartInfo {
  int part_number = 0;
  uint64_t size = 0;
  std::string etag;  // unquoted md5 hex
  int64_t last_modified_ms = 0;
  std::map<std::string, std::string> checksums;
};

// Why a store operation failed, beyond its ErrorCode: a closed set of reasons that each
// protocol adapter maps to its own codes in one place (S3: api/s3/errors.cc). A backend
// never chooses a protocol's error code.
enum class StoreFailure {
  kNoSuchBucket,        // kNotFound
  kNoSuchKey,           // kNotFound
  kNoSuchUpload,        // kNotFound
  kBucketExists,        // kAlreadyExists: the bucket is there already
  kBucketNotEmpty,      // kConflict
  kInvalidPart,         // kConflict: a listed part is not (or no longer) stored
  kPreconditionFailed,  // kConflict: PutConditions no longer hold
};

// An Error carrying `reason` (and the store's message).
Error StoreError(StoreFailure reason, ErrorCode code, std::string message);
// The reason a store call failed, if it failed for one of the reasons above.
std::optional<StoreFailure> FailureOf(const Error& error);

// A backup of a backend that keeps its objects under the server's data directory (local
// disk), in two steps so a metastore snapshot can sit between them: from BeginBackup on,
// the backend defers deleting object bytes; Snapshot copies its index as committed at that
// moment; Finish links (or copies) every blob that copy names into the backup, then lets
// the deferred deletions run. Destroying it unfinished lets them run too.
class ObjectBackup {
 public:
  virtual ~ObjectBackup() = default;
  virtual Result<void> Snapshot() = 0;
  // Returns how many stored objects and upload parts the backup holds.
  virtual Result<int64_t> Finish() = 0;
};

// What a backend implements: the bytes of objects and uploads. Errors used throughout:
// the StoreFailure reasons above; kUnavailable for I/O failures. All methods are
// thread-safe.
class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // ---- bucket spaces. Which buckets exist, and their attributes, is S3 state kept in the
  // metastore (RegisteredStore); a backend keeps only the room its buckets' objects need.
  // Object calls on a bucket that was never opened (or was closed) fail kNoSuchBucket on
  // a backend that keeps bucket state (local disk); one that keeps none (S3) leaves the
  // check to RegisteredStore.

  // Makes room for `bucket`'s objects. Idempotent: an opened bucket stays as it is.
  virtual Result<void> OpenBucket(const std::string& bucket) = 0;
  // Removes `bucket`'s room, and its open uploads, once it holds no object:
  // kBucketNotEmpty while one remains. A bucket never opened, or closed already, is
  // success.
  virtual Result<void> CloseBucket(const std::string& bucket) = 0;
  // The buckets an earlier release registered in the store itself, with their
  // attributes, for the server to import into the metastore once; empty for a backend
  // that never registered any.
  virtual Result<std::vector<BucketInfo>> LegacyBuckets() { return std::vector<BucketInfo>{}; }
  // Starts a backup into the directory `dir` (see ObjectBackup). kNotImplemented for a
  // backend whose objects live in another system (an S3 store: back it up with that
  // store's own tools).
  virtual Result<std::unique_ptr<ObjectBackup>> BeginBackup(const std::string& /*dir*/) {
    return Fail(ErrorCode::kNotImplemented,
                "this object store is backed up with its own tools, not by the server");
  }

  // Commit fails with kPreconditionFailed, or kNoSuchKey for if_match on a missing key,
  // when `conditions` no longer hold. `size`, when the caller knows it (a request's
  // Content-Length), makes the writer take exactly that many bytes (Commit fails
  // kInvalidInput otherwise). With `size` and `headers` (the stored headers Commit's
  // `info` will carry, known before the body) a remote backend streams the body to its
  // store as it arrives, holding back its end until Commit; otherwise it spools the body
  // to local disk first. Either way nothing is visible before Commit returns.
  virtual Result<std::unique_ptr<ObjectWriter>> BeginPut(
      const std::string& bucket, const std::string& key, PutConditions conditions = {},
      std::optional<uint64_t> size = std::nullopt,
      std::optional<std::map<std::string, std::string>> headers = std::nullopt) = 0;
  virtual Result<ObjectInfo> Head(const std::string& bucket, const std::string& key) = 0;
  // Opens [offset, offset+length) of the object; `info` receives its metadata.
  virtual Result<std::unique_ptr<ObjectReader>> Get(const std::string& bucket,
                                                    const std::string& key, uint64_t offset,
                                                    std::optional<uint64_t> length,
                                                    ObjectInfo* info) = 0;
  // Changes tags or ACL of the current object (kNoSuchKey when there is none).
  virtual Result<ObjectInfo> SetObjectAttributes(const std::string& bucket, const std::string& key,
                                                 const AttributeChange& change) = 0;
  // Deleting a missing key succeeds (S3 semantics).
  virtual Result<void> Delete(const std::string& bucket, const std::string& key) = 0;
  virtual Result<ObjectInfo> Copy(const std::string& src_bucket, const std::string& src_key,
                                  const std::string& dst_bucket, const std::string& dst_key,
                                  std::optional<ObjectInfo> replace_metadata) = 0;
  virtual Result<ListResult> List(const std::string& bucket, const ListOptions& options) = 0;

  virtual Result<UploadInfo> CreateUpload(const std::string& bucket, const std::string& key,
                                          ObjectInfo pending) = 0;
  virtual Result<UploadInfo> GetUpload(const std::string& bucket, const std::string& upload_id) = 0;
  // Returns a writer for one part; Commit stores it (replacing an earlier same-numbered part).
  // `size` as for BeginPut.
  virtual Result<std::unique_ptr<ObjectWriter>> BeginPart(
      const std::string& bucket, const std::string& upload_id, int part_number,
      std::optional<uint64_t> size = std::nullopt) = 0;
  virtual Result<std::vector<PartInfo>> ListParts(const std::string& bucket,
                                                  const std::string& upload_id) = 0;
  // Assembles the listed parts (ascending, each present) into the object, atomically;
  // `conditions` are checked against the key's current object in the publishing step, as
  // for a put.
  virtual Result<ObjectInfo> CompleteUpload(const std::string& bucket, const std::string& upload_id,
                                            const std::vector<int>& part_numbers,
                                            ObjectInfo final_info,
                                            PutConditions conditions = {}) = 0;
  virtual Result<void> AbortUpload(const std::string& bucket, const std::string& upload_id) = 0;

  // The longest key (bytes) this store holds in `bucket`: S3's 1024, less whatever prefix
  // a backend adds. The S3 layer refuses longer keys with KeyTooLongError.
  virtual size_t MaxKeyBytes(const std::string& /*bucket*/) const { return 1024; }
  // Whether List returns keys in byte order, as S3 does. A store that keeps keys as file
  // paths (SeaweedFS's filer) lists a folder's keys before siblings that sort below '/'
  // ("a/b" before "a b"); its pages are still consistent and list every key exactly once.
  virtual bool ListsInByteOrder() const { return true; }
  virtual Result<std::vector<UploadInfo>> ListUploads(const std::string& bucket,
                                                      const std::string& prefix) = 0;
};

// `writer`, refusing more than `size` bytes and a Commit short of them (kInvalidInput,
// the writer aborted); `writer` itself when no size was declared. For backends whose
// writers do not check a declared size themselves.
std::unique_ptr<ObjectWriter> HoldToSize(std::unique_ptr<ObjectWriter> writer,
                                         std::optional<uint64_t> size);

}  // namespace tablemere::objectstore
