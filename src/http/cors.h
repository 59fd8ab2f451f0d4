// Cross-origin resource sharing (the Fetch standard's CORS protocol): rules saying which
// web origins may call a listener, preflight answers, and the headers an allowed
// cross-origin response carries. Used by the S3 listener (bucket rules, then the server's
// default) and the catalog listener (the default), so a browser page — DuckDB-WASM on the
// account page — can read tables with the user's own credentials.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "http/message.h"

namespace tablemere::http {

struct CorsRule {
  std::vector<std::string> origins;          // exact, "*", or one '*' wildcard ("https://*.x")
  std::vector<std::string> methods;          // upper-case
  std::vector<std::string> allowed_headers;  // lower-case; "*" and "prefix*" allowed
  std::vector<std::string> expose_headers;
  int max_age_seconds = -1;  // -1: not sent
};

// A preflight: OPTIONS with Origin and Access-Control-Request-Method.
bool IsPreflight(const Request& request);

// The first rule allowing `origin` with `method` and every header in `request_headers`
// (a comma-separated Access-Control-Request-Headers value), or nullptr.
const CorsRule* MatchCors(const std::vector<CorsRule>& rules, const std::string& origin,
                          const std::string& method, const std::string& request_headers = "");

// The answer to an allowed preflight (200, with the Access-Control-Allow-* headers).
Response PreflightResponse(const CorsRule& rule, const Request& request);
// The answer to a refused one: 403, no Access-Control-Allow-* headers.
Response PreflightRefused(const std::string& content_type, std::string body);

// Adds Access-Control-Allow-Origin, -Expose-Headers and Vary to a response (error
// responses too: a page must be able to read why it failed).
void AddCorsHeaders(const CorsRule& rule, const std::string& origin, Response& response);

// Handles CORS for a listener with one fixed rule set: answers preflights itself and
// decorates the responses of allowed origins.
Response WithCors(const std::vector<CorsRule>& rules, Request& request,
                  const std::function<Response(Request&)>& handler);

}  // namespace tablemere::http
