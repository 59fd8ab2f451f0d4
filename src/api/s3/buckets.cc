// Bucket operations: ListBuckets, CreateBucket, DeleteBucket, HeadBucket, and the
// read-only bucket questions tools ask (location, versioning).
#include "api/s3/adapter.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {

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
        .Element("BucketRegion", options_.region)
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
  // Drain and ignore a CreateBucketConfiguration body (LocationConstraint).
  TM_TRY(http::ReadAll(*ctx.req.body, kMaxXmlBody));
  TM_TRY(service_.CreateBucket(ctx.identity, ctx.bucket, acl, options_.region == "us-east-1"));
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
  TM_TRY(store_.HeadBucket(ctx.bucket));
  http::Response r;
  r.headers.Set("x-amz-bucket-region", options_.region);
  return r;
}

Result<http::Response> Adapter::GetBucketLocation(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketRead));
  TM_TRY(store_.HeadBucket(ctx.bucket));
  XmlWriter x;
  // us-east-1 is reported as an empty constraint, as S3 does.
  x.Open("LocationConstraint", true).Close("LocationConstraint");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::GetBucketVersioning(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketRead));
  TM_TRY(store_.HeadBucket(ctx.bucket));
  XmlWriter x;
  x.Open("VersioningConfiguration", true).Close("VersioningConfiguration");
  return Xml(200, x.Take());
}

}  // namespace tablemere::api::s3
