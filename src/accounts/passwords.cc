#include "accounts/passwords.h"

#include <argon2.h>

#include <vector>

#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::accounts {
namespace {

// OWASP's argon2id baseline: 19 MiB, two passes, one lane. A login costs tens of
// milliseconds of one core, which the per-address and per-caller limits bound.
constexpr uint32_t kTimeCost = 2;
constexpr uint32_t kMemoryKiB = 19 * 1024;
constexpr uint32_t kLanes = 1;
constexpr size_t kSaltBytes = 16;
constexpr size_t kHashBytes = 32;

int CodePoints(const std::string& s) {
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

Error PasswordError(const std::string& code, const std::string& message) {
  return Error{ErrorCode::kInvalidInput, message, {}}
      .With("code", code)
      .With("field", "password")
      .With("remedy",
            "Choose 12 to 256 characters that do not contain your address or your "
            "organisation's name.");
}

}  // namespace

Result<void> CheckPasswordRules(const std::string& password, const std::string& email,
                                const std::vector<std::string>& org_names) {
  const int chars = CodePoints(password);
  if (chars < kMinPasswordChars) {
    return Fail(PasswordError("password_too_short", "The password needs at least 12 characters")
                    .With("limit", std::to_string(kMinPasswordChars))
                    .With("current", std::to_string(chars)));
  }
  if (chars > kMaxPasswordChars) {
    return Fail(PasswordError("password_too_long", "The password may have at most 256 characters")
                    .With("limit", std::to_string(kMaxPasswordChars))
                    .With("current", std::to_string(chars)));
  }
  const std::string lower = ToLower(password);
  std::vector<std::string> identity = {ToLower(email)};
  const std::string local = ToLower(email.substr(0, email.find('@')));
  // Very short parts ("jo", "ab") are common substrings; only longer ones identify.
  if (local.size() >= 4) identity.push_back(local);
  for (const auto& name : org_names) {
    if (CodePoints(name) >= 4) identity.push_back(ToLower(name));
  }
  for (const auto& part : identity) {
    if (!part.empty() && lower.find(part) != std::string::npos) {
      return Fail(PasswordError("password_contains_identity",
                                "The password contains your address or your organisation's name"));
    }
  }
  return {};
}

Result<std::string> HashPassword(const std::string& password, Random& random) {
  const std::string salt = random.Bytes(kSaltBytes);
  std::string encoded(
      argon2_encodedlen(kTimeCost, kMemoryKiB, kLanes, kSaltBytes, kHashBytes, Argon2_id), '\0');
  int rc =
      argon2id_hash_encoded(kTimeCost, kMemoryKiB, kLanes, password.data(), password.size(),
                            salt.data(), salt.size(), kHashBytes, encoded.data(), encoded.size());
  if (rc != ARGON2_OK) {
    return Fail(ErrorCode::kInternal, std::string("argon2id: ") + argon2_error_message(rc));
  }
  encoded.resize(std::char_traits<char>::length(encoded.c_str()));
  return encoded;
}

bool VerifyPassword(const std::string& encoded, const std::string& password) {
  if (!encoded.starts_with("$argon2id$")) return false;
  return argon2id_verify(encoded.c_str(), password.data(), password.size()) == ARGON2_OK;
}

const std::string& DummyPasswordHash() {
  static const std::string hash = [] {
    SystemRandom random;
    auto h = HashPassword(crypto::HexEncode(random.Bytes(16)), random);
    return h ? *h : std::string();
  }();
  return hash;
}

}  // namespace tablemere::accounts
