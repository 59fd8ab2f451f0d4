// Bucket operations: ListBuckets, CreateBucket, DeleteBucket, HeadBucket, and the
// read-only bucket questions tools ask (location, versioning).
#include <pugixml.hpp>

#include <algorithm>
#include <cctype>

#include "api/s3/adapter.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {

namespace {

// The LocationConstraint of a CreateBucketConfiguration body; "" when none is named. A
// self-hosted server has one place: the constraint is kept as the bucket's label and
// echoed (GetBucketLocation, HeadBucket, ListBuckets), as S3 echoes the region.
Result<std::string> LocationConstraintOf(const std::string& body) {
  if (Trim(body).empty()) return std::string();
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size())) return Fail(tablemere::s3::MalformedXml());
  pugi::xml_node root = doc.child("CreateBucketConfiguration");
  if (!root) return Fail(tablemere::s3::MalformedXml());
  const std::string location = Trim(root.child_value("LocationConstraint"));
  const bool valid =
      location.size() <= 64 && std::all_of(location.begin(), location.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
      });
  if (!valid) {
    return Fail(tablemere::s3::S3Error(ErrorCode::kInvalidInput, "InvalidLocationConstraint",
                                       "The specified location-constraint is not valid"));
  }
  return location;
}

}  // namespace

std::string Adapter::RegionOf(const objectstore::BucketInfo& bucket) const {
  return bucket.location.empty() ? options_.region : bucket.location;
}

// Paginated as current SDKs ask (max-buckets, continuation-token, prefix); the token is
// the last bucket name of the previous page, base64url, as opaque to clients as S3's.
Result<http::Response> Adapter::ListBuckets(Ctx& ctx) {
  int64_t max_buckets = 10000;  // S3's largest page
  if (ctx.Has("max-buckets")) {
    auto n = ParseInt(ctx.Q("max-buckets"));
    if (!n || *n < 1 || *n > 10000) {
      return Fail(tablemere::s3::InvalidArgument(
          "Argument max-buckets must be an integer between 1 and 10000"));
    }
    max_buckets = *n;
  }
  std::string after;
  if (ctx.Has("continuation-token")) {
    auto decoded = crypto::Base64UrlDecode(ctx.Q("continuation-token"));
    if (!decoded || decoded->empty()) {
      return Fail(tablemere::s3::InvalidArgument("The continuation token provided is incorrect"));
    }
    after = *decoded;
  }
  const std::string prefix = ctx.Q("prefix");
  TM_ASSIGN(auto buckets, service_.ListBuckets(ctx.identity));
  XmlWriter x;
  x.Open("ListAllMyBucketsResult", true);
  WriteOwner(x, ctx.identity.access_key);
  x.Open("Buckets");
  int64_t shown = 0;
  std::string last;
  bool truncated = false;
  for (const auto& b : buckets) {  // in name order
    if (!b.name.starts_with(prefix) || (!after.empty() && b.name <= after)) continue;
    if (shown == max_buckets) {
      truncated = true;
      break;
    }
    x.Open("Bucket")
        .Element("Name", b.name)
        .Element("CreationDate", FormatIso8601(b.created_ms))
        .Element("BucketRegion", RegionOf(b))
        .Close("Bucket");
    last = b.name;
    shown++;
  }
  x.Close("Buckets");
  if (truncated) x.Element("ContinuationToken", crypto::Base64UrlEncode(last));
  if (ctx.Has("prefix")) x.Element("Prefix", prefix);
  x.Close("ListAllMyBucketsResult");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::CreateBucket(Ctx& ctx) {
  TM_TRY(CheckNoGrants(ctx.req.headers));
  TM_ASSIGN(std::string acl,
            service_.CannedAclForWrite(ctx.identity, ctx.bucket, ctx.req.headers.Get("x-amz-acl")));
  TM_ASSIGN(std::string body, http::ReadAll(*ctx.req.body, kMaxXmlBody));
  TM_ASSIGN(std::string location, LocationConstraintOf(body));
  const bool object_lock = EqualsIgnoreCase(
      Trim(ctx.req.headers.GetOr("x-amz-bucket-object-lock-enabled", "false")), "true");
  TM_TRY(service_.CreateBucket(ctx.identity, ctx.bucket, acl, location,
                               options_.region == "us-east-1", object_lock));
  http::Response r;
  r.headers.Set("Location", "/" + ctx.bucket);
  return r;
}

Result<http::Response> Adapter::DeleteBucket(Ctx& ctx) {
  TM_TRY(service_.DeleteBucket(ctx.identity, ctx.bucket));
  http::Response r;
  r.status = 204;
  return r;
}

Result<http::Response> Adapter::HeadBucket(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketRead));
  TM_ASSIGN(auto info, store_.HeadBucket(ctx.bucket));
  http::Response r;
  r.headers.Set("x-amz-bucket-region", RegionOf(info));
  return r;
}

Result<http::Response> Adapter::GetBucketLocation(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketRead));
  TM_ASSIGN(auto info, store_.HeadBucket(ctx.bucket));
  XmlWriter x;
  // us-east-1 is reported as an empty constraint, as S3 does.
  const std::string region = RegionOf(info);
  x.Open("LocationConstraint", true);
  if (region != "us-east-1") x.Raw(XmlEscape(region));
  x.Close("LocationConstraint");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::GetBucketVersioning(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketRead));
  TM_ASSIGN(std::string state, service_.VersioningOf(ctx.bucket));
  XmlWriter x;
  x.Open("VersioningConfiguration", true);
  // A bucket that never had versioning answers an empty configuration, as S3 does.
  if (!state.empty()) x.Element("Status", state);
  x.Close("VersioningConfiguration");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::PutBucketVersioning(Ctx& ctx) {
  pugi::xml_document doc;
  TM_ASSIGN(pugi::xml_node root, ReadXmlBody(ctx, doc, "VersioningConfiguration"));
  if (Trim(root.child_value("MfaDelete")) == "Enabled") {
    return Fail(tablemere::s3::S3Error(ErrorCode::kNotImplemented, "NotImplemented",
                                       "MFA delete is not offered; send the configuration with "
                                       "MfaDelete Disabled or without it."));
  }
  TM_TRY(service_.SetVersioning(ctx.identity, ctx.bucket, Trim(root.child_value("Status"))));
  return http::Response{};
}

}  // namespace tablemere::api::s3
