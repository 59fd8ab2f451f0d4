// RS256 access tokens for the control API (POST /v1/tokens): a signing key generated on
// first start and kept in the data directory (0600) or, for servers sharing a metastore,
// in a KeySetStore there (sealed), published at /jwks.json. Rotating
// makes a new key current and keeps the previous one published and accepted until the
// tokens it signed have expired. Hand-written over OpenSSL's EVP API because Debian 12
// packages no maintained C++ JWT library; the format is small (RFC 7515/7518/7519).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace tablemere::identity {

struct Claims {
  std::string issuer;
  std::string subject;
  int64_t issued_at_s = 0;
  int64_t expires_at_s = 0;
  std::map<std::string, std::string> extra;  // string claims: kind, akid, sid, email…
};

// The persisted key set: PEM private keys (PKCS#8) and the previous key's grace.
struct KeySetRecord {
  std::string current_pem;
  std::string previous_pem;  // "" when none
  int64_t previous_until_ms = 0;
};

// Where the key set is kept.
class KeySetStore {
 public:
  virtual ~KeySetStore() = default;
  // The stored set and its version (> 0); nullopt when none is stored yet.
  virtual Result<std::optional<std::pair<KeySetRecord, int64_t>>> Load() = 0;
  // Stores `next` if the stored version is still `expected` (0: none stored); false when
  // another server changed it first (nothing stored then).
  virtual Result<bool> Store(const KeySetRecord& next, int64_t expected) = 0;
  // Whether other servers may change the set (then it is reread now and then).
  virtual bool Shared() const = 0;
  // Where the current or previous key is kept, for errors.
  virtual std::string Where(bool current) const = 0;
};

class SigningKeys {
 public:
  // Opens (creating on first use) the keys kept in `dir`. Errors: kUnavailable naming
  // the path (unreadable or unwritable files, a corrupt key).
  static Result<std::unique_ptr<SigningKeys>> Open(const std::string& dir, const Clock& clock);
  // Opens the keys kept in `store`, creating them when none are stored; of servers starting
  // together on a shared store, one creates them and the others adopt them. A shared set
  // is reread when a token names a key not known here (at most every kForcedRefreshMs, so
  // made-up key ids cannot flood the store) and at least every kRefreshMs, so a rotation
  // on one server reaches the others' JWKS within that bound.
  static Result<std::unique_ptr<SigningKeys>> Open(std::unique_ptr<KeySetStore> store,
                                                   const Clock& clock);
  static constexpr int64_t kRefreshMs = 10'000;
  static constexpr int64_t kForcedRefreshMs = 50;
  ~SigningKeys();

  // A compact JWS (RS256, kid of the current key). Thread-safe.
  Result<std::string> Issue(const Claims& claims) const;
  // Checks the header (alg RS256 exactly, a published kid), the signature, expiry (30 s
  // leeway) and issuer. Errors: kUnauthenticated with detail "reason": malformed,
  // unknown_kid, bad_signature, expired, wrong_issuer. The token is never echoed.
  Result<Claims> Verify(std::string_view token, std::string_view issuer) const;
  // {"keys": [...]} with the current key and a previous one still in its grace.
  std::string JwksJson() const;
  std::string CurrentKid() const;
  // A new current key; the old one stays published for `keep_previous_ms`.
  Result<void> Rotate(int64_t keep_previous_ms);

 private:
  struct Key;
  SigningKeys(std::unique_ptr<KeySetStore> store, const Clock& clock);
  // Reads the stored set (creating one when none is stored). Requires mu_ held.
  Result<void> Load() const;
  // Rereads a shared set when `force` or when the last read is older than kRefreshMs
  // (for a forced one, older than kForcedRefreshMs).
  void MaybeRefresh(bool force) const;
  const Key* Find(std::string_view kid) const;

  const std::unique_ptr<KeySetStore> store_;
  const Clock& clock_;
  mutable std::shared_mutex mu_;
  // State below is protected by mu_; mutable because a shared set is reread on reads.
  mutable std::shared_ptr<Key> current_;
  mutable std::shared_ptr<Key> previous_;
  mutable int64_t previous_until_ms_ = 0;
  mutable int64_t version_ = 0;
  mutable std::atomic<int64_t> loaded_ms_{0};
};

}  // namespace tablemere::identity
