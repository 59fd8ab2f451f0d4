// The Iceberg REST error envelope, {"error": {"message", "type", "code"}}, shared by the
// Iceberg REST adapter and the Lakekeeper generic-table adapter (which uses the same
// IcebergErrorResponse shape).
#pragma once

#include <string>

#include "common/result.h"
#include "http/message.h"

namespace tablemere::api::iceberg {

// What a NotFound or Conflict means depends on the route's subject.
enum class Subject { kNamespace, kTable, kView, kGenericTable, kOther };

struct ErrorType {
  int status;
  const char* type;
};

ErrorType MapError(const Error& e, Subject subject);
http::Response ErrorModelResponse(int status, const std::string& type, const std::string& message);
http::Response ErrorModelResponse(const Error& e, Subject subject);

}  // namespace tablemere::api::iceberg
