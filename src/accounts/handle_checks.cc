// SignupService: the handle check of the signup forms (GET /v1/handles/{handle}).
#include "accounts/errors.h"
#include "accounts/handles.h"
#include "accounts/input_checks.h"
#include "accounts/signup_service.h"
#include "accounts/terms_service.h"

namespace tablemere::accounts {

Result<HandleAvailability> SignupService::CheckHandleFrom(const std::string& handle,
                                                          const std::string& address) {
  // A form checks as a person types: 60 a minute per address is far above typing speed
  // and bounds the suggestion lookups one address can cause.
  constexpr int kChecksPerMinute = 60;
  constexpr int64_t kMinuteMs = 60 * 1000;
  TM_ASSIGN(auto decision, meta_.verification().TakeRate("handles:" + address, kChecksPerMinute,
                                                         kMinuteMs, clock_.NowMillis()));
  if (!decision.allowed) {
    return Fail(
        Error{ErrorCode::kRateLimited, "Too many handle checks from your address", {}}
            .With("code", "rate_limited")
            .With("retry_after_seconds", std::to_string((decision.retry_after_ms + 999) / 1000)));
  }
  return CheckHandleAvailable(handle);
}

Result<HandleAvailability> SignupService::CheckHandleAvailable(const std::string& handle) {
  HandleAvailability out;
  out.handle = handle;
  HandleProblem problem = CheckHandle(handle);
  out.valid = problem == HandleProblem::kNone;
  out.reason = HandleProblemName(problem);
  if (out.valid) {
    TM_ASSIGN(bool taken, meta_.orgs().HandleTaken(handle));
    out.available = !taken;
    if (taken) out.reason = "taken";
  }
  if (!out.available) {
    // A failed lookup counts as taken: a suggestion must be free when it is made.
    out.suggestion = SuggestHandle(handle, [this](const std::string& h) {
      auto taken = meta_.orgs().HandleTaken(h);
      return !taken || *taken;
    });
  }
  return out;
}

}  // namespace tablemere::accounts
