// The one place an Error becomes S3's HTTP status and error code.
#pragma once

#include <string>

#include "common/result.h"
#include "http/message.h"

namespace tablemere::api::s3 {

// The HTTP status for `e`; `*code` receives its S3 error code. Errors of S3 semantics
// name their code (detail s3_code); the object store's typed reasons and the generic
// ErrorCodes are mapped here.
int StatusFor(const Error& e, std::string* code);
// The headers an error answer carries beside its body: a delete marker's
// (x-amz-delete-marker and its version id), and the methods a 405 allows.
void AddErrorHeaders(const Error& e, int status, http::Headers& headers);

}  // namespace tablemere::api::s3
