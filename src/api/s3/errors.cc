#include "api/s3/errors.h"

#include <map>

#include "objectstore/object_store.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {

int StatusFor(const Error& e, std::string* code) {
  static const std::map<std::string, int> kStatus = {
      {"NoSuchBucket", 404},
      {"NoSuchKey", 404},
      {"NoSuchUpload", 404},
      {"NoSuchTagSet", 404},
      {"NoSuchCORSConfiguration", 404},
      {"NoSuchPublicAccessBlockConfiguration", 404},
      {"NoSuchVersion", 404},
      {"InvalidBucketState", 409},
      {"ObjectLockConfigurationNotFoundError", 404},
      {"NoSuchObjectLockConfiguration", 404},
      {"InvalidRetentionPeriod", 400},
      {"MethodNotAllowed", 405},
      {"InvalidLocationConstraint", 400},
      {"MalformedPOSTRequest", 400},
      {"InvalidPolicyDocument", 400},
      {"InvalidTag", 400},
      {"MissingSecurityHeader", 400},
      {"AccessDenied", 403},
      {"SignatureDoesNotMatch", 403},
      {"InvalidAccessKeyId", 403},
      {"InvalidToken", 400},
      {"ExpiredToken", 400},
      {"RequestTimeTooSkewed", 403},
      {"BucketAlreadyOwnedByYou", 409},
      {"BucketAlreadyExists", 409},
      {"BucketNotEmpty", 409},
      {"InvalidPart", 400},
      {"InvalidPartOrder", 400},
      {"EntityTooSmall", 400},
      {"EntityTooLarge", 400},
      {"InvalidRange", 416},
      {"InvalidPartNumber", 416},
      {"PreconditionFailed", 412},
      {"BadDigest", 400},
      {"XAmzContentSHA256Mismatch", 400},
      {"IncompleteBody", 400},
      {"InvalidArgument", 400},
      {"InvalidRequest", 400},
      {"MalformedXML", 400},
      {"NotImplemented", 501},
      {"MethodNotAllowed", 405},
      {"InvalidBucketName", 400},
      {"AuthorizationHeaderMalformed", 400},
      {"AuthorizationQueryParametersError", 400},
      {"MissingContentLength", 411},
      {"InvalidDigest", 400},
      {"InternalError", 500},
      {"ServiceUnavailable", 503},
      {"TooManyBuckets", 400},
      {"KeyTooLongError", 400},
      {"InvalidObjectState", 403},
  };
  if (auto reason = objectstore::FailureOf(e)) {
    using objectstore::StoreFailure;
    switch (*reason) {
      case StoreFailure::kNoSuchBucket:
        *code = "NoSuchBucket";
        return 404;
      case StoreFailure::kNoSuchKey:
        *code = "NoSuchKey";
        return 404;
      case StoreFailure::kNoSuchUpload:
        *code = "NoSuchUpload";
        return 404;
      case StoreFailure::kBucketExists:
        *code = "BucketAlreadyOwnedByYou";
        return 409;
      case StoreFailure::kBucketNotEmpty:
        *code = "BucketNotEmpty";
        return 409;
      case StoreFailure::kInvalidPart:
        *code = "InvalidPart";
        return 400;
      case StoreFailure::kPreconditionFailed:
        *code = "PreconditionFailed";
        return 412;
    }
  }
  // The object store behind us is unreachable or refused: a client should back off and
  // retry, which S3 clients do on SlowDown (with the Retry-After the adapter adds).
  if (!e.Detail("backend").empty()) {
    *code = "SlowDown";
    return 503;
  }
  std::string s3_code = e.Detail("s3_code");
  if (!s3_code.empty()) {
    auto it = kStatus.find(s3_code);
    *code = s3_code;
    return it == kStatus.end() ? 400 : it->second;
  }
  switch (e.code) {
    case ErrorCode::kNotFound:
      *code = "NoSuchKey";
      return 404;
    case ErrorCode::kPermissionDenied:
    case ErrorCode::kUnauthenticated:
      *code = "AccessDenied";
      return 403;
    case ErrorCode::kInvalidInput:
      *code = "InvalidArgument";
      return 400;
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kConflict:
      *code = "OperationAborted";
      return 409;
    case ErrorCode::kNotImplemented:
      *code = "NotImplemented";
      return 501;
    case ErrorCode::kUnavailable:
      *code = "ServiceUnavailable";
      return 503;
    case ErrorCode::kQuotaExceeded:
      *code = "QuotaExceeded";
      return 403;
    case ErrorCode::kRateLimited:
      *code = "SlowDown";
      return 503;
    case ErrorCode::kInternal:
      *code = "InternalError";
      return 500;
  }
  *code = "InternalError";
  return 500;
}

void AddErrorHeaders(const Error& e, int status, http::Headers& headers) {
  const std::string marker = e.Detail(tablemere::s3::kDeleteMarkerDetail);
  if (marker.empty()) return;
  headers.Set("x-amz-delete-marker", "true");
  headers.Set("x-amz-version-id", marker);
  if (status == 405) headers.Set("Allow", "DELETE");
}

}  // namespace tablemere::api::s3
