#include "api/iceberg/error_model.h"

#include <nlohmann/json.hpp>

namespace tablemere::api::iceberg {

ErrorType MapError(const Error& e, Subject subject) {
  std::string explicit_type = e.Detail("iceberg_type");
  std::string missing = e.Detail("missing");
  // The route binder's own answers: no such route, or not with this method.
  std::string code = e.Detail("code");
  if (code == "route_not_found") return {404, "NotFoundException"};
  if (code == "method_not_allowed") return {405, "MethodNotAllowedException"};
  switch (e.code) {
    case ErrorCode::kNotFound:
      if (missing == "namespace" || subject == Subject::kNamespace) {
        return {404, "NoSuchNamespaceException"};
      }
      if (missing == "plan") return {404, "NoSuchPlanIdException"};
      if (missing == "plan-task") return {404, "NoSuchPlanTaskException"};
      if (missing == "view" || subject == Subject::kView) return {404, "NoSuchViewException"};
      if (missing == "generic" || subject == Subject::kGenericTable) {
        return {404, "NoSuchGenericTableException"};
      }
      return {404, "NoSuchTableException"};
    case ErrorCode::kAlreadyExists:
      return {409, "AlreadyExistsException"};
    case ErrorCode::kConflict:
      if (explicit_type == "ProtectedException") return {409, "ProtectedException"};
      if (subject == Subject::kNamespace) return {409, "NamespaceNotEmptyException"};
      if (subject == Subject::kGenericTable) return {409, "ConflictException"};
      return {409, "CommitFailedException"};
    case ErrorCode::kInvalidInput:
      if (explicit_type == "UnprocessableEntityException")
        return {422, "UnprocessableEntityException"};
      if (explicit_type == "IllegalArgumentException") return {400, "IllegalArgumentException"};
      return {400, "BadRequestException"};
    case ErrorCode::kUnauthenticated:
      return {401, "NotAuthorizedException"};
    case ErrorCode::kPermissionDenied:
      return {403, "ForbiddenException"};
    case ErrorCode::kNotImplemented:
      return {406, "UnsupportedOperationException"};
    case ErrorCode::kUnavailable:
      return {503, "ServiceUnavailableException"};
    case ErrorCode::kQuotaExceeded:
      return {403, "ForbiddenException"};
    case ErrorCode::kRateLimited:
      return {429, "TooManyRequestsException"};
    case ErrorCode::kInternal:
      return {500, "InternalServerError"};
  }
  return {500, "InternalServerError"};
}

http::Response ErrorModelResponse(int status, const std::string& type, const std::string& message) {
  nlohmann::json body = {{"error", {{"message", message}, {"type", type}, {"code", status}}}};
  return http::Response::Json(status, body.dump());
}

http::Response ErrorModelResponse(const Error& e, Subject subject) {
  ErrorType t = MapError(e, subject);
  return ErrorModelResponse(t.status, t.type, t.status == 500 ? "internal error" : e.message);
}

}  // namespace tablemere::api::iceberg
