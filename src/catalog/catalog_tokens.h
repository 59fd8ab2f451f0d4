// Catalog bearer tokens: HS256 JWTs minted at /v1/oauth/tokens from a warehouse
// identity's client credentials (or by token exchange), 900 s by default. They carry
// the credential generation, so rotating a warehouse retires its tokens at once.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

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
  // A caller without a token reading a published warehouse: read-only, and vended no
  // storage credentials (its table bucket is readable unsigned).
  bool anonymous = false;
  // The warehouse is read-only over its organisation's storage quota (set per request
  // from the warehouse row): writes are refused and vended sessions are read-only; drops
  // stay allowed so space can be freed.
  bool over_quota = false;
};

class CatalogTokens {
 public:
  CatalogTokens(const KeyRing& keys, const Clock& clock, int64_t lifetime_seconds)
      : key_(keys.Derive("catalog-token")), clock_(clock), lifetime_seconds_(lifetime_seconds) {}

  std::string Mint(const CatalogPrincipal& principal, int64_t* expires_in) const;
  // Verifies signature and expiry (generation is checked by the caller against the
  // warehouse). Errors: kUnauthenticated. Thread-safe.
  Result<CatalogPrincipal> Verify(const std::string& token) const;
  int64_t lifetime_seconds() const { return lifetime_seconds_; }

 private:
  // Signature and claims, without the expiry.
  Result<CatalogPrincipal> Open(const std::string& token) const;

  // Tokens opened before, remembered so an engine's every request does not redo the
  // HMAC and the claims parse: a token's claims never change, and its expiry is still
  // checked on every use. About one per client holding a token; past it the cache is
  // emptied (~0.5 MB at most), which costs one re-verification per client.
  static constexpr size_t kMaxVerifiedTokens = 1024;

  std::string key_;
  const Clock& clock_;
  int64_t lifetime_seconds_;

  // State below is protected by mu_; a cache, so Verify stays logically const.
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, CatalogPrincipal> verified_;
};

}  // namespace tablemere::catalog
