// Errors of S3 semantics: each names the S3 code it is answered with (detail "s3_code").
// The adapter (api/s3/errors.cc) turns them, and the object store's typed reasons, into
// S3's status codes and XML in one place.
#pragma once

#include <string>

#include "common/result.h"

namespace tablemere::s3 {

// The detail of an error about a delete marker (a GET of a key whose newest version is
// one, or of the marker itself): the marker's version id.
inline constexpr char kDeleteMarkerDetail[] = "delete_marker";

inline Error S3Error(ErrorCode code, const std::string& s3_code, const std::string& message) {
  return Error{code, message, {}}.With("s3_code", s3_code);
}
inline Error AccessDenied(const std::string& message = "Access Denied") {
  return S3Error(ErrorCode::kPermissionDenied, "AccessDenied", message);
}
inline Error PreconditionFailed(
    const std::string& message = "At least one of the pre-conditions you specified did not hold") {
  return S3Error(ErrorCode::kConflict, "PreconditionFailed", message);
}
inline Error InvalidArgument(const std::string& message) {
  return S3Error(ErrorCode::kInvalidInput, "InvalidArgument", message);
}
inline Error InvalidRequest(const std::string& message) {
  return S3Error(ErrorCode::kInvalidInput, "InvalidRequest", message);
}
inline Error MalformedXml() {
  return S3Error(ErrorCode::kInvalidInput, "MalformedXML",
                 "The XML you provided was not well-formed or did not validate against our "
                 "published schema.");
}

}  // namespace tablemere::s3
