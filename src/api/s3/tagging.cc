// Tagging: ?tagging on objects and buckets (GET, PUT, DELETE). Tags given on upload
// (x-amz-tagging) are read in objects.cc and multipart.cc with TaggingFromHeader.
#include <pugixml.hpp>

#include "api/s3/adapter.h"
#include "common/strings.h"
#include "s3/errors.h"
#include "s3/tags.h"

namespace tablemere::api::s3 {

using tablemere::s3::TagTarget;

namespace {

Result<tablemere::s3::TagList> ParseTaggingXml(const std::string& body) {
  pugi::xml_document doc;
  // Values may be all whitespace; take them exactly.
  if (!doc.load_buffer(body.data(), body.size(), pugi::parse_default | pugi::parse_ws_pcdata)) {
    return Fail(tablemere::s3::MalformedXml());
  }
  pugi::xml_node set = doc.child("Tagging").child("TagSet");
  if (!set) return Fail(tablemere::s3::MalformedXml());
  tablemere::s3::TagList tags;
  for (pugi::xml_node tag : set.children("Tag")) {
    if (!tag.child("Key")) return Fail(tablemere::s3::MalformedXml());
    tags.emplace_back(tag.child_value("Key"), tag.child_value("Value"));
  }
  return tags;
}

Result<std::map<std::string, std::string>> ReadTagging(Ctx& ctx, TagTarget target) {
  TM_ASSIGN(std::string body, http::ReadAll(*ctx.req.body, kMaxXmlBody));
  if (auto md5 = ctx.req.headers.Get("Content-MD5")) TM_TRY(CheckContentMd5Form(*md5));
  TM_ASSIGN(auto tags, ParseTaggingXml(body));
  return tablemere::s3::ValidateTags(tags, target);
}

http::Response RenderTagging(const std::map<std::string, std::string>& tags) {
  XmlWriter x;
  x.Open("Tagging", true).Open("TagSet");
  for (const auto& [k, v] : tags) x.Open("Tag").Element("Key", k).Element("Value", v).Close("Tag");
  x.Close("TagSet").Close("Tagging");
  return Xml(200, x.Take());
}

http::Response NoContent() {
  http::Response r;
  r.status = 204;
  return r;
}

}  // namespace

Result<std::map<std::string, std::string>> TaggingFromXml(const std::string& xml) {
  TM_ASSIGN(auto tags, ParseTaggingXml(xml));
  return tablemere::s3::ValidateTags(tags, TagTarget::kObject);
}

Result<std::optional<std::map<std::string, std::string>>> TaggingFromHeader(
    const http::Headers& headers) {
  auto header = headers.Get("x-amz-tagging");
  if (!header) return std::nullopt;
  TM_ASSIGN(auto list, tablemere::s3::ParseTaggingHeader(*header));
  TM_ASSIGN(auto tags, tablemere::s3::ValidateTags(list, TagTarget::kObject));
  return std::optional(std::move(tags));
}

Result<http::Response> Adapter::GetObjectTagging(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kRead));
  TM_ASSIGN(auto info, service_.HeadVersion(ctx.bucket, ctx.key, VersionIdOf(ctx)));
  http::Response r = RenderTagging(info.tags);
  SetVersionHeader(r, info.version_id);
  return r;
}

// Tags of the version a request names (the current object unless versionId names another).
Result<http::Response> Adapter::ChangeObjectTags(Ctx& ctx,
                                                 std::map<std::string, std::string> tags) {
  objectstore::AttributeChange change;
  change.tags = std::move(tags);
  TM_ASSIGN(auto info, service_.ChangeVersion(ctx.bucket, ctx.key, VersionIdOf(ctx), change));
  http::Response r;
  SetVersionHeader(r, info.version_id);
  return r;
}

Result<http::Response> Adapter::PutObjectTagging(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kWriteAttributes));
  TM_ASSIGN(auto tags, ReadTagging(ctx, TagTarget::kObject));
  return ChangeObjectTags(ctx, std::move(tags));
}

Result<http::Response> Adapter::DeleteObjectTagging(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kWriteAttributes));
  TM_ASSIGN(auto r, ChangeObjectTags(ctx, {}));
  r.status = 204;
  return r;
}

Result<http::Response> Adapter::GetBucketTagging(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketRead));
  TM_ASSIGN(auto info, store_.HeadBucket(ctx.bucket));
  if (info.tags.empty()) {
    return Fail(
        tablemere::s3::S3Error(ErrorCode::kNotFound, "NoSuchTagSet", "The TagSet does not exist"));
  }
  return RenderTagging(info.tags);
}

Result<http::Response> Adapter::PutBucketTagging(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketAdmin));
  TM_ASSIGN(auto tags, ReadTagging(ctx, TagTarget::kBucket));
  objectstore::AttributeChange change;
  change.tags = std::move(tags);
  TM_TRY(store_.SetBucketAttributes(ctx.bucket, change));
  return NoContent();
}

Result<http::Response> Adapter::DeleteBucketTagging(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketAdmin));
  objectstore::AttributeChange change;
  change.tags.emplace();
  TM_TRY(store_.SetBucketAttributes(ctx.bucket, change));
  return NoContent();
}

}  // namespace tablemere::api::s3
