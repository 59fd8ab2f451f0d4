#include "catalog/catalog_tokens.h"

#include "iceberg/json_access.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "common/crypto.h"

namespace tablemere::catalog {

namespace {
const char kHeader[] = R"({"alg":"HS256","typ":"JWT"})";

Error Unauthenticated(const std::string& message) {
  return Error{ErrorCode::kUnauthenticated, message, {}};
}
}  // namespace

std::string CatalogTokens::Mint(const CatalogPrincipal& principal, int64_t* expires_in) const {
  int64_t now_s = clock_.NowMillis() / 1000;
  nlohmann::json claims = {{"sub", principal.identity},
                           {"wh", principal.warehouse_id},
                           {"ro", principal.read_only},
                           {"gen", principal.generation},
                           {"iat", now_s},
                           {"exp", now_s + lifetime_seconds_},
                           {"typ", "tablemere-catalog"}};
  std::string signing_input =
      crypto::Base64UrlEncode(kHeader) + "." + crypto::Base64UrlEncode(claims.dump());
  *expires_in = lifetime_seconds_;
  return signing_input + "." + crypto::Base64UrlEncode(crypto::HmacSha256(key_, signing_input));
}

Result<CatalogPrincipal> CatalogTokens::Verify(const std::string& token) const {
  int64_t now = clock_.NowMillis();
  std::optional<CatalogPrincipal> known;
  {
    std::lock_guard lock(mu_);
    auto it = verified_.find(token);
    if (it != verified_.end()) known = it->second;
  }
  if (!known) {
    TM_ASSIGN(CatalogPrincipal p, Open(token));
    std::lock_guard lock(mu_);
    if (verified_.size() >= kMaxVerifiedTokens) {
      std::erase_if(verified_, [&](const auto& e) { return now >= e.second.expires_ms; });
      if (verified_.size() >= kMaxVerifiedTokens) verified_.clear();
    }
    verified_.emplace(token, p);
    known = std::move(p);
  }
  if (now >= known->expires_ms) return Fail(Unauthenticated("Token expired"));
  return std::move(*known);
}

Result<CatalogPrincipal> CatalogTokens::Open(const std::string& token) const {
  size_t a = token.find('.');
  size_t b = a == std::string::npos ? a : token.find('.', a + 1);
  if (b == std::string::npos) return Fail(Unauthenticated("Malformed bearer token"));
  std::string signing_input = token.substr(0, b);
  auto signature = crypto::Base64UrlDecode(token.substr(b + 1));
  if (!signature ||
      !crypto::ConstantTimeEquals(*signature, crypto::HmacSha256(key_, signing_input))) {
    return Fail(Unauthenticated("Invalid bearer token"));
  }
  auto payload = crypto::Base64UrlDecode(token.substr(a + 1, b - a - 1));
  auto claims = payload ? nlohmann::json::parse(*payload, nullptr, false) : nlohmann::json();
  // Signed by us, but read by type anyway: json::value() throws on a mismatch, and a
  // token of another shape is simply not valid.
  using Json = nlohmann::json;
  auto text = [&](const char* key) -> const Json* {
    const Json* v = claims.is_object() ? iceberg::Member(claims, key) : nullptr;
    return v && v->is_string() ? v : nullptr;
  };
  auto integer = [&](const char* key) -> const Json* {
    const Json* v = claims.is_object() ? iceberg::Member(claims, key) : nullptr;
    return v && iceberg::IsInt(*v) ? v : nullptr;
  };
  const Json* typ = text("typ");
  const Json* sub = text("sub");
  const Json* wh = text("wh");
  const Json* ro = claims.is_object() ? iceberg::Member(claims, "ro") : nullptr;
  const Json* gen = integer("gen");
  const Json* exp = integer("exp");
  if (!typ || *typ != "tablemere-catalog" || !sub || !wh || !ro || !ro->is_boolean() || !gen ||
      !exp) {
    return Fail(Unauthenticated("Invalid bearer token"));
  }
  CatalogPrincipal p;
  p.identity = sub->get<std::string>();
  p.warehouse_id = wh->get<std::string>();
  p.read_only = ro->get<bool>();
  p.generation = iceberg::AsInt(*gen);
  p.expires_ms = iceberg::AsInt(*exp) * 1000;
  return p;
}

}  // namespace tablemere::catalog
