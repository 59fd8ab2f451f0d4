// CORS on the S3 listener: bucket configurations (?cors GET, PUT, DELETE), preflight
// answers, and the CORS headers of allowed cross-origin responses, errors included. A
// bucket without a configuration follows the server's default rules (the deployment's own
// web origin), so the account page can read warehouse files with vended credentials.
#include <pugixml.hpp>

#include "api/s3/adapter.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {

using tablemere::s3::S3Error;

namespace {

// S3's limit on rules in one configuration.
constexpr size_t kMaxCorsRules = 100;

Error MalformedCors(const std::string& why) {
  return S3Error(ErrorCode::kInvalidInput, "MalformedXML",
                 "The CORS configuration is not valid: " + why);
}

Result<std::vector<http::CorsRule>> ParseCors(const std::string& xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size())) return Fail(tablemere::s3::MalformedXml());
  pugi::xml_node root = doc.child("CORSConfiguration");
  if (!root) return Fail(tablemere::s3::MalformedXml());
  std::vector<http::CorsRule> rules;
  for (pugi::xml_node r : root.children("CORSRule")) {
    http::CorsRule rule;
    for (pugi::xml_node n : r.children("AllowedOrigin"))
      rule.origins.push_back(Trim(n.text().get()));
    for (pugi::xml_node n : r.children("AllowedMethod")) {
      std::string m = Trim(n.text().get());
      if (m != "GET" && m != "PUT" && m != "HEAD" && m != "POST" && m != "DELETE") {
        return Fail(
            S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                    "Found unsupported HTTP method in CORS config. Unsupported method is " + m));
      }
      rule.methods.push_back(m);
    }
    for (pugi::xml_node n : r.children("AllowedHeader")) {
      rule.allowed_headers.push_back(ToLower(Trim(n.text().get())));
    }
    for (pugi::xml_node n : r.children("ExposeHeader"))
      rule.expose_headers.push_back(Trim(n.text().get()));
    if (pugi::xml_node age = r.child("MaxAgeSeconds")) {
      auto n = ParseInt(Trim(age.text().get()));
      if (!n || *n < 0) return Fail(MalformedCors("MaxAgeSeconds must be a non-negative integer"));
      rule.max_age_seconds = static_cast<int>(std::min<int64_t>(*n, 1 << 30));
    }
    for (const auto& o : rule.origins) {
      if (std::count(o.begin(), o.end(), '*') > 1) {
        return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                            "AllowedOrigin \"" + o + "\" can not have more than one wildcard."));
      }
    }
    if (rule.origins.empty() || rule.methods.empty()) {
      return Fail(MalformedCors("every CORSRule needs an AllowedOrigin and an AllowedMethod"));
    }
    rules.push_back(std::move(rule));
  }
  if (rules.empty()) return Fail(MalformedCors("no CORSRule"));
  if (rules.size() > kMaxCorsRules) {
    return Fail(MalformedCors("more than " + std::to_string(kMaxCorsRules) + " rules"));
  }
  return rules;
}

}  // namespace

std::vector<http::CorsRule> Adapter::CorsRulesFor(const std::string& bucket) {
  if (!bucket.empty()) {
    auto info = store_.HeadBucket(bucket);
    if (info && !info->cors.empty()) {
      auto rules = ParseCors(info->cors);  // validated when it was stored
      if (rules) return std::move(*rules);
    }
  }
  return options_.default_cors;
}

http::Response Adapter::Preflight(Ctx& ctx) {
  const std::vector<http::CorsRule> rules = CorsRulesFor(ctx.bucket);
  const http::CorsRule* rule =
      http::MatchCors(rules, ctx.req.headers.GetOr("Origin", ""),
                      ctx.req.headers.GetOr("Access-Control-Request-Method", ""),
                      ctx.req.headers.GetOr("Access-Control-Request-Headers", ""));
  if (!rule) {
    XmlWriter x;
    x.Open("Error")
        .Element("Code", "AccessForbidden")
        .Element("Message",
                 "CORSResponse: This CORS request is not allowed. This is usually "
                 "because the evalution of Origin, request method / "
                 "Access-Control-Request-Method or Access-Control-Request-Headers "
                 "are not whitelisted by the resource's CORS spec.")
        .Element("Method", ctx.req.headers.GetOr("Access-Control-Request-Method", ""))
        .Element("ResourceType", ctx.has_key ? "OBJECT" : "BUCKET")
        .Element("RequestId", ctx.req.request_id)
        .Close("Error");
    return http::PreflightRefused("application/xml", x.Take());
  }
  return http::PreflightResponse(*rule, ctx.req);
}

void Adapter::AddCors(const Ctx& ctx, http::Response& response) {
  auto origin = ctx.req.headers.Get("Origin");
  if (!origin) return;
  const std::vector<http::CorsRule> rules = CorsRulesFor(ctx.bucket);
  if (const http::CorsRule* rule = http::MatchCors(rules, *origin, ctx.req.method)) {
    http::AddCorsHeaders(*rule, *origin, response);
  }
}

Result<http::Response> Adapter::GetBucketCors(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketRead));
  TM_ASSIGN(auto info, store_.HeadBucket(ctx.bucket));
  if (info.cors.empty()) {
    return Fail(S3Error(ErrorCode::kNotFound, "NoSuchCORSConfiguration",
                        "The CORS configuration does not exist"));
  }
  return Xml(200, info.cors);
}

Result<http::Response> Adapter::PutBucketCors(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketAdmin));
  TM_ASSIGN(std::string body, http::ReadAll(*ctx.req.body, kMaxXmlBody));
  if (auto md5 = ctx.req.headers.Get("Content-MD5")) TM_TRY(CheckContentMd5Form(*md5));
  TM_TRY(ParseCors(body));
  objectstore::AttributeChange change;
  change.cors = body;
  TM_TRY(store_.SetBucketAttributes(ctx.bucket, change));
  return http::Response{};
}

Result<http::Response> Adapter::DeleteBucketCors(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketAdmin));
  objectstore::AttributeChange change;
  change.cors = "";
  TM_TRY(store_.SetBucketAttributes(ctx.bucket, change));
  http::Response r;
  r.status = 204;
  return r;
}

}  // namespace tablemere::api::s3
