#include "identity/signing_keys.h"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/crypto.h"
#include "common/files.h"
#include "identity/jwt.h"

namespace tablemere::identity {
namespace {

using Json = nlohmann::json;

// RSA-2048: what RS256 verifiers (PyJWT, jose, Java) accept everywhere.
constexpr int kRsaBits = 2048;
// Clocks of the issuer and the verifier disagree a little.
constexpr int64_t kLeewayS = 30;

Error Unavailable(const std::string& what) { return Error{ErrorCode::kUnavailable, what, {}}; }

Error Refused(const std::string& reason, const std::string& message) {
  return Error{ErrorCode::kUnauthenticated, message, {}}
      .With("code", "invalid_token")
      .With("reason", reason);
}

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

std::string BigEndian(const EVP_PKEY* key, const char* param) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(key, param, &bn) != 1) return {};
  std::string out(BN_num_bytes(bn), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return out;
}

Result<void> WriteSecretFile(const std::string& dir, const std::string& name,
                             const std::string& text) {
  return WriteFileAtomically(dir + "/" + name, text, 0600);
}

}  // namespace

struct SigningKeys::Key {
  Pkey pkey;
  std::string kid;
  std::string pem;  // private key, PKCS#8

  static Result<std::shared_ptr<Key>> Generate() {
    Pkey p(EVP_RSA_gen(kRsaBits));
    if (!p) return Fail(Unavailable("RSA key generation failed"));
    return FromPkey(std::move(p));
  }
  static Result<std::shared_ptr<Key>> FromPem(const std::string& pem, const std::string& path) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    Pkey p(PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr));
    BIO_free(bio);
    if (!p || EVP_PKEY_get_base_id(p.get()) != EVP_PKEY_RSA) {
      return Fail(Unavailable(path + " is not an RSA private key"));
    }
    return FromPkey(std::move(p));
  }
  static Result<std::shared_ptr<Key>> FromPkey(Pkey p) {
    auto k = std::make_shared<Key>();
    BIO* bio = BIO_new(BIO_s_mem());
    if (PEM_write_bio_PrivateKey(bio, p.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
      BIO_free(bio);
      return Fail(Unavailable("cannot encode the signing key"));
    }
    char* data = nullptr;
    long len = BIO_get_mem_data(bio, &data);
    k->pem.assign(data, static_cast<size_t>(len));
    BIO_free(bio);
    // kid: the first 12 bytes of SHA-256 over n || e, base64url.
    k->kid = crypto::Base64UrlEncode(crypto::Sha256(BigEndian(p.get(), OSSL_PKEY_PARAM_RSA_N) +
                                                    BigEndian(p.get(), OSSL_PKEY_PARAM_RSA_E))
                                         .substr(0, 12));
    k->pkey = std::move(p);
    return k;
  }

  std::string Sign(std::string_view input) const {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    size_t len = 0;
    std::string sig;
    if (EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, pkey.get()) == 1 &&
        EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                       input.size()) == 1) {
      sig.resize(len);
      if (EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                         reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
        sig.clear();
      }
      sig.resize(len);
    }
    EVP_MD_CTX_free(ctx);
    return sig;
  }

  bool VerifySignature(std::string_view input, std::string_view sig) const {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    bool ok =
        EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, pkey.get()) == 1 &&
        EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                         reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
  }

  Json Jwk() const {
    return {{"kty", "RSA"},
            {"use", "sig"},
            {"alg", "RS256"},
            {"kid", kid},
            {"n", crypto::Base64UrlEncode(BigEndian(pkey.get(), OSSL_PKEY_PARAM_RSA_N))},
            {"e", crypto::Base64UrlEncode(BigEndian(pkey.get(), OSSL_PKEY_PARAM_RSA_E))}};
  }
};

namespace {

// The embedded server's set: three files in a 0700 directory, each 0600. One process owns
// the directory, so the version is only counted.
class DirectoryKeySetStore final : public KeySetStore {
 public:
  explicit DirectoryKeySetStore(std::string dir) : dir_(std::move(dir)) {}

  Result<std::optional<std::pair<KeySetRecord, int64_t>>> Load() override {
    auto current = ReadWholeFile(dir_ + "/current.pem");
    if (!current) {
      if (current.error().code != ErrorCode::kNotFound) return Fail(current.error());
      return std::nullopt;
    }
    KeySetRecord r;
    r.current_pem = *current;
    auto index = ReadWholeFile(dir_ + "/keys.json");
    if (index) {
      Json j = Json::parse(*index, nullptr, false);
      r.previous_until_ms = j.is_object() ? j.value("previous_until_ms", int64_t{0}) : 0;
    }
    auto previous = ReadWholeFile(dir_ + "/previous.pem");
    if (previous) r.previous_pem = *previous;
    return std::pair{std::move(r), ++version_};
  }

  Result<bool> Store(const KeySetRecord& next, int64_t) override {
    if (!next.previous_pem.empty()) {
      TM_TRY(WriteSecretFile(dir_, "previous.pem", next.previous_pem));
    }
    TM_TRY(WriteSecretFile(dir_, "keys.json",
                           Json{{"previous_until_ms", next.previous_until_ms}}.dump()));
    TM_TRY(WriteSecretFile(dir_, "current.pem", next.current_pem));
    version_++;
    return true;
  }

  bool Shared() const override { return false; }
  std::string Where(bool current) const override {
    return dir_ + (current ? "/current.pem" : "/previous.pem");
  }

 private:
  const std::string dir_;
  int64_t version_ = 0;
};

}  // namespace

SigningKeys::SigningKeys(std::unique_ptr<KeySetStore> store, const Clock& clock)
    : store_(std::move(store)), clock_(clock) {}
SigningKeys::~SigningKeys() = default;

Result<std::unique_ptr<SigningKeys>> SigningKeys::Open(const std::string& dir, const Clock& clock) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Fail(Unavailable("cannot create " + dir + ": " + std::strerror(errno)));
  }
  return Open(std::make_unique<DirectoryKeySetStore>(dir), clock);
}

Result<std::unique_ptr<SigningKeys>> SigningKeys::Open(std::unique_ptr<KeySetStore> store,
                                                       const Clock& clock) {
  std::unique_ptr<SigningKeys> keys(new SigningKeys(std::move(store), clock));
  std::unique_lock lock(keys->mu_);
  TM_TRY(keys->Load());
  return keys;
}

Result<void> SigningKeys::Load() const {
  for (int attempt = 0; attempt < 3; attempt++) {
    TM_ASSIGN(auto stored, store_->Load());
    if (!stored) {
      // None yet: create one; a server that stored first wins and this one adopts it.
      TM_ASSIGN(auto fresh, Key::Generate());
      TM_ASSIGN(bool stored_now, store_->Store(KeySetRecord{fresh->pem, "", 0}, 0));
      if (!stored_now) continue;
      current_ = std::move(fresh);
      previous_.reset();
      previous_until_ms_ = 0;
      version_ = 1;
      loaded_ms_ = clock_.NowMillis();
      return {};
    }
    auto& [record, version] = *stored;
    if (version == version_ && current_) {
      loaded_ms_ = clock_.NowMillis();
      return {};
    }
    TM_ASSIGN(current_, Key::FromPem(record.current_pem, store_->Where(true)));
    previous_.reset();
    previous_until_ms_ = record.previous_until_ms;
    if (!record.previous_pem.empty() && previous_until_ms_ > clock_.NowMillis()) {
      TM_ASSIGN(previous_, Key::FromPem(record.previous_pem, store_->Where(false)));
    }
    version_ = version;
    loaded_ms_ = clock_.NowMillis();
    return {};
  }
  return Fail(Unavailable("the signing keys kept changing while being read"));
}

void SigningKeys::MaybeRefresh(bool force) const {
  if (!store_->Shared()) return;
  const int64_t min_age = force ? kForcedRefreshMs : kRefreshMs;
  if (clock_.NowMillis() - loaded_ms_.load() < min_age) return;
  std::unique_lock lock(mu_);
  if (clock_.NowMillis() - loaded_ms_.load() < min_age) return;
  // A failed reread keeps the keys held (they are still valid); the next one retries.
  if (!Load()) loaded_ms_ = clock_.NowMillis();
}

Result<void> SigningKeys::Rotate(int64_t keep_previous_ms) {
  TM_ASSIGN(auto fresh, Key::Generate());
  std::unique_lock lock(mu_);
  TM_TRY(Load());  // rotate from the newest stored set
  KeySetRecord next{fresh->pem, current_->pem, clock_.NowMillis() + keep_previous_ms};
  TM_ASSIGN(bool stored, store_->Store(next, version_));
  if (!stored) {
    // Another server rotated at the same moment: its rotation stands.
    return Load();
  }
  previous_ = current_;
  previous_until_ms_ = next.previous_until_ms;
  current_ = std::move(fresh);
  version_++;
  if (store_->Shared()) TM_TRY(Load());  // the version the store gave
  return {};
}

const SigningKeys::Key* SigningKeys::Find(std::string_view kid) const {
  if (current_ && current_->kid == kid) return current_.get();
  if (previous_ && previous_->kid == kid && previous_until_ms_ > clock_.NowMillis()) {
    return previous_.get();
  }
  return nullptr;
}

std::string SigningKeys::CurrentKid() const {
  MaybeRefresh(false);
  std::shared_lock lock(mu_);
  return current_->kid;
}

std::string SigningKeys::JwksJson() const {
  MaybeRefresh(false);
  std::shared_lock lock(mu_);
  Json keys = Json::array({current_->Jwk()});
  if (previous_ && previous_until_ms_ > clock_.NowMillis()) keys.push_back(previous_->Jwk());
  return Json{{"keys", keys}}.dump();
}

Result<std::string> SigningKeys::Issue(const Claims& claims) const {
  MaybeRefresh(false);
  std::shared_ptr<Key> key;
  {
    std::shared_lock lock(mu_);
    key = current_;
  }
  Json payload = {{"iss", claims.issuer},
                  {"sub", claims.subject},
                  {"iat", claims.issued_at_s},
                  {"exp", claims.expires_at_s}};
  for (const auto& [k, v] : claims.extra) payload[k] = v;
  std::string input =
      crypto::Base64UrlEncode(Json{{"alg", "RS256"}, {"typ", "JWT"}, {"kid", key->kid}}.dump()) +
      "." + crypto::Base64UrlEncode(payload.dump());
  std::string sig = key->Sign(input);
  if (sig.empty()) return Fail(ErrorCode::kInternal, "signing a token failed");
  return input + "." + crypto::Base64UrlEncode(sig);
}

Result<Claims> SigningKeys::Verify(std::string_view token, std::string_view issuer) const {
  TM_ASSIGN(ParsedJwt jwt, ParseJwt(token));
  const Json& header = jwt.header;
  const Json& payload = jwt.payload;
  // Only RS256: "none" and HMAC algorithms are refused whatever else the token says.
  if (header.value("alg", "") != "RS256") {
    return Fail(Refused("malformed", "The token's algorithm is not RS256"));
  }
  // A key made on another server since this one last read the set: reread it once.
  bool known = false;
  {
    std::shared_lock lock(mu_);
    known = Find(header.value("kid", "")) != nullptr;
  }
  if (!known) MaybeRefresh(true);
  {
    std::shared_lock lock(mu_);
    const Key* key = Find(header.value("kid", ""));
    if (key == nullptr) return Fail(Refused("unknown_kid", "The token's signing key is unknown"));
    if (!key->VerifySignature(jwt.signing_input, jwt.signature)) {
      return Fail(Refused("bad_signature", "The token's signature is wrong"));
    }
  }
  Claims c;
  c.issuer = payload.value("iss", "");
  c.subject = payload.value("sub", "");
  c.issued_at_s = payload.value("iat", int64_t{0});
  c.expires_at_s = payload.value("exp", int64_t{0});
  for (const auto& [k, v] : payload.items()) {
    if (v.is_string() && k != "iss" && k != "sub") c.extra[k] = v.get<std::string>();
  }
  if (c.expires_at_s + kLeewayS < clock_.NowMillis() / 1000) {
    return Fail(Refused("expired", "The token has expired; ask for a new one (POST /v1/tokens)"));
  }
  if (c.issuer != issuer) return Fail(Refused("wrong_issuer", "The token is from another issuer"));
  return c;
}

}  // namespace tablemere::identity
