// Bucket operations: ListBuckets, CreateBucket, DeleteBucket, HeadBucket, and the
// read-only bucket questions tools ask (location, versioning).
#include "api/s3/adapter.h"
#include "common/strings.h"

namespace tablemere::api::s3 {

Result<http::Response> Adapter::ListBuckets(Ctx& ctx) {
  TM_ASSIGN(auto buckets, service_.ListBuckets(ctx.identity));
  XmlWriter x;
  x.Open("ListAllMyBucketsResult", true);
  WriteOwner(x, ctx.identity.access_key);
  x.Open("Buckets");
  for (const auto& b : buckets) {
    x.Open("Bucket")
        .Element("Name", b.name)
        .Element("CreationDate", FormatIso8601(b.created_ms))
        .Close("Bucket");
  }
  x.Close("Buckets").Close("ListAllMyBucketsResult");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::CreateBucket(Ctx& ctx) {
  // Drain and ignore a CreateBucketConfiguration body (LocationConstraint).
  TM_TRY(http::ReadAll(*ctx.req.body, kMaxXmlBody));
  TM_TRY(service_.CreateBucket(ctx.identity, ctx.bucket));
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
