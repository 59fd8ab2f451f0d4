#include "storage/sigv4.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "common/clock.h"
#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::storage {

namespace {

constexpr std::string_view kSigV4Algorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view kSigV4aAlgorithm = "AWS4-ECDSA-P256-SHA256";
constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
// AWS accepts header-signed requests whose time is within 15 minutes of its own.
constexpr int64_t kMaxSkewMillis = 15 * 60 * 1000;
// Presigned URLs may live at most one week.
constexpr int64_t kMaxPresignSeconds = 604800;

// Derived signing keys, which depend only on the secret and the scope (a day, a region,
// a service): each costs four HMACs, a few percent of a small PUT's server time, and a
// client (or this server signing for its S3 backend) signs every request of a day with
// the same one. Held as the secrets themselves
// are, in memory only; bounded by dropping all when full (a day's change of scope, or
// many keys, refills it).
class SigningKeyCache {
 public:
  std::string Get(const std::string& secret, const std::string& date, const std::string& region,
                  const std::string& service) {
    std::string id;
    id.reserve(secret.size() + date.size() + region.size() + service.size() + 3);
    id.append(secret).append(1, '\0').append(date).append(1, '\0').append(region).append(1, '\0');
    id.append(service);
    {
      std::lock_guard lock(mu_);
      if (auto it = keys_.find(id); it != keys_.end()) return it->second;
    }
    std::string key = Derive(secret, date, region, service);
    std::lock_guard lock(mu_);
    if (keys_.size() >= kMaxKeys) keys_.clear();
    keys_.emplace(std::move(id), key);
    return key;
  }

 private:
  static std::string Derive(const std::string& secret, const std::string& date,
                            const std::string& region, const std::string& service) {
    std::string k_date = crypto::HmacSha256("AWS4" + secret, date);
    std::string k_region = crypto::HmacSha256(k_date, region);
    std::string k_service = crypto::HmacSha256(k_region, service);
    return crypto::HmacSha256(k_service, "aws4_request");
  }

  static constexpr size_t kMaxKeys = 4096;
  std::mutex mu_;
  std::unordered_map<std::string, std::string> keys_;  // under mu_
};

SigningKeyCache& DerivedKeys() {
  static SigningKeyCache cache;
  return cache;
}

std::unexpected<Error> S3Fail(ErrorCode code, const char* s3_code, std::string message) {
  return Fail(Error{code, std::move(message), {}}.With("s3_code", s3_code));
}

std::unexpected<Error> SignatureMismatch() {
  return S3Fail(ErrorCode::kUnauthenticated, "SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you provided. "
                "Check your key and signing method.");
}

std::unexpected<Error> HeaderMalformed(std::string message) {
  return S3Fail(ErrorCode::kInvalidInput, "AuthorizationHeaderMalformed",
                "The authorization header is malformed; " + message);
}

std::unexpected<Error> QueryMalformed(std::string message) {
  return S3Fail(ErrorCode::kInvalidInput, "AuthorizationQueryParametersError", std::move(message));
}

// A presigned URL valid beyond S3's one-week maximum is refused as S3 does: 403.
std::unexpected<Error> ExpiresOutOfRange() {
  return S3Fail(
      ErrorCode::kUnauthenticated, "AccessDenied",
      "X-Amz-Expires must be less than a week (in seconds) that is 604800, and at least 1");
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes, keeping a '%' that does not start a valid escape as a literal.
// The canonical forms are total functions (they cannot fail); a client that sent a
// broken escape will simply not match, which is the right outcome.
std::string LenientDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

struct QueryParam {
  std::string key;    // decoded
  std::string value;  // decoded
  bool has_equals = false;
  std::string raw_value;
};

// Splits the raw query into decoded parameters in wire order. '+' stays a literal
// plus: S3 clients encode spaces as %20, and SigV2 signatures are base64 that some
// clients leave unescaped.
std::vector<QueryParam> SplitQuery(std::string_view raw_query) {
  std::vector<QueryParam> out;
  for (const std::string& part : Split(raw_query, '&')) {
    if (part.empty()) continue;
    size_t eq = part.find('=');
    QueryParam p;
    p.key = LenientDecode(std::string_view(part).substr(0, eq));
    if (eq != std::string::npos) {
      p.has_equals = true;
      p.raw_value = part.substr(eq + 1);
      p.value = LenientDecode(p.raw_value);
    }
    out.push_back(std::move(p));
  }
  return out;
}

const QueryParam* FindParam(const std::vector<QueryParam>& params, std::string_view key) {
  for (const QueryParam& p : params) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

const std::string* FindHeader(const SignedRequest& request, std::string_view name) {
  for (const auto& [k, v] : request.headers) {
    if (EqualsIgnoreCase(k, name)) return &v;
  }
  return nullptr;
}

// Trims and turns every run of spaces/tabs into one space (SigV4 header values).
std::string CollapseWhitespace(std::string_view value) {
  std::string trimmed = Trim(value);
  std::string out;
  out.reserve(trimmed.size());
  bool in_space = false;
  for (char c : trimmed) {
    if (c == ' ' || c == '\t') {
      if (!in_space) out.push_back(' ');
      in_space = true;
    } else {
      out.push_back(c);
      in_space = false;
    }
  }
  return out;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "AK/20130524/us-east-1/s3/aws4_request" → fields of `auth`. Parsed from the right
// so that the scope is unambiguous even for odd access keys.
bool ParseCredential(std::string_view credential, ParsedAuth& auth) {
  std::vector<std::string> parts = Split(credential, '/');
  if (parts.size() < 5 || parts.back() != "aws4_request") return false;
  size_t n = parts.size();
  auth.service = parts[n - 2];
  auth.region = parts[n - 3];
  auth.date = parts[n - 4];
  auth.access_key.clear();
  for (size_t i = 0; i + 4 < n; i++) {
    if (i > 0) auth.access_key += '/';
    auth.access_key += parts[i];
  }
  return !auth.access_key.empty() && auth.date.size() == 8 && AllDigits(auth.date) &&
         !auth.region.empty() && !auth.service.empty();
}

bool ParseSignedHeaders(std::string_view list, std::vector<std::string>& out) {
  out.clear();
  for (const std::string& name : Split(list, ';')) {
    std::string n = ToLower(Trim(name));
    if (n.empty()) return false;
    out.push_back(std::move(n));
  }
  return !out.empty();
}

// Converts an x-amz-date/Date value (compact SigV4 form or RFC 7231) to the compact
// form; "" when neither parses.
std::string NormalizeRequestDate(const std::string& value) {
  std::string v = Trim(value);
  if (ParseAmzDate(v) >= 0) return v;
  int64_t millis = ParseHttpDate(v);
  return millis >= 0 ? FormatAmzDate(millis) : std::string();
}

Result<std::optional<ParsedAuth>> ParseSigV4Header(const SignedRequest& request,
                                                   std::string_view rest) {
  ParsedAuth auth;
  auth.kind = AuthKind::kSigV4Header;
  std::string normalized(rest);
  std::replace(normalized.begin(), normalized.end(), ',', ' ');
  std::replace(normalized.begin(), normalized.end(), '\t', ' ');
  bool have_credential = false;
  bool have_signed_headers = false;
  bool have_signature = false;
  for (const std::string& token : Split(normalized, ' ')) {
    if (token.empty()) continue;
    size_t eq = token.find('=');
    if (eq == std::string::npos) return HeaderMalformed("expected Name=value, got '" + token + "'");
    std::string_view name = std::string_view(token).substr(0, eq);
    std::string_view value = std::string_view(token).substr(eq + 1);
    if (EqualsIgnoreCase(name, "Credential")) {
      if (have_credential || !ParseCredential(value, auth)) {
        return HeaderMalformed("the Credential is invalid");
      }
      have_credential = true;
    } else if (EqualsIgnoreCase(name, "SignedHeaders")) {
      if (have_signed_headers || !ParseSignedHeaders(value, auth.signed_headers)) {
        return HeaderMalformed("the SignedHeaders list is invalid");
      }
      have_signed_headers = true;
    } else if (EqualsIgnoreCase(name, "Signature")) {
      if (have_signature || value.empty()) return HeaderMalformed("the Signature is invalid");
      auth.signature = std::string(value);
      have_signature = true;
    }
    // Unknown components are ignored for forward compatibility.
  }
  if (!have_credential || !have_signed_headers || !have_signature) {
    return HeaderMalformed("Credential, SignedHeaders and Signature are required");
  }
  if (std::find(auth.signed_headers.begin(), auth.signed_headers.end(), "host") ==
      auth.signed_headers.end()) {
    return HeaderMalformed("the host header must be signed");
  }
  if (const std::string* d = FindHeader(request, "x-amz-date")) {
    auth.amz_date = Trim(*d);
  } else if (const std::string* date = FindHeader(request, "date")) {
    auth.amz_date = NormalizeRequestDate(*date);
  }
  if (auth.amz_date.size() == 16 && auth.amz_date.compare(0, 8, auth.date) != 0) {
    return HeaderMalformed("the Credential date does not match the request date");
  }
  const std::string* payload = FindHeader(request, "x-amz-content-sha256");
  if (payload == nullptr) {
    return S3Fail(ErrorCode::kInvalidInput, "InvalidRequest",
                  "Missing required header for this request: x-amz-content-sha256");
  }
  auth.payload_hash = Trim(*payload);
  if (const std::string* token = FindHeader(request, "x-amz-security-token")) {
    auth.security_token = Trim(*token);
  }
  return auth;
}

Result<std::optional<ParsedAuth>> ParseSigV2Header(const SignedRequest& request,
                                                   std::string_view rest) {
  std::string value = Trim(rest);
  size_t colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == value.size()) {
    return S3Fail(ErrorCode::kInvalidInput, "InvalidArgument",
                  "AWS authorization header is invalid. Expected AwsAccessKeyId:signature");
  }
  ParsedAuth auth;
  auth.kind = AuthKind::kSigV2Header;
  auth.access_key = value.substr(0, colon);
  auth.signature = value.substr(colon + 1);
  if (const std::string* d = FindHeader(request, "x-amz-date")) {
    auth.amz_date = NormalizeRequestDate(*d);
  } else if (const std::string* date = FindHeader(request, "date")) {
    auth.amz_date = NormalizeRequestDate(*date);
  }
  if (const std::string* token = FindHeader(request, "x-amz-security-token")) {
    auth.security_token = Trim(*token);
  }
  return auth;
}

Result<std::optional<ParsedAuth>> ParseSigV4Query(const std::vector<QueryParam>& params) {
  const QueryParam* algorithm = FindParam(params, "X-Amz-Algorithm");
  const QueryParam* credential = FindParam(params, "X-Amz-Credential");
  const QueryParam* date = FindParam(params, "X-Amz-Date");
  const QueryParam* expires = FindParam(params, "X-Amz-Expires");
  const QueryParam* signed_headers = FindParam(params, "X-Amz-SignedHeaders");
  const QueryParam* signature = FindParam(params, "X-Amz-Signature");
  if (algorithm == nullptr || credential == nullptr || date == nullptr || expires == nullptr ||
      signed_headers == nullptr || signature == nullptr) {
    return QueryMalformed(
        "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, "
        "X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.");
  }
  if (algorithm->value == kSigV4aAlgorithm) {
    return S3Fail(ErrorCode::kNotImplemented, "NotImplemented",
                  "SigV4a (AWS4-ECDSA-P256-SHA256) is not supported");
  }
  if (algorithm->value != kSigV4Algorithm) {
    return QueryMalformed("X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"");
  }
  ParsedAuth auth;
  auth.kind = AuthKind::kSigV4Query;
  if (!ParseCredential(credential->value, auth)) {
    return QueryMalformed("Error parsing the X-Amz-Credential parameter");
  }
  auth.amz_date = date->value;
  if (ParseAmzDate(auth.amz_date) < 0) {
    return QueryMalformed("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"");
  }
  if (auth.amz_date.compare(0, 8, auth.date) != 0) {
    return QueryMalformed("Invalid credential date. Date is not the same as X-Amz-Date.");
  }
  // A negative number is a number out of range (403), not a malformed one.
  const bool negative = expires->value.size() > 1 && expires->value[0] == '-';
  std::optional<int64_t> seconds = ParseInt(negative ? expires->value.substr(1) : expires->value);
  if (!seconds) return QueryMalformed("X-Amz-Expires should be a number");
  if (negative) return ExpiresOutOfRange();
  if (*seconds < 1 || *seconds > kMaxPresignSeconds) return ExpiresOutOfRange();
  auth.expires_seconds = *seconds;
  if (!ParseSignedHeaders(signed_headers->value, auth.signed_headers)) {
    return QueryMalformed("X-Amz-SignedHeaders is invalid");
  }
  if (std::find(auth.signed_headers.begin(), auth.signed_headers.end(), "host") ==
      auth.signed_headers.end()) {
    return QueryMalformed("X-Amz-SignedHeaders must include host");
  }
  auth.signature = signature->value;
  if (const QueryParam* token = FindParam(params, "X-Amz-Security-Token")) {
    auth.security_token = token->value;
  }
  const QueryParam* content = FindParam(params, "X-Amz-Content-Sha256");
  auth.payload_hash = content != nullptr ? content->value : std::string(kUnsignedPayload);
  return auth;
}

Result<std::optional<ParsedAuth>> ParseSigV2Query(const SignedRequest& request,
                                                  const std::vector<QueryParam>& params) {
  const QueryParam* access_key = FindParam(params, "AWSAccessKeyId");
  const QueryParam* signature = FindParam(params, "Signature");
  const QueryParam* expires = FindParam(params, "Expires");
  if (access_key == nullptr || signature == nullptr || expires == nullptr ||
      access_key->value.empty() || signature->value.empty()) {
    return QueryMalformed(
        "Query-string authentication requires the Signature, Expires and AWSAccessKeyId "
        "parameters");
  }
  std::optional<int64_t> seconds = ParseInt(expires->value);
  if (!seconds) return QueryMalformed("Invalid date (should be seconds since epoch)");
  ParsedAuth auth;
  auth.kind = AuthKind::kSigV2Query;
  auth.access_key = access_key->value;
  auth.signature = signature->value;
  auth.expires_seconds = *seconds;
  // botocore moves x-amz-* headers (the session token among them) into the query.
  for (const QueryParam& p : params) {
    if (EqualsIgnoreCase(p.key, "x-amz-security-token")) auth.security_token = p.value;
  }
  if (auth.security_token.empty()) {
    if (const std::string* token = FindHeader(request, "x-amz-security-token")) {
      auth.security_token = Trim(*token);
    }
  }
  return auth;
}

// --- SigV2 ------------------------------------------------------------------

// Query parameters that are part of the SigV2 canonicalized resource (the S3
// "sub-resources" and the response-header overrides).
constexpr std::string_view kSigV2SubResources[] = {
    "accelerate",
    "acl",
    "analytics",
    "cors",
    "delete",
    "encryption",
    "inventory",
    "legal-hold",
    "lifecycle",
    "location",
    "logging",
    "metrics",
    "notification",
    "object-lock",
    "partNumber",
    "policy",
    "replication",
    "requestPayment",
    "restore",
    "retention",
    "select",
    "select-type",
    "tagging",
    "torrent",
    "uploadId",
    "uploads",
    "versionId",
    "versioning",
    "versions",
    "website",
    "response-cache-control",
    "response-content-disposition",
    "response-content-encoding",
    "response-content-language",
    "response-content-type",
    "response-expires",
};

bool IsSigV2SubResource(std::string_view key) {
  for (std::string_view s : kSigV2SubResources) {
    if (s == key) return true;
  }
  return false;
}

// The canonicalized resource for path-style requests: the path exactly as sent, then
// the sub-resources sorted by name with decoded values. Virtual-hosted requests
// would need the bucket from Host prepended; Tablemere serves path-style only.
std::string SigV2Resource(const SignedRequest& request, const std::vector<QueryParam>& params) {
  std::string resource = request.raw_path.empty() ? "/" : request.raw_path;
  std::vector<const QueryParam*> sub;
  for (const QueryParam& p : params) {
    if (IsSigV2SubResource(p.key)) sub.push_back(&p);
  }
  std::stable_sort(sub.begin(), sub.end(),
                   [](const QueryParam* a, const QueryParam* b) { return a->key < b->key; });
  for (size_t i = 0; i < sub.size(); i++) {
    resource += i == 0 ? '?' : '&';
    resource += sub[i]->key;
    if (sub[i]->has_equals) resource += "=" + sub[i]->value;
  }
  return resource;
}

std::string SigV2StringToSign(const SignedRequest& request, const ParsedAuth& auth) {
  std::vector<QueryParam> params = SplitQuery(request.raw_query);
  bool query_auth = auth.kind == AuthKind::kSigV2Query;

  // Standard headers, falling back to query parameters for presigned URLs, where
  // botocore carries Content-MD5/Content-Type in the query.
  auto standard = [&](std::string_view name) -> std::string {
    if (const std::string* h = FindHeader(request, name)) return Trim(*h);
    if (query_auth) {
      for (const QueryParam& p : params) {
        if (EqualsIgnoreCase(p.key, name)) return p.value;
      }
    }
    return {};
  };

  std::vector<std::pair<std::string, std::string>> amz;
  auto add_amz = [&](const std::string& name, const std::string& value) {
    std::string lower = ToLower(name);
    if (!StartsWith(lower, "x-amz-")) return;
    for (auto& [k, v] : amz) {
      if (k == lower) {
        v += "," + Trim(value);
        return;
      }
    }
    amz.emplace_back(lower, Trim(value));
  };
  for (const auto& [k, v] : request.headers) add_amz(k, v);
  if (query_auth) {
    for (const QueryParam& p : params) add_amz(p.key, p.value);
  }
  std::sort(amz.begin(), amz.end());

  std::string date;
  if (query_auth) {
    const QueryParam* expires = FindParam(params, "Expires");
    date = expires != nullptr ? expires->value : std::to_string(auth.expires_seconds);
  } else if (FindHeader(request, "x-amz-date") == nullptr) {
    // With x-amz-date present the Date line is empty: x-amz-date is signed among the
    // amz headers instead.
    date = standard("date");
  }

  std::string sts = request.method + "\n" + standard("content-md5") + "\n" +
                    standard("content-type") + "\n" + date + "\n";
  for (const auto& [k, v] : amz) sts += k + ":" + v + "\n";
  sts += SigV2Resource(request, params);
  return sts;
}

}  // namespace

Result<std::optional<ParsedAuth>> ParseAuth(const SignedRequest& request) {
  std::vector<QueryParam> params = SplitQuery(request.raw_query);
  bool query_v4 = FindParam(params, "X-Amz-Algorithm") != nullptr ||
                  FindParam(params, "X-Amz-Credential") != nullptr ||
                  FindParam(params, "X-Amz-Signature") != nullptr;
  bool query_v2 =
      FindParam(params, "AWSAccessKeyId") != nullptr || FindParam(params, "Signature") != nullptr;

  if (const std::string* header = FindHeader(request, "authorization")) {
    if (query_v4 || query_v2) {
      return S3Fail(ErrorCode::kInvalidInput, "InvalidArgument",
                    "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, "
                    "Signature query string parameter or the Authorization header should be "
                    "specified");
    }
    std::string value = Trim(*header);
    std::string_view v(value);
    auto starts_word = [&](std::string_view word) {
      return v.starts_with(word) &&
             (v.size() == word.size() || v[word.size()] == ' ' || v[word.size()] == '\t');
    };
    if (starts_word(kSigV4Algorithm)) {
      return ParseSigV4Header(request, v.substr(kSigV4Algorithm.size()));
    }
    if (starts_word(kSigV4aAlgorithm)) {
      return S3Fail(ErrorCode::kNotImplemented, "NotImplemented",
                    "SigV4a (AWS4-ECDSA-P256-SHA256) is not supported");
    }
    if (starts_word("AWS")) return ParseSigV2Header(request, v.substr(3));
    return S3Fail(ErrorCode::kInvalidInput, "InvalidArgument", "Unsupported Authorization Type");
  }
  if (query_v4 && query_v2) {
    return S3Fail(ErrorCode::kInvalidInput, "InvalidArgument",
                  "Only one auth mechanism allowed; SigV2 and SigV4 query parameters are both "
                  "present");
  }
  if (query_v4) return ParseSigV4Query(params);
  if (query_v2) return ParseSigV2Query(request, params);
  return std::optional<ParsedAuth>();
}

std::string CanonicalUri(const std::string& raw_path) {
  if (raw_path.empty()) return "/";
  return UrlEncode(LenientDecode(raw_path), /*keep_slash=*/true);
}

std::string CanonicalQuery(const std::string& raw_query, bool drop_signature) {
  std::vector<std::pair<std::string, std::string>> encoded;
  for (const QueryParam& p : SplitQuery(raw_query)) {
    if (drop_signature && p.key == "X-Amz-Signature") continue;
    encoded.emplace_back(UrlEncode(p.key), UrlEncode(p.value));
  }
  // Sorting the encoded forms by key, then value, is what AWS specifies (byte order
  // of the encoded strings); repeated keys are ordered by value.
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded) {
    if (!out.empty()) out += '&';
    out += k + "=" + v;
  }
  return out;
}

Result<std::string> CanonicalRequest(const SignedRequest& request, const ParsedAuth& auth) {
  if (auth.kind != AuthKind::kSigV4Header && auth.kind != AuthKind::kSigV4Query) {
    return Fail(ErrorCode::kInternal, "CanonicalRequest is defined for SigV4 only");
  }
  std::vector<std::string> names = auth.signed_headers;
  for (std::string& n : names) n = ToLower(n);
  std::sort(names.begin(), names.end());

  std::string headers;
  for (const std::string& name : names) {
    std::string joined;
    bool found = false;
    for (const auto& [k, v] : request.headers) {
      if (!EqualsIgnoreCase(k, name)) continue;
      if (found) joined += ',';
      joined += CollapseWhitespace(v);
      found = true;
    }
    // AWS rejects a request that lists a header it did not send.
    if (!found) return SignatureMismatch();
    headers += name + ":" + joined + "\n";
  }
  std::string signed_list;
  for (const std::string& name : names) {
    if (!signed_list.empty()) signed_list += ';';
    signed_list += name;
  }
  return request.method + "\n" + CanonicalUri(request.raw_path) + "\n" +
         CanonicalQuery(request.raw_query, auth.kind == AuthKind::kSigV4Query) + "\n" + headers +
         "\n" + signed_list + "\n" + auth.payload_hash;
}

std::string StringToSign(const std::string& amz_date, const std::string& scope,
                         const std::string& canonical_request) {
  return std::string(kSigV4Algorithm) + "\n" + amz_date + "\n" + scope + "\n" +
         crypto::HexEncode(crypto::Sha256(canonical_request));
}

std::string SigningKey(const std::string& secret, const std::string& date,
                       const std::string& region, const std::string& service) {
  return DerivedKeys().Get(secret, date, region, service);
}

std::string Scope(const ParsedAuth& auth) {
  return auth.date + "/" + auth.region + "/" + auth.service + "/aws4_request";
}

Result<std::string> VerifySignature(const SignedRequest& request, const ParsedAuth& auth,
                                    const std::string& secret, int64_t now_millis) {
  // The time window is checked before the signature, as S3 does: a stale request
  // is rejected the same way whether or not its signature is right.
  switch (auth.kind) {
    case AuthKind::kSigV4Header:
    case AuthKind::kSigV2Header: {
      int64_t t = ParseAmzDate(auth.amz_date);
      if (t < 0) {
        return S3Fail(ErrorCode::kUnauthenticated, "AccessDenied",
                      "AWS authentication requires a valid Date or x-amz-date header");
      }
      if (std::llabs(now_millis - t) > kMaxSkewMillis) {
        return S3Fail(ErrorCode::kUnauthenticated, "RequestTimeTooSkewed",
                      "The difference between the request time and the current time is too "
                      "large.");
      }
      break;
    }
    case AuthKind::kSigV4Query: {
      if (auth.expires_seconds < 1 || auth.expires_seconds > kMaxPresignSeconds) {
        return ExpiresOutOfRange();
      }
      int64_t t = ParseAmzDate(auth.amz_date);
      if (t < 0) return QueryMalformed("X-Amz-Date is invalid");
      if (now_millis > t + auth.expires_seconds * 1000) {
        return S3Fail(ErrorCode::kUnauthenticated, "AccessDenied", "Request has expired");
      }
      if (t - now_millis > kMaxSkewMillis) {
        return S3Fail(ErrorCode::kUnauthenticated, "AccessDenied", "Request is not yet valid");
      }
      break;
    }
    case AuthKind::kSigV2Query:
      if (now_millis > auth.expires_seconds * 1000) {
        return S3Fail(ErrorCode::kUnauthenticated, "AccessDenied", "Request has expired");
      }
      break;
  }

  if (auth.kind == AuthKind::kSigV2Query || auth.kind == AuthKind::kSigV2Header) {
    std::string expected =
        crypto::Base64Encode(crypto::HmacSha1(secret, SigV2StringToSign(request, auth)));
    if (!crypto::ConstantTimeEquals(expected, auth.signature)) return SignatureMismatch();
    return std::string();
  }

  TM_ASSIGN(std::string canonical, CanonicalRequest(request, auth));
  std::string key = SigningKey(secret, auth.date, auth.region, auth.service);
  std::string expected = crypto::HexEncode(
      crypto::HmacSha256(key, StringToSign(auth.amz_date, Scope(auth), canonical)));
  if (!crypto::ConstantTimeEquals(expected, ToLower(auth.signature))) return SignatureMismatch();
  return key;
}

std::string SignV4(const SignedRequest& request, const std::string& access_key,
                   const std::string& secret, const std::string& region,
                   const std::string& amz_date, const std::string& payload_hash) {
  ParsedAuth auth;
  auth.kind = AuthKind::kSigV4Header;
  auth.access_key = access_key;
  auth.amz_date = amz_date;
  auth.date = amz_date.substr(0, 8);
  auth.region = region;
  auth.service = "s3";
  auth.payload_hash = payload_hash;
  for (const auto& [name, value] : request.headers) {
    std::string lower = ToLower(name);
    if (std::find(auth.signed_headers.begin(), auth.signed_headers.end(), lower) ==
        auth.signed_headers.end()) {
      auth.signed_headers.push_back(lower);
    }
  }
  std::sort(auth.signed_headers.begin(), auth.signed_headers.end());
  // Every name comes from the request's own headers, so the canonical form always exists.
  std::string canonical = CanonicalRequest(request, auth).value();
  std::string key = SigningKey(secret, auth.date, region, auth.service);
  std::string signature =
      crypto::HexEncode(crypto::HmacSha256(key, StringToSign(amz_date, Scope(auth), canonical)));
  std::string signed_list;
  for (const auto& name : auth.signed_headers) {
    if (!signed_list.empty()) signed_list += ';';
    signed_list += name;
  }
  return std::string(kSigV4Algorithm) + " Credential=" + access_key + "/" + Scope(auth) +
         ", SignedHeaders=" + signed_list + ", Signature=" + signature;
}

}  // namespace tablemere::storage
