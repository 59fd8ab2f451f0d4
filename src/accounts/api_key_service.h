// API keys (api_keys.cc): minting a key (the secret shown once, only its hash kept), a
// caller's own keys (POST/GET/DELETE /v1/api-keys) and the operator's revocation.
#pragma once

#include <string>
#include <vector>

#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

struct IssuedApiKey {
  std::string api_key;  // shown once
  metastore::ApiKey record;
};

class ApiKeyService {
 public:
  ApiKeyService(metastore::Metastore& meta, const Clock& clock, Random& random,
                AuditRecorder& audit)
      : meta_(meta), clock_(clock), random_(random), audit_(audit) {}

  // A new key for `principal`, not yet stored (the caller stores it in its transaction).
  IssuedApiKey Mint(const PrincipalId& principal, const std::string& label = "");

  // Errors: kInvalidInput (field label), kNotFound (code api_key_not_found: not one of
  // the caller's keys).
  Result<IssuedApiKey> Create(const Caller& caller, const std::string& label,
                              const std::string& request_id);
  Result<std::vector<metastore::ApiKey>> List(const Caller& caller);
  Result<metastore::ApiKey> Revoke(const Caller& caller, const std::string& key_id,
                                   const std::string& request_id);
  // The operator's (internal route): any principal's key. Errors: kNotFound.
  Result<metastore::ApiKey> RevokeAny(const std::string& key_id, const std::string& request_id);

 private:
  metastore::Metastore& meta_;
  const Clock& clock_;
  Random& random_;
  AuditRecorder& audit_;
};

}  // namespace tablemere::accounts
