// ACLs: ?acl on buckets and objects. This server offers canned ACLs only — private,
// public-read, public-read-write, authenticated-read — and answers the truth about them
// (the owner has FULL_CONTROL; AllUsers READ, and WRITE for public-read-write;
// AuthenticatedUsers READ). Grants (x-amz-grant-*, an AccessControlPolicy body) are 501.
#include "api/s3/adapter.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {
namespace {

constexpr char kAllUsers[] = "http://acs.amazonaws.com/groups/global/AllUsers";
constexpr char kAuthenticatedUsers[] = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";

http::Response RenderAcl(const std::string& owner_id, const std::string& acl) {
  XmlWriter x;
  x.Open("AccessControlPolicy", true);
  WriteOwner(x, owner_id);
  x.Open("AccessControlList");
  // XmlWriter has no attributes; the grantee's xsi:type is written as S3 writes it.
  auto grant = [&](const std::string& grantee, const std::string& permission) {
    x.Open("Grant");
    x.Raw(grantee);
    x.Element("Permission", permission).Close("Grant");
  };
  grant(
      "<Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
      "xsi:type=\"CanonicalUser\"><ID>" +
          XmlEscape(owner_id) + "</ID><DisplayName>" + XmlEscape(owner_id) +
          "</DisplayName></Grantee>",
      "FULL_CONTROL");
  auto group = [&](const char* uri, const std::string& permission) {
    grant(std::string("<Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
                      "xsi:type=\"Group\"><URI>") +
              uri + "</URI></Grantee>",
          permission);
  };
  if (acl == tablemere::s3::kPublicRead || acl == tablemere::s3::kPublicReadWrite) {
    group(kAllUsers, "READ");
  }
  if (acl == tablemere::s3::kPublicReadWrite) group(kAllUsers, "WRITE");
  if (acl == tablemere::s3::kAuthenticatedRead) group(kAuthenticatedUsers, "READ");
  x.Close("AccessControlList").Close("AccessControlPolicy");
  return Xml(200, x.Take());
}

Result<void> RefuseGrants(const http::Headers& headers) {
  for (const auto& [k, v] : headers.entries()) {
    if (ToLower(k).starts_with("x-amz-grant-")) {
      return Fail(tablemere::s3::S3Error(
          ErrorCode::kNotImplemented, "NotImplemented",
          "ACL grants are not offered; use a canned ACL (x-amz-acl: private, public-read, "
          "public-read-write or authenticated-read)."));
    }
  }
  return {};
}

// A PUT ?acl names its canned ACL in x-amz-acl; an AccessControlPolicy body would be
// grants, which are not offered.
Result<std::optional<std::string>> CannedAclOfPut(Ctx& ctx) {
  TM_TRY(RefuseGrants(ctx.req.headers));
  TM_ASSIGN(std::string body, http::ReadAll(*ctx.req.body, kMaxXmlBody));
  auto header = ctx.req.headers.Get("x-amz-acl");
  if (!Trim(body).empty()) {
    return Fail(
        tablemere::s3::S3Error(ErrorCode::kNotImplemented, "NotImplemented",
                               "ACL grants are not offered; use a canned ACL (x-amz-acl: private, "
                               "public-read, public-read-write or authenticated-read)."));
  }
  if (!header) {
    return Fail(tablemere::s3::S3Error(ErrorCode::kInvalidInput, "MissingSecurityHeader",
                                       "Your request was missing a required header: x-amz-acl"));
  }
  return header;
}

}  // namespace

Result<void> CheckNoGrants(const http::Headers& headers) { return RefuseGrants(headers); }

Result<http::Response> Adapter::GetBucketAcl(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketRead));
  TM_ASSIGN(auto info, store_.HeadBucket(ctx.bucket));
  TM_ASSIGN(std::string owner, service_.OwnerIdOf(ctx.bucket));
  return RenderAcl(owner, info.acl);
}

Result<http::Response> Adapter::PutBucketAcl(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketAdmin));
  TM_ASSIGN(auto header, CannedAclOfPut(ctx));
  TM_ASSIGN(std::string acl, service_.CannedAclForWrite(ctx.identity, ctx.bucket, header));
  objectstore::AttributeChange change;
  change.acl = acl;
  TM_TRY(store_.SetBucketAttributes(ctx.bucket, change));
  return http::Response{};
}

Result<http::Response> Adapter::GetObjectAcl(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kRead));
  TM_ASSIGN(auto info, service_.HeadVersion(ctx.bucket, ctx.key, VersionIdOf(ctx)));
  TM_ASSIGN(std::string owner, service_.OwnerIdOf(ctx.bucket));
  return RenderAcl(owner, info.acl);
}

Result<http::Response> Adapter::PutObjectAcl(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kWriteAttributes));
  TM_ASSIGN(auto header, CannedAclOfPut(ctx));
  TM_ASSIGN(std::string acl, service_.CannedAclForWrite(ctx.identity, ctx.bucket, header));
  objectstore::AttributeChange change;
  change.acl = acl;
  TM_TRY(service_.ChangeVersion(ctx.bucket, ctx.key, VersionIdOf(ctx), change));
  return http::Response{};
}

}  // namespace tablemere::api::s3
