// RS256 access tokens for the control API (POST /v1/tokens): a signing key generated on
// first start and kept in the data directory (0600), published at /jwks.json. Rotating
// makes a new key current and keeps the previous one published and accepted until the
// tokens it signed have expired. Hand-written over OpenSSL's EVP API because Debian 12
// packages no maintained C++ JWT library; the format is small (RFC 7515/7518/7519).
#pragma once

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

class SigningKeys {
 public:
  // Opens (creating on first use) the keys kept in `dir`. Errors: kUnavailable naming
  // the path (unreadable or unwritable files, a corrupt key).
  static Result<std::unique_ptr<SigningKeys>> Open(const std::string& dir, const Clock& clock);
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
  SigningKeys(std::string dir, const Clock& clock);
  Result<void> Load();
  Result<void> Save() const;
  const Key* Find(std::string_view kid) const;

  const std::string dir_;
  const Clock& clock_;
  mutable std::shared_mutex mu_;
  // State below is protected by mu_.
  std::shared_ptr<Key> current_;
  std::shared_ptr<Key> previous_;
  int64_t previous_until_ms_ = 0;
};

}  // namespace tablemere::identity
