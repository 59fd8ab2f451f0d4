#include "common/result.h"

namespace tablemere {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidInput:
      return "invalid_input";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kAlreadyExists:
      return "already_exists";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kUnauthenticated:
      return "unauthenticated";
    case ErrorCode::kPermissionDenied:
      return "permission_denied";
    case ErrorCode::kQuotaExceeded:
      return "quota_exceeded";
    case ErrorCode::kRateLimited:
      return "rate_limited";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kNotImplemented:
      return "not_implemented";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

}  // namespace tablemere
