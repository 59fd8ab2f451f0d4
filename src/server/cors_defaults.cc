#include "server/cors_defaults.h"

#include "common/strings.h"

namespace tablemere::server {
namespace {

// Browsers cache an allowed preflight this long (seconds).
constexpr int kPreflightMaxAge = 3000;

std::string OriginOf(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  size_t path = url.find('/', scheme + 3);
  return path == std::string::npos ? url : url.substr(0, path);
}

}  // namespace

std::vector<std::string> CorsOrigins(const std::string& flag, const std::string& public_api_url) {
  std::vector<std::string> out;
  if (!Trim(flag).empty()) {
    for (const auto& o : Split(flag, ',')) {
      std::string origin = Trim(o);
      while (origin.ends_with("/")) origin.pop_back();
      if (!origin.empty()) out.push_back(origin);
    }
    return out;
  }
  std::string own = OriginOf(public_api_url);
  out.push_back(own);
  for (const auto& [a, b] :
       {std::pair{"://localhost:", "://127.0.0.1:"}, std::pair{"://127.0.0.1:", "://localhost:"}}) {
    if (size_t at = own.find(a); at != std::string::npos) {
      out.push_back(own.substr(0, at) + b + own.substr(at + std::string(a).size()));
    }
  }
  return out;
}

std::vector<http::CorsRule> S3Cors(const std::vector<std::string>& origins) {
  http::CorsRule rule;
  rule.origins = origins;
  rule.methods = {"GET", "HEAD", "PUT", "POST", "DELETE"};
  rule.allowed_headers = {
      "authorization", "content-type", "content-md5",   "content-encoding",  "cache-control",
      "range",         "if-match",     "if-none-match", "if-modified-since", "if-unmodified-since",
      "x-amz-*",       "amz-sdk-*"};
  rule.expose_headers = {"ETag",
                         "Content-Length",
                         "Content-Range",
                         "Accept-Ranges",
                         "Last-Modified",
                         "x-amz-request-id",
                         "x-amz-version-id",
                         "x-amz-checksum-crc32",
                         "x-amz-checksum-crc32c",
                         "x-amz-checksum-crc64nvme",
                         "x-amz-checksum-sha1",
                         "x-amz-checksum-sha256",
                         "x-amz-mp-parts-count"};
  rule.max_age_seconds = kPreflightMaxAge;
  return {rule};
}

std::vector<http::CorsRule> CatalogCors(const std::vector<std::string>& origins) {
  http::CorsRule rule;
  rule.origins = origins;
  rule.methods = {"GET", "HEAD", "POST", "PUT", "DELETE"};
  rule.allowed_headers = {"authorization",
                          "content-type",
                          "x-iceberg-access-delegation",
                          "x-client-version",
                          "x-client-git-commit-short",
                          "if-none-match"};
  rule.expose_headers = {"ETag", "Content-Length"};
  rule.max_age_seconds = kPreflightMaxAge;
  return {rule};
}

}  // namespace tablemere::server
