#include "identity/jwt.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "common/crypto.h"

namespace tablemere::identity {

struct RsaPublicKey {
  EVP_PKEY* pkey = nullptr;
  ~RsaPublicKey() { EVP_PKEY_free(pkey); }
};

Result<ParsedJwt> ParseJwt(std::string_view token) {
  const Error malformed = Error{ErrorCode::kUnauthenticated, "The token is not a JWT", {}}
                              .With("code", "invalid_token")
                              .With("reason", "malformed");
  size_t dot1 = token.find('.');
  size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return Fail(malformed);
  }
  auto header = crypto::Base64UrlDecode(token.substr(0, dot1));
  auto payload = crypto::Base64UrlDecode(token.substr(dot1 + 1, dot2 - dot1 - 1));
  auto sig = crypto::Base64UrlDecode(token.substr(dot2 + 1));
  if (!header || !payload || !sig) return Fail(malformed);
  ParsedJwt out{nlohmann::json::parse(*header, nullptr, false),
                nlohmann::json::parse(*payload, nullptr, false), std::string(token.substr(0, dot2)),
                std::move(*sig)};
  if (!out.header.is_object() || !out.payload.is_object()) return Fail(malformed);
  return out;
}

std::shared_ptr<const RsaPublicKey> RsaKeyFromJwk(std::string_view n_b64url,
                                                  std::string_view e_b64url) {
  auto n = crypto::Base64UrlDecode(n_b64url);
  auto e = crypto::Base64UrlDecode(e_b64url);
  if (!n || !e || n->empty() || e->empty()) return nullptr;
  BIGNUM* bn_n = BN_bin2bn(reinterpret_cast<const unsigned char*>(n->data()),
                           static_cast<int>(n->size()), nullptr);
  BIGNUM* bn_e = BN_bin2bn(reinterpret_cast<const unsigned char*>(e->data()),
                           static_cast<int>(e->size()), nullptr);
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM* params = nullptr;
  EVP_PKEY_CTX* ctx = nullptr;
  auto key = std::make_shared<RsaPublicKey>();
  if (bn_n && bn_e && bld && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1 &&
      OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1 &&
      (params = OSSL_PARAM_BLD_to_param(bld)) != nullptr &&
      (ctx = EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr)) != nullptr &&
      EVP_PKEY_fromdata_init(ctx) == 1) {
    EVP_PKEY_fromdata(ctx, &key->pkey, EVP_PKEY_PUBLIC_KEY, params);
  }
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  BN_free(bn_n);
  BN_free(bn_e);
  // Keys shorter than 2048 bits are refused (RFC 7518 §3.3).
  if (key->pkey == nullptr || EVP_PKEY_get_bits(key->pkey) < 2048) return nullptr;
  return key;
}

bool VerifyRs256(const RsaPublicKey& key, std::string_view input, std::string_view signature) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key.pkey) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                             signature.size(), reinterpret_cast<const unsigned char*>(input.data()),
                             input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

}  // namespace tablemere::identity
