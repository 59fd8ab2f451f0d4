// Object lock on the wire: ?object-lock on buckets (the configuration and its default
// retention), ?retention and ?legal-hold on objects (one version each, by versionId), the
// x-amz-object-lock-* headers a write of a new version carries and GET/HEAD answer. What
// it means and every check is the S3 service's (s3/object_lock.cc).
#include <pugixml.hpp>

#include "api/s3/adapter.h"
#include "common/strings.h"
#include "s3/errors.h"
#include "s3/post_policy.h"

namespace tablemere::api::s3 {

using tablemere::s3::MalformedXml;
using tablemere::s3::S3Error;

namespace {

// A positive whole number of days or years.
Result<int> Period(pugi::xml_node node) {
  std::string text = Trim(node.text().get());
  const bool negative = text.starts_with("-");
  auto n = ParseInt(negative ? text.substr(1) : text);  // ParseInt takes no sign
  if (!n) return Fail(MalformedXml());
  if (negative || *n == 0 || *n > 36500) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRetentionPeriod",
                        "Default retention period must be a positive integer value."));
  }
  return static_cast<int>(*n);
}

}  // namespace

Result<tablemere::s3::LockRequest> LockRequestOf(const http::Headers& headers) {
  tablemere::s3::LockRequest asked;
  for (const auto& [raw, value] : headers.entries()) {
    const std::string name = ToLower(raw);
    if (name == "x-amz-object-lock-mode") {
      asked.mode = Trim(value);
    } else if (name == "x-amz-object-lock-retain-until-date") {
      asked.until_ms = tablemere::s3::ParseIso8601(Trim(value));
      if (asked.until_ms < 0) {
        return Fail(tablemere::s3::InvalidArgument(
            "The retain until date must be provided in ISO 8601 format"));
      }
    } else if (name == "x-amz-object-lock-legal-hold") {
      asked.legal_hold = Trim(value);
    } else if (name.starts_with("x-amz-object-lock-")) {
      return Fail(tablemere::s3::InvalidArgument("Unknown object lock header " + raw));
    }
  }
  return asked;
}

void SetLockHeaders(http::Response& r, const objectstore::ObjectInfo& info) {
  if (!info.lock_mode.empty()) {
    r.headers.Set("x-amz-object-lock-mode", info.lock_mode);
    r.headers.Set("x-amz-object-lock-retain-until-date", FormatIso8601(info.lock_until_ms));
  }
  if (!info.legal_hold.empty()) r.headers.Set("x-amz-object-lock-legal-hold", info.legal_hold);
}

Result<http::Response> Adapter::GetObjectLockConfiguration(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketRead));
  TM_ASSIGN(auto lock, service_.ObjectLockOf(ctx.bucket));
  if (!lock) {
    return Fail(S3Error(ErrorCode::kNotFound, "ObjectLockConfigurationNotFoundError",
                        "Object Lock configuration does not exist for this bucket"));
  }
  XmlWriter x;
  x.Open("ObjectLockConfiguration", true).Element("ObjectLockEnabled", "Enabled");
  if (!lock->default_mode.empty()) {
    x.Open("Rule").Open("DefaultRetention").Element("Mode", lock->default_mode);
    if (lock->days > 0) x.Element("Days", std::to_string(lock->days));
    if (lock->years > 0) x.Element("Years", std::to_string(lock->years));
    x.Close("DefaultRetention").Close("Rule");
  }
  x.Close("ObjectLockConfiguration");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::PutObjectLockConfiguration(Ctx& ctx) {
  pugi::xml_document doc;
  TM_ASSIGN(pugi::xml_node root, ReadXmlBody(ctx, doc, "ObjectLockConfiguration"));
  if (Trim(root.child_value("ObjectLockEnabled")) != "Enabled") return Fail(MalformedXml());
  objectstore::ObjectLockConfig config;
  if (pugi::xml_node rule = root.child("Rule")) {
    pugi::xml_node retention = rule.child("DefaultRetention");
    if (!retention) return Fail(MalformedXml());
    config.default_mode = Trim(retention.child_value("Mode"));
    if (config.default_mode != tablemere::s3::kGovernance &&
        config.default_mode != tablemere::s3::kCompliance) {
      return Fail(MalformedXml());
    }
    pugi::xml_node days = retention.child("Days");
    pugi::xml_node years = retention.child("Years");
    if (bool(days) == bool(years)) return Fail(MalformedXml());  // exactly one of them
    TM_ASSIGN(config.days, days ? Period(days) : Result<int>(0));
    TM_ASSIGN(config.years, years ? Period(years) : Result<int>(0));
  }
  TM_TRY(service_.SetObjectLock(ctx.identity, ctx.bucket, config));
  return http::Response{};
}

Result<http::Response> Adapter::GetObjectRetention(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kRead));
  TM_ASSIGN(auto info, service_.LockedVersion(ctx.bucket, ctx.key, VersionIdOf(ctx)));
  if (info.lock_mode.empty()) {
    return Fail(S3Error(ErrorCode::kNotFound, "NoSuchObjectLockConfiguration",
                        "The specified object does not have a ObjectLock configuration"));
  }
  XmlWriter x;
  x.Open("Retention", true)
      .Element("Mode", info.lock_mode)
      .Element("RetainUntilDate", FormatIso8601(info.lock_until_ms))
      .Close("Retention");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::PutObjectRetention(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kWriteAttributes));
  pugi::xml_document doc;
  TM_ASSIGN(pugi::xml_node root, ReadXmlBody(ctx, doc, "Retention"));
  const int64_t until = tablemere::s3::ParseIso8601(Trim(root.child_value("RetainUntilDate")));
  if (until < 0) return Fail(MalformedXml());
  TM_ASSIGN(std::string version_id,
            service_.SetRetention(ctx.identity, ctx.bucket, ctx.key, VersionIdOf(ctx),
                                  Trim(root.child_value("Mode")), until, BypassesGovernance(ctx)));
  http::Response r;
  SetVersionHeader(r, version_id);
  return r;
}

Result<http::Response> Adapter::GetObjectLegalHold(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kRead));
  TM_ASSIGN(auto info, service_.LockedVersion(ctx.bucket, ctx.key, VersionIdOf(ctx)));
  if (info.legal_hold.empty()) {
    return Fail(S3Error(ErrorCode::kNotFound, "NoSuchObjectLockConfiguration",
                        "The specified object does not have a legal hold"));
  }
  XmlWriter x;
  x.Open("LegalHold", true).Element("Status", info.legal_hold).Close("LegalHold");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::PutObjectLegalHold(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kWriteAttributes));
  pugi::xml_document doc;
  TM_ASSIGN(pugi::xml_node root, ReadXmlBody(ctx, doc, "LegalHold"));
  TM_ASSIGN(std::string version_id, service_.SetLegalHold(ctx.bucket, ctx.key, VersionIdOf(ctx),
                                                          Trim(root.child_value("Status"))));
  http::Response r;
  SetVersionHeader(r, version_id);
  return r;
}

}  // namespace tablemere::api::s3
