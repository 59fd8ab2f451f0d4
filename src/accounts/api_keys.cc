// ApiKeyService: minting keys, the caller's own API keys (POST/GET/DELETE /v1/api-keys)
// and the operator's revocation.
#include <algorithm>

#include "accounts/api_key_service.h"
#include "accounts/credentials.h"
#include "common/crypto.h"

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

// The secret's random bytes: 192 bits.
constexpr size_t kApiSecretBytes = 24;

}  // namespace

IssuedApiKey ApiKeyService::Mint(const PrincipalId& principal, const std::string& label) {
  IssuedApiKey issued;
  std::string key_id = crypto::HexEncode(random_.Bytes(8));
  std::string secret = crypto::Base64UrlEncode(random_.Bytes(kApiSecretBytes));
  // '_' separates the parts of the key; keep it out of the secret.
  std::replace(secret.begin(), secret.end(), '_', 'x');
  issued.record =
      metastore::ApiKey{key_id, principal, HashApiSecret(secret), clock_.NowMillis(), false};
  issued.record.label = label;
  issued.api_key = "al_live_" + key_id + "_" + secret;
  return issued;
}

Result<IssuedApiKey> ApiKeyService::Create(const Caller& caller, const std::string& label,
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
  IssuedApiKey issued = Mint(caller.principal.id, label);
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_TRY(txn.principals().CreateApiKey(issued.record));
    return audit_.RecordIn(
        txn,
        metastore::AuditEvent{0, 0, caller.principal.id, caller.principal.org_id, "api_key.create",
                              "api_key", issued.record.key_id, request_id, "{}"});
  }));
  return issued;
}

Result<std::vector<metastore::ApiKey>> ApiKeyService::List(const Caller& caller) {
  return meta_.principals().ApiKeysOf(caller.principal.id);
}

Result<metastore::ApiKey> ApiKeyService::Revoke(const Caller& caller, const std::string& key_id,
                                                const std::string& request_id) {
  auto revoked = metastore::InTransaction(
      meta_, [&](metastore::WriteTransaction& txn) -> Result<metastore::ApiKey> {
        TM_ASSIGN(auto key,
                  txn.principals().RevokeApiKey(caller.principal.id, key_id, clock_.NowMillis()));
        TM_TRY(audit_.RecordIn(
            txn, metastore::AuditEvent{0, 0, caller.principal.id, caller.principal.org_id,
                                       "api_key.revoke", "api_key", key_id, request_id, "{}"}));
        return key;
      });
  if (!revoked && revoked.error().code == ErrorCode::kNotFound) return Fail(KeyNotFound(key_id));
  return revoked;
}

Result<metastore::ApiKey> ApiKeyService::RevokeAny(const std::string& key_id,
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
        TM_TRY(audit_.RecordIn(txn, metastore::AuditEvent{0, 0, "operator", "", "api_key.revoke",
                                                          "api_key", key_id, request_id, "{}"}));
        return revoked;
      });
}

}  // namespace tablemere::accounts
