// AWS Signature Version 4 (header and presigned query) and Version 2 (presigned
// query) for S3, computed from the request exactly as it arrived. Pure functions:
// no I/O, no clock; the caller supplies the secret and the current time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace tablemere::storage {

// The parts of an HTTP request a signature covers, as received on the wire.
struct SignedRequest {
  std::string method;     // "GET"
  std::string raw_path;   // still percent-encoded, e.g. "/bkt/a%20b"
  std::string raw_query;  // after '?', still encoded; "" when none
  // Header names lower-cased; repeated headers appear as separate entries.
  std::vector<std::pair<std::string, std::string>> headers;
};

enum class AuthKind { kSigV4Header, kSigV4Query, kSigV2Query, kSigV2Header };

// What a request claims about its signer; produced by ParseAuth before any secret is known.
struct ParsedAuth {
  AuthKind kind = AuthKind::kSigV4Header;
  std::string access_key;
  std::string date;      // SigV4 scope date "YYYYMMDD"
  std::string region;    // SigV4 scope region
  std::string service;   // SigV4 scope service ("s3")
  std::string amz_date;  // "YYYYMMDDTHHMMSSZ" (SigV4) — from x-amz-date / X-Amz-Date
  std::vector<std::string> signed_headers;  // SigV4, lower-case, as listed
  std::string signature;                    // hex (SigV4) or base64 (SigV2)
  int64_t expires_seconds = 0;  // SigV4 query: X-Amz-Expires; SigV2 query: absolute epoch Expires
  std::string security_token;   // x-amz-security-token header or X-Amz-Security-Token query
  std::string payload_hash;     // x-amz-content-sha256 value, or "UNSIGNED-PAYLOAD" for presigned
};

// Returns nullopt when the request carries no authentication at all (anonymous).
// Errors (kInvalidInput / kUnauthenticated with detail "s3_code") for malformed auth:
// AuthorizationHeaderMalformed, AuthorizationQueryParametersError, InvalidArgument.
Result<std::optional<ParsedAuth>> ParseAuth(const SignedRequest& request);

// SigV4 building blocks (exposed for tests against AWS's published vectors).
std::string CanonicalUri(const std::string& raw_path);  // decode then strict re-encode, keep '/'
std::string CanonicalQuery(const std::string& raw_query, bool drop_signature);
Result<std::string> CanonicalRequest(const SignedRequest& request, const ParsedAuth& auth);
std::string StringToSign(const std::string& amz_date, const std::string& scope,
                         const std::string& canonical_request);
// Raw bytes; derived once per secret and scope, then remembered (in memory only).
std::string SigningKey(const std::string& secret, const std::string& date,
                       const std::string& region, const std::string& service);
// "YYYYMMDD/region/service/aws4_request"
std::string Scope(const ParsedAuth& auth);

// Verifies the signature with `secret`, and the time window against `now_millis`
// (±15 min skew for header auth; expiry for presigned). On success returns the
// signing key (for aws-chunked chunk signatures). Errors carry detail "s3_code":
// SignatureDoesNotMatch, RequestTimeTooSkewed, AccessDenied ("Request has expired").
Result<std::string> VerifySignature(const SignedRequest& request, const ParsedAuth& auth,
                                    const std::string& secret, int64_t now_millis);

// The Authorization header value that signs `request` (SigV4, header form) for a request
// we send: every header in `request.headers` is signed, so it must already hold `host`,
// `x-amz-date` (= `amz_date`) and `x-amz-content-sha256` (= `payload_hash`).
std::string SignV4(const SignedRequest& request, const std::string& access_key,
                   const std::string& secret, const std::string& region,
                   const std::string& amz_date, const std::string& payload_hash);

}  // namespace tablemere::storage
