#include "identity/oidc.h"

#include <curl/curl.h>

#include <map>
#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "identity/jwt.h"

namespace tablemere::identity {
namespace {

using Json = nlohmann::json;

// Clocks of the issuer and the verifier disagree a little.
constexpr int64_t kLeewayS = 60;
// A failed discovery, or a token with an unknown kid, refetches at most this often, so a
// stream of forged kids cannot make the server hammer the issuer.
constexpr int64_t kRefetchMs = 60 * 1000;
constexpr size_t kMaxBody = 1024 * 1024;

Error Refused(const std::string& reason, const std::string& message) {
  return Error{ErrorCode::kUnauthenticated, message, {}}
      .With("code", "invalid_token")
      .With("reason", reason);
}

size_t Append(char* data, size_t size, size_t count, void* out) {
  auto* body = static_cast<std::string*>(out);
  if (body->size() + size * count > kMaxBody) return 0;  // aborts the transfer
  body->append(data, size * count);
  return size * count;
}

std::string WithoutSlash(std::string s) {
  while (s.ends_with('/')) s.pop_back();
  return s;
}

bool AudienceHas(const Json& aud, const std::string& want) {
  if (aud.is_string()) return aud.get<std::string>() == want;
  if (aud.is_array()) {
    for (const auto& a : aud) {
      if (a.is_string() && a.get<std::string>() == want) return true;
    }
  }
  return false;
}

}  // namespace

struct ExternalIssuers::State {
  IssuerInfo info;
  bool discovered = false;
  int64_t last_discovery_ms = -kRefetchMs;
  int64_t last_keys_ms = -kRefetchMs;
  std::map<std::string, std::shared_ptr<const RsaPublicKey>> keys;  // by kid
};

Fetch HttpFetch() {
  return [](const std::string& url) -> Result<std::string> {
    CURL* curl = curl_easy_init();
    if (!curl) return Fail(ErrorCode::kUnavailable, "cannot start an HTTP client");
    std::string body;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
    CURLcode rc = curl_easy_perform(curl);
    curl_easy_cleanup(curl);
    if (rc != CURLE_OK) {
      return Fail(ErrorCode::kUnavailable, "GET " + url + ": " + curl_easy_strerror(rc));
    }
    return body;
  };
}

Result<std::vector<IssuerConfig>> ParseIssuers(const std::string& text) {
  Json list = Json::parse(text, nullptr, false);
  if (!list.is_array()) {
    return Fail(ErrorCode::kInvalidInput,
                "TABLEMERE_OIDC_ISSUERS must be a JSON list of {issuer, client_id, audience, "
                "discovery_url, trust_email}");
  }
  std::vector<IssuerConfig> out;
  for (const auto& e : list) {
    if (!e.is_object() || !e.contains("issuer") || !e["issuer"].is_string() ||
        e["issuer"].get<std::string>().empty()) {
      return Fail(ErrorCode::kInvalidInput, "each TABLEMERE_OIDC_ISSUERS entry needs an issuer");
    }
    IssuerConfig c;
    c.issuer = e["issuer"].get<std::string>();
    auto str = [&](const char* k) {
      return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : std::string();
    };
    c.client_id = str("client_id");
    c.audience = str("audience");
    c.discovery_url = str("discovery_url");
    c.trust_email =
        e.contains("trust_email") && e["trust_email"].is_boolean() && e["trust_email"].get<bool>();
    if (c.audience.empty() && c.client_id.empty()) {
      return Fail(ErrorCode::kInvalidInput,
                  "the issuer " + c.issuer + " needs a client_id or an audience to check");
    }
    out.push_back(std::move(c));
  }
  return out;
}

ExternalIssuers::ExternalIssuers(std::vector<IssuerConfig> issuers, const Clock& clock, Fetch fetch)
    : issuers_(std::move(issuers)), clock_(clock), fetch_(std::move(fetch)) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  for (const auto& c : issuers_) {
    auto s = std::make_unique<State>();
    s->info.config = c;
    states_.push_back(std::move(s));
  }
}

ExternalIssuers::~ExternalIssuers() = default;

Result<void> ExternalIssuers::Discover(State& s) {
  if (s.discovered) return {};
  const int64_t now = clock_.NowMillis();
  if (now - s.last_discovery_ms < kRefetchMs) {
    return Fail(ErrorCode::kUnavailable, "the issuer's discovery document is not available yet");
  }
  s.last_discovery_ms = now;
  const auto& c = s.info.config;
  const std::string base = WithoutSlash(c.discovery_url.empty() ? c.issuer : c.discovery_url);
  TM_ASSIGN(std::string text, fetch_(base + "/.well-known/openid-configuration"));
  Json doc = Json::parse(text, nullptr, false);
  if (!doc.is_object() || doc.value("issuer", "") != c.issuer) {
    return Fail(ErrorCode::kUnavailable,
                "the discovery document of " + c.issuer + " does not name that issuer");
  }
  auto str = [&](const char* k) {
    return doc.contains(k) && doc[k].is_string() ? doc[k].get<std::string>() : std::string();
  };
  s.info.authorization_endpoint = str("authorization_endpoint");
  s.info.token_endpoint = str("token_endpoint");
  s.info.device_authorization_endpoint = str("device_authorization_endpoint");
  s.info.jwks_uri = str("jwks_uri");
  if (s.info.jwks_uri.empty()) {
    return Fail(ErrorCode::kUnavailable, "the issuer " + c.issuer + " publishes no jwks_uri");
  }
  s.discovered = true;
  return {};
}

Result<void> ExternalIssuers::FetchKeys(State& s) {
  const int64_t now = clock_.NowMillis();
  if (now - s.last_keys_ms < kRefetchMs) return {};
  s.last_keys_ms = now;
  // Discovery fetched at a private address (the public name does not resolve inside the
  // deployment) names public URLs: the keys are fetched at the same private address.
  std::string uri = s.info.jwks_uri;
  const auto& c = s.info.config;
  if (!c.discovery_url.empty() && uri.starts_with(WithoutSlash(c.issuer))) {
    uri = WithoutSlash(c.discovery_url) + uri.substr(WithoutSlash(c.issuer).size());
  }
  TM_ASSIGN(std::string text, fetch_(uri));
  Json jwks = Json::parse(text, nullptr, false);
  if (!jwks.is_object() || !jwks.contains("keys") || !jwks["keys"].is_array()) {
    return Fail(ErrorCode::kUnavailable, "the JWKS of " + c.issuer + " is not a key set");
  }
  std::map<std::string, std::shared_ptr<const RsaPublicKey>> keys;
  for (const auto& k : jwks["keys"]) {
    if (!k.is_object() || k.value("kty", "") != "RSA") continue;
    if (k.contains("use") && k.value("use", "") != "sig") continue;
    auto key = RsaKeyFromJwk(k.value("n", ""), k.value("e", ""));
    if (key) keys[k.value("kid", "")] = std::move(key);
  }
  s.keys = std::move(keys);
  return {};
}

std::vector<IssuerInfo> ExternalIssuers::List() {
  std::lock_guard lock(mu_);
  std::vector<IssuerInfo> out;
  for (auto& s : states_) {
    (void)Discover(*s);
    out.push_back(s->info);
  }
  return out;
}

bool ExternalIssuers::Claims(const std::string& token) const {
  auto jwt = ParseJwt(token);
  if (!jwt) return false;
  const std::string iss = jwt->payload.value("iss", "");
  for (const auto& c : issuers_) {
    if (c.issuer == iss) return true;
  }
  return false;
}

Result<ExternalIdentity> ExternalIssuers::Verify(const std::string& token) {
  TM_ASSIGN(ParsedJwt jwt, ParseJwt(token));
  // Only RS256: "none" and HMAC algorithms are refused whatever else the token says.
  if (jwt.header.value("alg", "") != "RS256") {
    return Fail(Refused("malformed", "The token's algorithm is not RS256"));
  }
  const std::string iss = jwt.payload.value("iss", "");
  const std::string kid = jwt.header.value("kid", "");
  std::shared_ptr<const RsaPublicKey> key;
  IssuerConfig config;
  {
    std::lock_guard lock(mu_);
    State* state = nullptr;
    for (auto& s : states_) {
      if (s->info.config.issuer == iss) state = s.get();
    }
    if (state == nullptr)
      return Fail(Refused("unknown_issuer", "The token's issuer is not trusted"));
    config = state->info.config;
    TM_TRY(Discover(*state));
    auto found = state->keys.find(kid);
    if (found == state->keys.end()) {
      // A kid not seen yet: the issuer may have rotated its keys.
      TM_TRY(FetchKeys(*state));
      found = state->keys.find(kid);
    }
    if (found == state->keys.end()) {
      return Fail(Refused("unknown_kid", "The token's signing key is unknown"));
    }
    key = found->second;
  }
  if (!VerifyRs256(*key, jwt.signing_input, jwt.signature)) {
    return Fail(Refused("bad_signature", "The token's signature is wrong"));
  }
  const Json& p = jwt.payload;
  const int64_t now_s = clock_.NowMillis() / 1000;
  if (!p.contains("exp") || !p["exp"].is_number() || p["exp"].get<int64_t>() + kLeewayS < now_s) {
    return Fail(Refused("expired", "The token has expired"));
  }
  if (p.contains("nbf") && p["nbf"].is_number() && p["nbf"].get<int64_t>() - kLeewayS > now_s) {
    return Fail(Refused("expired", "The token is not valid yet"));
  }
  const std::string audience = config.audience.empty() ? config.client_id : config.audience;
  const bool aud_ok = AudienceHas(p.value("aud", Json()), audience) ||
                      (config.audience.empty() && p.value("azp", "") == config.client_id);
  if (!aud_ok) return Fail(Refused("wrong_audience", "The token is for another audience"));
  ExternalIdentity id{iss, p.value("sub", ""), ToLower(p.value("email", "")), p.value("name", "")};
  const bool verified = p.contains("email_verified") &&
                        ((p["email_verified"].is_boolean() && p["email_verified"].get<bool>()) ||
                         (p["email_verified"].is_string() && p["email_verified"] == "true"));
  if (id.email.empty() || (!verified && !config.trust_email)) {
    return Fail(Refused("email_unverified",
                        "The token carries no verified email address (email_verified)"));
  }
  return id;
}

}  // namespace tablemere::identity
