// The S3 service: what an S3 request may do and what it means, between the wire adapter
// (api/s3, which parses and renders) and the object store (which keeps bytes). It decides
// identity × bucket × key authorisation, bucket ownership, session-scoped listing, the
// table buckets' key layout, write preconditions and the multipart rules. No HTTP here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

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
                            const std::string& acl, const std::string& location, bool us_east_1);
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

  objectstore::RegisteredStore& store_;
  storage::IdentityResolver& identities_;
};

}  // namespace tablemere::s3
