#include "http/cors.h"

#include <algorithm>

#include "common/strings.h"

namespace tablemere::http {
namespace {

bool WildcardMatch(const std::string& pattern, const std::string& value) {
  size_t star = pattern.find('*');
  if (star == std::string::npos) return pattern == value;
  std::string head = pattern.substr(0, star);
  std::string tail = pattern.substr(star + 1);
  return value.size() >= head.size() + tail.size() && value.starts_with(head) &&
         value.ends_with(tail);
}

bool AnyMatch(const std::vector<std::string>& patterns, const std::string& value) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return WildcardMatch(p, value); });
}

}  // namespace

bool IsPreflight(const Request& request) {
  return request.method == "OPTIONS" && request.headers.Has("Origin") &&
         request.headers.Has("Access-Control-Request-Method");
}

const CorsRule* MatchCors(const std::vector<CorsRule>& rules, const std::string& origin,
                          const std::string& method, const std::string& request_headers) {
  for (const CorsRule& rule : rules) {
    if (!AnyMatch(rule.origins, origin)) continue;
    if (std::find(rule.methods.begin(), rule.methods.end(), method) == rule.methods.end()) {
      continue;
    }
    bool headers_ok = true;
    for (const auto& h : Split(request_headers, ',')) {
      std::string name = ToLower(Trim(h));
      if (!name.empty() && !AnyMatch(rule.allowed_headers, name)) headers_ok = false;
    }
    if (headers_ok) return &rule;
  }
  return nullptr;
}

Response PreflightResponse(const CorsRule& rule, const Request& request) {
  Response r;
  r.status = 200;
  const std::string origin = request.headers.GetOr("Origin", "");
  const bool any = std::find(rule.origins.begin(), rule.origins.end(), "*") != rule.origins.end();
  r.headers.Set("Access-Control-Allow-Origin", any ? "*" : origin);
  r.headers.Set("Access-Control-Allow-Methods", Join(rule.methods, ", "));
  if (auto asked = request.headers.Get("Access-Control-Request-Headers")) {
    // Echo what was asked (every name matched a rule), as S3 does.
    r.headers.Set("Access-Control-Allow-Headers", ToLower(*asked));
  }
  if (!rule.expose_headers.empty()) {
    r.headers.Set("Access-Control-Expose-Headers", Join(rule.expose_headers, ", "));
  }
  if (rule.max_age_seconds >= 0) {
    r.headers.Set("Access-Control-Max-Age", std::to_string(rule.max_age_seconds));
  }
  if (!any) r.headers.Set("Access-Control-Allow-Credentials", "true");
  r.headers.Set("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method");
  return r;
}

Response PreflightRefused(const std::string& content_type, std::string body) {
  Response r = Response::Text(403, content_type, std::move(body));
  r.headers.Set("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method");
  return r;
}

void AddCorsHeaders(const CorsRule& rule, const std::string& origin, Response& response) {
  const bool any = std::find(rule.origins.begin(), rule.origins.end(), "*") != rule.origins.end();
  response.headers.Set("Access-Control-Allow-Origin", any ? "*" : origin);
  if (!any) response.headers.Set("Access-Control-Allow-Credentials", "true");
  // As S3 answers a simple request that matched a rule: the rule's methods and max age too.
  response.headers.Set("Access-Control-Allow-Methods", Join(rule.methods, ", "));
  if (!rule.expose_headers.empty()) {
    response.headers.Set("Access-Control-Expose-Headers", Join(rule.expose_headers, ", "));
  }
  if (rule.max_age_seconds >= 0) {
    response.headers.Set("Access-Control-Max-Age", std::to_string(rule.max_age_seconds));
  }
  response.headers.Set("Vary", "Origin");
}

Response WithCors(const std::vector<CorsRule>& rules, Request& request,
                  const std::function<Response(Request&)>& handler) {
  auto origin = request.headers.Get("Origin");
  if (IsPreflight(request)) {
    const CorsRule* rule =
        MatchCors(rules, *origin, request.headers.GetOr("Access-Control-Request-Method", ""),
                  request.headers.GetOr("Access-Control-Request-Headers", ""));
    if (!rule) {
      return PreflightRefused("application/json",
                              R"({"error":{"code":403,"type":"ForbiddenException",)"
                              R"("message":"This CORS request is not allowed."}})");
    }
    return PreflightResponse(*rule, request);
  }
  Response response = handler(request);
  if (origin) {
    if (const CorsRule* rule = MatchCors(rules, *origin, request.method)) {
      AddCorsHeaders(*rule, *origin, response);
    }
  }
  return response;
}

}  // namespace tablemere::http
