// Secrets the server derives instead of storing: the warehouse identities' client
// secrets (which double as static S3 keys), and API-key hashing. Derivation from the
// key ring plus the warehouse's credential generation means nothing secret is stored,
// and rotation (a new generation) retires every old secret at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/key_ring.h"
#include "common/result.h"

namespace tablemere::accounts {

struct WarehouseIdentity {
  std::string warehouse_id;
  bool read_only = false;
};

// "t-<id>" / "t-<id>-ro" → the identity; nullopt for anything else.
std::optional<WarehouseIdentity> ParseIdentityName(const std::string& name);
std::string IdentityName(const std::string& warehouse_id, bool read_only);

class IdentitySecrets {
 public:
  explicit IdentitySecrets(const KeyRing& keys) : key_(keys.Derive("warehouse-identity")) {}
  std::string SecretFor(const std::string& identity_name, int64_t generation) const;

 private:
  std::string key_;
};

// API keys: "al_live_<key id>_<secret>". Only SHA-256(secret) is stored.
struct ParsedApiKey {
  std::string key_id;
  std::string secret;
};
std::optional<ParsedApiKey> ParseApiKey(const std::string& text);
std::string HashApiSecret(const std::string& secret);

}  // namespace tablemere::accounts
