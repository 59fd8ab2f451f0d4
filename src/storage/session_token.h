// Vended storage sessions: an access key id, a secret and a session token scoped to one
// prefix of one bucket, with an expiry. Stateless to verify: the token is sealed with
// AES-256-GCM under a server key, and the secret is an HMAC of the token under a second
// server key, so a token reveals nothing and cannot be altered or re-scoped.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/key_ring.h"
#include "common/result.h"

namespace tablemere::storage {

struct SessionGrant {
  std::string warehouse_id;
  std::string bucket;
  std::string prefix;  // key prefix the session may touch, e.g. "ns/table/"
  bool read_only = false;
  int64_t expires_ms = 0;
  int64_t generation = 0;  // the warehouse credential generation it was issued under
  std::string format;      // "" for an Iceberg table; a generic table's format otherwise
};

struct IssuedSession {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  int64_t expires_ms = 0;
};

class SessionSealer {
 public:
  explicit SessionSealer(const KeyRing& keys);

  IssuedSession Issue(const SessionGrant& grant, Random& random) const;
  // Opens a token presented with `access_key_id`. Errors (kUnauthenticated, detail s3_code):
  // InvalidToken (tampered, wrong key id, foreign), ExpiredToken.
  Result<SessionGrant> Open(const std::string& access_key_id, const std::string& token,
                            int64_t now_ms) const;
  std::string SecretFor(const std::string& token) const;
  // Whether an access key id has the shape of a vended session's.
  static bool IsSessionKeyId(const std::string& access_key_id);

 private:
  std::string AccessKeyFor(const std::string& token) const;
  std::string seal_key_;
  std::string secret_key_;
  std::string key_id_key_;
};

}  // namespace tablemere::storage
