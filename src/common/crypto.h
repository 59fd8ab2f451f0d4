// Thin wrappers over OpenSSL: digests, HMAC, AEAD sealing, encodings and
// constant-time comparison. Everything here is pure and thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tablemere::crypto {

enum class DigestAlgorithm { kMd5, kSha1, kSha256 };

// Incremental message digest (MD5, SHA-1, SHA-256).
class Digest {
 public:
  explicit Digest(DigestAlgorithm algorithm);
  ~Digest();
  Digest(Digest&&) noexcept;
  Digest& operator=(Digest&&) noexcept;
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;

  void Update(std::string_view data);
  void Update(const void* data, size_t size);
  // Returns the raw digest; the object must not be updated afterwards.
  std::string Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

std::string Sha256(std::string_view data);                            // raw 32 bytes
std::string Sha1(std::string_view data);                              // raw 20 bytes
std::string Md5(std::string_view data);                               // raw 16 bytes
std::string HmacSha256(std::string_view key, std::string_view data);  // raw 32 bytes
std::string HmacSha1(std::string_view key, std::string_view data);    // raw 20 bytes

std::string HexEncode(std::string_view raw);  // lowercase
std::optional<std::string> HexDecode(std::string_view hex);
std::string Base64Encode(std::string_view raw);
std::optional<std::string> Base64Decode(std::string_view text);
std::string Base64UrlEncode(std::string_view raw);  // no padding
std::optional<std::string> Base64UrlDecode(std::string_view text);

// Compares in time that depends only on the lengths, never on the contents.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// AES-256-GCM. `key` must be 32 bytes. Seal returns nonce || ciphertext || tag;
// Open returns nullopt when the input was tampered with or the key is wrong.
// `associated` is authenticated but not encrypted.
std::string Seal(std::string_view key, std::string_view nonce12, std::string_view plaintext,
                 std::string_view associated);
std::optional<std::string> Open(std::string_view key, std::string_view sealed,
                                std::string_view associated);

}  // namespace tablemere::crypto
