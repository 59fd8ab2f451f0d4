// Who may do what in the object store: the identities the S3 listener accepts, and the
// rules for warehouse buckets (table buckets take only Iceberg's file layout).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace tablemere::storage {

struct S3Identity {
  // kAnonymous: an unsigned request; it may only read what is public.
  enum class Kind { kOperator, kWarehouse, kSession, kAnonymous };
  Kind kind = Kind::kOperator;
  std::string access_key;
  std::string secret;        // the signing secret (never logged)
  std::string warehouse_id;  // warehouse and session identities
  std::string prefix;        // session: the only key prefix it may touch
  bool read_only = false;
  std::string format;  // session: a generic table's format ("" for Iceberg)
};

// A generic (non-Iceberg) table's base location inside a table bucket.
struct GenericLocation {
  std::string prefix;  // key prefix, ending in '/'
  std::string format;  // "lance" | "delta" | "csv" | "parquet"
};

// Resolves an access key (and session token, when one was sent) to an identity.
// Errors (detail s3_code): InvalidAccessKeyId, InvalidToken, ExpiredToken.
struct WarehouseBucketState {
  bool published = false;  // the table bucket only
  bool read_only = false;
};

class IdentityResolver {
 public:
  virtual ~IdentityResolver() = default;
  virtual Result<S3Identity> Resolve(const std::string& access_key,
                                     const std::string& session_token) = 0;
  // The operator user that created `bucket`, or "" when none did. Thread-safe.
  virtual Result<std::string> OperatorBucketOwner(const std::string& bucket) = 0;
  virtual Result<void> RecordOperatorBucket(const std::string& bucket, const std::string& owner,
                                            bool created) = 0;
  // The state of a warehouse's table or blob bucket ({} for other buckets): published
  // (anyone may read and list its table bucket unsigned) and read-only (over quota:
  // writes refused, deletes allowed). Thread-safe.
  virtual Result<WarehouseBucketState> WarehouseBucket(const std::string& bucket) = 0;
  // The generic tables' base locations in a warehouse's table bucket (may be cached
  // briefly). Thread-safe.
  virtual Result<std::vector<GenericLocation>> GenericLocations(
      const std::string& warehouse_id) = 0;
};

std::string TableBucketName(const std::string& warehouse_id);  // "w-<id>"
std::string BlobBucketName(const std::string& warehouse_id);   // "b-<id>"
// The warehouse id of a "w-…" or "b-…" bucket name, or "".
std::string WarehouseOfBucket(const std::string& bucket);
bool IsTableBucket(const std::string& bucket);

// Whether a key may be written to a table bucket: Iceberg's layout
// "<namespace…>/<table>/(data|metadata)/…" with Iceberg file types, or a directory
// marker ending in "/". Returns an error (detail s3_code InvalidArgument) whose message
// names the blob bucket otherwise.
Result<void> CheckTableBucketKey(const std::string& key, const std::string& blob_bucket);

// The generic-table formats whose files the table bucket accepts.
bool IsSupportedGenericFormat(const std::string& format);
// Whether `relative_key` (below a generic table's base location) is a file of `format`:
// Lance (*.lance, _versions/, _transactions/, _indices/, _deletions/, _refs/), Delta
// (_delta_log/, *.parquet, _change_data/, deletion vectors), CSV, Parquet; directory
// markers always. Error as CheckTableBucketKey's.
Result<void> CheckGenericTableKey(const std::string& relative_key, const std::string& format,
                                  const std::string& blob_bucket);
// A write anywhere in a table bucket: generic-table rules inside a generic table's base
// location, Iceberg's layout elsewhere.
Result<void> CheckWarehouseKey(const std::string& key, const std::string& blob_bucket,
                               const std::vector<GenericLocation>& generic);

}  // namespace tablemere::storage
