// Catalog bearer tokens: HS256 JWTs minted at /v1/oauth/tokens from a warehouse
// identity's client credentials (or by token exchange), 900 s by default. They carry
// the credential generation, so rotating a warehouse retires its tokens at once.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/key_ring.h"
#include "common/result.h"

namespace tablemere::catalog {

struct CatalogPrincipal {
  std::string identity;  // t-<id> or t-<id>-ro
  std::string warehouse_id;
  bool read_only = false;
  int64_t generation = 0;
  int64_t expires_ms = 0;
};

class CatalogTokens {
 public:
  CatalogTokens(const KeyRing& keys, const Clock& clock, int64_t lifetime_seconds)
      : key_(keys.Derive("catalog-token")), clock_(clock), lifetime_seconds_(lifetime_seconds) {}

  std::string Mint(const CatalogPrincipal& principal, int64_t* expires_in) const;
  // Verifies signature and expiry (generation is checked by the caller against the
  // warehouse). Errors: kUnauthenticated.
  Result<CatalogPrincipal> Verify(const std::string& token) const;
  int64_t lifetime_seconds() const { return lifetime_seconds_; }

 private:
  std::string key_;
  const Clock& clock_;
  int64_t lifetime_seconds_;
};

}  // namespace tablemere::catalog
