#include "accounts/credentials.h"

#include "common/crypto.h"

namespace tablemere::accounts {

std::optional<WarehouseIdentity> ParseIdentityName(const std::string& name) {
  if (!name.starts_with("t-") || name.size() < 3) return std::nullopt;
  std::string rest = name.substr(2);
  bool ro = rest.ends_with("-ro");
  if (ro) rest = rest.substr(0, rest.size() - 3);
  if (rest.size() != 36) return std::nullopt;  // a uuid
  return WarehouseIdentity{rest, ro};
}

std::string IdentityName(const std::string& warehouse_id, bool read_only) {
  return "t-" + warehouse_id + (read_only ? "-ro" : "");
}

std::string IdentitySecrets::SecretFor(const std::string& identity_name, int64_t generation) const {
  std::string mac = crypto::HmacSha256(key_, identity_name + ":" + std::to_string(generation));
  return "tms_" + crypto::Base64UrlEncode(mac).substr(0, 40);
}

std::optional<ParsedApiKey> ParseApiKey(const std::string& text) {
  static constexpr char kPrefix[] = "al_live_";
  if (!text.starts_with(kPrefix)) return std::nullopt;
  std::string rest = text.substr(sizeof kPrefix - 1);
  size_t sep = rest.find('_');
  if (sep == std::string::npos || sep == 0 || sep + 1 >= rest.size()) return std::nullopt;
  return ParsedApiKey{rest.substr(0, sep), rest.substr(sep + 1)};
}

std::string HashApiSecret(const std::string& secret) {
  return crypto::HexEncode(crypto::Sha256(secret));
}

}  // namespace tablemere::accounts
