// External OpenID Connect issuers a self-hosted deployment trusts (TABLEMERE_OIDC_ISSUERS,
// the reference's AL_OIDC_ISSUERS): their discovery documents and JWKS, fetched when first
// needed and kept; an RS256 token one of them signed for us, with a verified address (or
// the issuer's trust_email), names a person wherever our own tokens do.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace tablemere::identity {

struct IssuerConfig {
  std::string issuer;         // the tokens' iss, exactly
  std::string client_id;      // the public client the account page and CLI use
  std::string audience;       // the tokens' aud must contain it ("" : client_id)
  std::string discovery_url;  // where discovery is fetched ("" : the issuer)
  bool trust_email = false;   // accept an address without email_verified
};

// The issuer as GET /v1/auth/config lists it (endpoints from its discovery document; empty
// while it could not be fetched).
struct IssuerInfo {
  IssuerConfig config;
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string device_authorization_endpoint;
  std::string jwks_uri;
};

struct ExternalIdentity {
  std::string issuer;
  std::string subject;
  std::string email;  // lowercase
  std::string name;
};

// GET of a URL's body. Errors: kUnavailable.
using Fetch = std::function<Result<std::string>(const std::string& url)>;
// The fetch the server uses: libcurl, 10 s, HTTP(S) only, bodies up to 1 MB.
Fetch HttpFetch();

// Parses the JSON list of issuers. Errors: kInvalidInput naming what is wrong.
Result<std::vector<IssuerConfig>> ParseIssuers(const std::string& json);

class ExternalIssuers {
 public:
  ExternalIssuers(std::vector<IssuerConfig> issuers, const Clock& clock, Fetch fetch);
  ~ExternalIssuers();
  bool empty() const { return issuers_.empty(); }
  // Every configured issuer (discovery attempted for those not fetched yet).
  std::vector<IssuerInfo> List();
  // Whether `token` claims (unverified) to come from a configured issuer.
  bool Claims(const std::string& token) const;
  // Errors: kUnauthenticated (code invalid_token, reason: malformed, unknown_issuer,
  // unknown_kid, bad_signature, expired, wrong_audience, email_unverified),
  // kUnavailable when the issuer's keys cannot be fetched.
  Result<ExternalIdentity> Verify(const std::string& token);

 private:
  struct State;
  Result<void> Discover(State& s);
  Result<void> FetchKeys(State& s);

  std::vector<IssuerConfig> issuers_;
  const Clock& clock_;
  Fetch fetch_;
  std::mutex mu_;
  std::vector<std::unique_ptr<State>> states_;  // one per issuer, protected by mu_
};

}  // namespace tablemere::identity
