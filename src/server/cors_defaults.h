// The server-wide CORS rules: which web origins may call the S3 and catalog listeners
// from a browser, and with which methods and headers.
#pragma once

#include <string>
#include <vector>

#include "http/cors.h"

namespace tablemere::server {

// The origins from --cors-origins, or by default the public API URL's origin (where the
// web page is served). localhost and 127.0.0.1 are different origins to a browser, so a
// loopback deployment allows both spellings.
std::vector<std::string> CorsOrigins(const std::string& flag, const std::string& public_api_url);

// S3: reads and uploads with vended credentials (Range and x-amz-* headers allowed; ETag,
// Content-Length and Content-Range readable by the page).
std::vector<http::CorsRule> S3Cors(const std::vector<std::string>& origins);
// Catalog: the Iceberg REST and OAuth token endpoints.
std::vector<http::CorsRule> CatalogCors(const std::vector<std::string>& origins);

}  // namespace tablemere::server
