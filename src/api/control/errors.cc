// The control API's one error mapping: an Error's code (and the wire code in its detail)
// → HTTP status and the envelope {"error": {code, message, request_id, …}}.
#include "api/control/routes.h"
#include "common/strings.h"

namespace tablemere::api::control {
namespace {

int StatusOf(const Error& e) {
  // Wire codes whose status the reference fixes beyond the ErrorCode's default.
  const std::string code = e.Detail("code");
  if (!e.Detail("http_status").empty()) {
    if (auto n = ParseInt(e.Detail("http_status"))) return static_cast<int>(*n);
  }
  if (code == "storage_error" || code == "mail_error" || code == "catalog_error") return 502;
  if (code == "code_expired" || code == "token_expired" || code == "invitation_expired") return 410;
  switch (e.code) {
    case ErrorCode::kInvalidInput:
      return 400;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kConflict:
    case ErrorCode::kQuotaExceeded:
      return 409;
    case ErrorCode::kRateLimited:
      return 429;
    case ErrorCode::kNotImplemented:
      return 501;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

std::string DefaultCode(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidInput:
      return "invalid_value";
    case ErrorCode::kUnauthenticated:
      return "unauthorized";
    case ErrorCode::kPermissionDenied:
      return "forbidden";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kAlreadyExists:
      return "already_exists";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kQuotaExceeded:
      return "quota_exceeded";
    case ErrorCode::kRateLimited:
      return "rate_limited";
    case ErrorCode::kNotImplemented:
      return "not_implemented";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

// Detail keys that are lists on the wire (comma-joined in the Error).
bool IsList(const std::string& key) {
  return key == "available" || key == "candidates" || key == "can_grant";
}
// Detail keys that are numbers on the wire.
bool IsNumber(const std::string& key) {
  return key == "limit" || key == "current" || key == "limit_value" ||
         key == "retry_after_seconds" || key == "attempts_left" || key == "catalog_status" ||
         key == "interval";
}
// Detail keys for this process only, never sent.
bool IsInternal(const std::string& key) {
  return key == "code" || key == "http_status" || key == "conflict" || key == "missing" ||
         key == "store_failure" || key == "existing_kind";
}

}  // namespace

Response ErrorResponse(const Request& req, const Error& e) {
  int status = StatusOf(e);
  Json err = {{"code", e.Detail("code").empty() ? DefaultCode(e.code) : e.Detail("code")},
              {"message", status == 500 ? "internal error" : e.message},
              {"request_id", req.request_id}};
  for (const auto& [k, v] : e.detail) {
    if (IsInternal(k)) continue;
    if (IsList(k)) {
      err[k] = v.empty() ? Json::array() : Json(Split(v, ','));
    } else if (auto n = ParseInt(v); IsNumber(k) && n) {
      err[k] = *n;
    } else {
      err[k] = v;
    }
  }
  Response r = Response::Json(status, Json{{"error", err}}.dump());
  if (status == 429 && !e.Detail("retry_after_seconds").empty()) {
    r.headers.Set("Retry-After", e.Detail("retry_after_seconds"));
  }
  return r;
}

Json TimeOrNull(int64_t ms) { return ms == 0 ? Json(nullptr) : Json(FormatIso8601(ms)); }

}  // namespace tablemere::api::control
