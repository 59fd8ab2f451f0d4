#include "storage/session_token.h"

#include <nlohmann/json.hpp>

#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::storage {

namespace {
constexpr char kTokenPrefix[] = "tm1.";
constexpr char kAssociated[] = "tablemere-storage-session";
constexpr char kKeyIdPrefix[] = "TMS";

Error TokenError(const std::string& s3_code, const std::string& message) {
  return Error{ErrorCode::kUnauthenticated, message, {}}.With("s3_code", s3_code);
}
}  // namespace

SessionSealer::SessionSealer(const KeyRing& keys)
    : seal_key_(keys.Derive("session-seal")),
      secret_key_(keys.Derive("session-secret")),
      key_id_key_(keys.Derive("session-key-id")) {}

bool SessionSealer::IsSessionKeyId(const std::string& access_key_id) {
  return access_key_id.starts_with(kKeyIdPrefix) && access_key_id.size() == 3 + 20;
}

std::string SessionSealer::AccessKeyFor(const std::string& token) const {
  std::string mac = crypto::HmacSha256(key_id_key_, token);
  std::string hex = crypto::HexEncode(mac.substr(0, 10));
  for (char& c : hex) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return kKeyIdPrefix + hex;
}

std::string SessionSealer::SecretFor(const std::string& token) const {
  return crypto::Base64UrlEncode(crypto::HmacSha256(secret_key_, token)).substr(0, 40);
}

IssuedSession SessionSealer::Issue(const SessionGrant& grant, Random& random) const {
  nlohmann::json payload = {{"w", grant.warehouse_id}, {"b", grant.bucket},
                            {"p", grant.prefix},       {"r", grant.read_only},
                            {"e", grant.expires_ms},   {"g", grant.generation},
                            {"f", grant.format}};
  std::string nonce = random.Bytes(12);
  std::string token = kTokenPrefix + crypto::Base64UrlEncode(crypto::Seal(
                                         seal_key_, nonce, payload.dump(), kAssociated));
  return IssuedSession{AccessKeyFor(token), SecretFor(token), token, grant.expires_ms};
}

Result<SessionGrant> SessionSealer::Open(const std::string& access_key_id, const std::string& token,
                                         int64_t now_ms) const {
  if (!token.starts_with(kTokenPrefix)) {
    return Fail(
        TokenError("InvalidToken", "The provided token is malformed or otherwise invalid."));
  }
  auto sealed = crypto::Base64UrlDecode(std::string_view(token).substr(sizeof kTokenPrefix - 1));
  std::optional<std::string> plain;
  if (sealed) plain = crypto::Open(seal_key_, *sealed, kAssociated);
  if (!plain || !crypto::ConstantTimeEquals(AccessKeyFor(token), access_key_id)) {
    return Fail(
        TokenError("InvalidToken", "The provided token is malformed or otherwise invalid."));
  }
  auto j = nlohmann::json::parse(*plain, nullptr, false);
  if (!j.is_object()) {
    return Fail(
        TokenError("InvalidToken", "The provided token is malformed or otherwise invalid."));
  }
  SessionGrant g;
  g.warehouse_id = j.value("w", "");
  g.bucket = j.value("b", "");
  g.prefix = j.value("p", "");
  g.read_only = j.value("r", true);
  g.expires_ms = j.value("e", int64_t{0});
  g.generation = j.value("g", int64_t{0});
  g.format = j.value("f", "");
  if (now_ms >= g.expires_ms) {
    return Fail(TokenError("ExpiredToken", "The provided token has expired."));
  }
  return g;
}

}  // namespace tablemere::storage
