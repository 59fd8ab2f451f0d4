// The compact JWS pieces both verifiers share (our own tokens in signing_keys.cc, an
// external issuer's in oidc.cc): splitting and decoding a token, and checking an RS256
// signature with an RSA public key given as a JWK's n and e. Over OpenSSL's EVP API.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tablemere::identity {

struct ParsedJwt {
  nlohmann::json header;
  nlohmann::json payload;
  std::string signing_input;  // base64url(header) "." base64url(payload)
  std::string signature;      // raw bytes
};

// Errors: kUnauthenticated (code invalid_token, reason malformed) when the token is not
// three base64url parts of which the first two are JSON objects.
Result<ParsedJwt> ParseJwt(std::string_view token);

// An RSA public key from a JWK's base64url modulus and exponent; null when they do not
// make one.
struct RsaPublicKey;
std::shared_ptr<const RsaPublicKey> RsaKeyFromJwk(std::string_view n_b64url,
                                                  std::string_view e_b64url);
// Whether `signature` is an RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signature of `input`.
bool VerifyRs256(const RsaPublicKey& key, std::string_view input, std::string_view signature);

}  // namespace tablemere::identity
