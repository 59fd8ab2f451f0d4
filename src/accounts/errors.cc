// The errors the account use cases share.
#include "accounts/errors.h"

#include <string>

namespace tablemere::accounts {

Error Coded(ErrorCode code, const std::string& wire, const std::string& message) {
  return Error{code, message, {}}.With("code", wire);
}

Error RateLimited(int64_t retry_after_ms, const std::string& why) {
  return Coded(ErrorCode::kRateLimited, "rate_limited", why)
      .With("retry_after_seconds", std::to_string((retry_after_ms + 999) / 1000));
}

Error OrgNotFound(const std::string& org) {
  return Error{ErrorCode::kNotFound, "No organisation '" + org + "' among yours", {}}
      .With("code", "org_not_found")
      .With("field", "org_id")
      .With("remedy", "Pass an org_id or a handle; tablemere org list (GET /v1/orgs) lists yours.");
}

Error AdminOnly(const std::string& what) {
  return Error{ErrorCode::kPermissionDenied, "Only an admin of the organisation " + what, {}}
      .With("code", "insufficient_role")
      .With("remedy", "Ask an admin (tablemere org members lists them).");
}

}  // namespace tablemere::accounts
