// AccountService: the caller's own API keys (POST/GET/DELETE /v1/api-keys) and the
// handle check of the signup forms (GET /v1/handles/{handle}).
#include "accounts/account_service.h"
#include "accounts/handles.h"
#include "common/strings.h"

namespace tablemere::accounts {
namespace {

// A label is a name a person reads in a list; longer text is a mistake, not a label.
constexpr size_t kMaxLabel = 100;

Error InvalidLabel(const std::string& why) {
  return Error{ErrorCode::kInvalidInput, "label " + why, {}}
      .With("code", "invalid_value")
      .With("field", "label");
}

Error KeyNotFound(const std::string& key_id) {
  return Error{ErrorCode::kNotFound, "No API key " + key_id + " among yours", {}}
      .With("code", "api_key_not_found")
      .With("remedy", "tablemere api-key list shows your keys by key_id");
}

}  // namespace

Result<IssuedApiKey> AccountService::CreateApiKey(const Caller& caller, const std::string& label,
                                                  const std::string& request_id) {
  // ---- validate
  if (label.size() > kMaxLabel) {
    return Fail(InvalidLabel("is longer than 100 characters"));
  }
  for (unsigned char c : label) {
    if (c < 0x20 || c == 0x7f) {
      return Fail(InvalidLabel("contains a control character"));
    }
  }
  // ---- apply
  IssuedApiKey issued;
  issued.api_key = NewApiKey(caller.principal.id, &issued.record);
  issued.record.label = label;
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_TRY(txn.principals().CreateApiKey(issued.record));
    return RecordIn(txn, metastore::AuditEvent{0, 0, caller.principal.id, caller.principal.org_id,
                                               "api_key.create", "api_key", issued.record.key_id,
                                               request_id, "{}"});
  }));
  return issued;
}

Result<std::vector<metastore::ApiKey>> AccountService::ApiKeys(const Caller& caller) {
  return meta_.principals().ApiKeysOf(caller.principal.id);
}

Result<metastore::ApiKey> AccountService::RevokeApiKey(const Caller& caller,
                                                       const std::string& key_id,
                                                       const std::string& request_id) {
  auto revoked = metastore::InTransaction(
      meta_, [&](metastore::WriteTransaction& txn) -> Result<metastore::ApiKey> {
        TM_ASSIGN(auto key,
                  txn.principals().RevokeApiKey(caller.principal.id, key_id, clock_.NowMillis()));
        TM_TRY(RecordIn(
            txn, metastore::AuditEvent{0, 0, caller.principal.id, caller.principal.org_id,
                                       "api_key.revoke", "api_key", key_id, request_id, "{}"}));
        return key;
      });
  if (!revoked && revoked.error().code == ErrorCode::kNotFound) return Fail(KeyNotFound(key_id));
  return revoked;
}

Result<metastore::Principal> AccountService::SetSuspended(const PrincipalId& principal_id,
                                                          bool suspended,
                                                          const std::string& request_id) {
  return metastore::InTransaction(
      meta_, [&](metastore::WriteTransaction& txn) -> Result<metastore::Principal> {
        auto p = txn.principals().FindPrincipal(principal_id);
        if (!p) {
          if (p.error().code != ErrorCode::kNotFound) return Fail(p.error());
          return Fail(Error{ErrorCode::kNotFound, "No principal " + principal_id.str(), {}}.With(
              "code", "principal_not_found"));
        }
        p->suspended = suspended;
        TM_TRY(txn.principals().UpdatePrincipal(*p));
        TM_TRY(RecordIn(
            txn, metastore::AuditEvent{0, 0, "operator", p->org_id,
                                       suspended ? "principal.suspend" : "principal.unsuspend",
                                       "principal", p->id, request_id, "{}"}));
        return *p;
      });
}

Result<metastore::ApiKey> AccountService::RevokeAnyKey(const std::string& key_id,
                                                       const std::string& request_id) {
  auto key = meta_.principals().FindApiKey(key_id);
  if (!key) {
    if (key.error().code == ErrorCode::kNotFound) return Fail(KeyNotFound(key_id));
    return Fail(key.error());
  }
  return metastore::InTransaction(
      meta_, [&](metastore::WriteTransaction& txn) -> Result<metastore::ApiKey> {
        TM_ASSIGN(auto revoked,
                  txn.principals().RevokeApiKey(key->principal_id, key_id, clock_.NowMillis()));
        TM_TRY(RecordIn(txn, metastore::AuditEvent{0, 0, "operator", "", "api_key.revoke",
                                                   "api_key", key_id, request_id, "{}"}));
        return revoked;
      });
}

Result<HandleAvailability> AccountService::CheckHandleFrom(const std::string& handle,
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

Result<HandleAvailability> AccountService::CheckHandleAvailable(const std::string& handle) {
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
