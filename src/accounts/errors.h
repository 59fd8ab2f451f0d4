// The errors the account use cases answer with their wire codes (errors.cc).
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace tablemere::accounts {

// An error with the wire code the API reference names (detail "code").
Error Coded(ErrorCode code, const std::string& wire, const std::string& message);
// 429 rate_limited with retry_after_seconds (rounded up).
Error RateLimited(int64_t retry_after_ms, const std::string& why);
// The 403 of an organisation route that only admins may call.
Error AdminOnly(const std::string& what);
// The 404 for an organisation the caller does not belong to (or that does not exist).
Error OrgNotFound(const std::string& org);

}  // namespace tablemere::accounts
