#include "common/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>

namespace tablemere::crypto {

struct Digest::State {
  EVP_MD_CTX* ctx = nullptr;
  ~State() { EVP_MD_CTX_free(ctx); }
};

namespace {
const EVP_MD* Md(DigestAlgorithm algorithm) {
  switch (algorithm) {
    case DigestAlgorithm::kMd5:
      return EVP_md5();
    case DigestAlgorithm::kSha1:
      return EVP_sha1();
    case DigestAlgorithm::kSha256:
      return EVP_sha256();
  }
  return EVP_sha256();
}

std::string OneShot(DigestAlgorithm algorithm, std::string_view data) {
  Digest d(algorithm);
  d.Update(data);
  return d.Finish();
}

std::string Hmac(const EVP_MD* md, std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(md, key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return {reinterpret_cast<char*>(out), len};
}
}  // namespace

Digest::Digest(DigestAlgorithm algorithm) : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  if (state_->ctx == nullptr || EVP_DigestInit_ex(state_->ctx, Md(algorithm), nullptr) != 1) {
    throw std::runtime_error("EVP_DigestInit_ex failed");
  }
}
Digest::~Digest() = default;
Digest::Digest(Digest&&) noexcept = default;
Digest& Digest::operator=(Digest&&) noexcept = default;

void Digest::Update(std::string_view data) { Update(data.data(), data.size()); }
void Digest::Update(const void* data, size_t size) { EVP_DigestUpdate(state_->ctx, data, size); }
std::string Digest::Finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(state_->ctx, out, &len);
  return {reinterpret_cast<char*>(out), len};
}

std::string Sha256(std::string_view data) { return OneShot(DigestAlgorithm::kSha256, data); }
std::string Sha1(std::string_view data) { return OneShot(DigestAlgorithm::kSha1, data); }
std::string Md5(std::string_view data) { return OneShot(DigestAlgorithm::kMd5, data); }
std::string HmacSha256(std::string_view key, std::string_view data) {
  return Hmac(EVP_sha256(), key, data);
}
std::string HmacSha1(std::string_view key, std::string_view data) {
  return Hmac(EVP_sha1(), key, data);
}

std::string HexEncode(std::string_view raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::optional<std::string> HexDecode(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]);
    int lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

std::string Base64Encode(std::string_view raw) {
  std::string out(4 * ((raw.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(raw.data()),
                          static_cast<int>(raw.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * text.size() / 4, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding++;
  if (text.size() > 1 && text[text.size() - 2] == '=') padding++;
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

std::string Base64UrlEncode(std::string_view raw) {
  std::string out = Base64Encode(raw);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) {
    if (c == '+')
      c = '-';
    else if (c == '/')
      c = '_';
  }
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    if (c == '-')
      c = '+';
    else if (c == '_')
      c = '/';
    else if (c == '+' || c == '/' || c == '=')
      return std::nullopt;
  }
  while (s.size() % 4 != 0) s.push_back('=');
  return Base64Decode(s);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

namespace {
constexpr size_t kNonceSize = 12;
constexpr size_t kTagSize = 16;
}  // namespace

std::string Seal(std::string_view key, std::string_view nonce12, std::string_view plaintext,
                 std::string_view associated) {
  if (key.size() != 32 || nonce12.size() != kNonceSize) {
    throw std::invalid_argument("Seal: key must be 32 bytes and nonce 12");
  }
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::string out(nonce12);
  out.resize(kNonceSize + plaintext.size() + kTagSize);
  int len = 0;
  auto* key_bytes = reinterpret_cast<const unsigned char*>(key.data());
  auto* nonce = reinterpret_cast<const unsigned char*>(nonce12.data());
  EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key_bytes, nonce);
  EVP_EncryptUpdate(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(associated.data()),
                    static_cast<int>(associated.size()));
  auto* ct = reinterpret_cast<unsigned char*>(out.data() + kNonceSize);
  EVP_EncryptUpdate(ctx, ct, &len, reinterpret_cast<const unsigned char*>(plaintext.data()),
                    static_cast<int>(plaintext.size()));
  EVP_EncryptFinal_ex(ctx, ct + len, &len);
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kTagSize,
                      out.data() + kNonceSize + plaintext.size());
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

std::optional<std::string> Open(std::string_view key, std::string_view sealed,
                                std::string_view associated) {
  if (key.size() != 32 || sealed.size() < kNonceSize + kTagSize) return std::nullopt;
  size_t ct_size = sealed.size() - kNonceSize - kTagSize;
  std::string plain(ct_size, '\0');
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr,
                     reinterpret_cast<const unsigned char*>(key.data()),
                     reinterpret_cast<const unsigned char*>(sealed.data()));
  EVP_DecryptUpdate(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(associated.data()),
                    static_cast<int>(associated.size()));
  EVP_DecryptUpdate(ctx, reinterpret_cast<unsigned char*>(plain.data()), &len,
                    reinterpret_cast<const unsigned char*>(sealed.data() + kNonceSize),
                    static_cast<int>(ct_size));
  std::string tag(sealed.substr(kNonceSize + ct_size));
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTagSize, tag.data());
  int ok = EVP_DecryptFinal_ex(ctx, reinterpret_cast<unsigned char*>(plain.data()) + len, &len);
  EVP_CIPHER_CTX_free(ctx);
  if (ok != 1) return std::nullopt;
  return plain;
}

}  // namespace tablemere::crypto
