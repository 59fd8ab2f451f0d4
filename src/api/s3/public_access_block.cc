// PublicAccessBlock: ?publicAccessBlock on buckets (GET, PUT, DELETE). The configuration is
// kept with the bucket in the metastore; the S3 service enforces it on canned ACLs
// (BlockPublicAcls refuses setting a public one, IgnorePublicAcls makes them count as
// private). Bucket policies are not offered, so the two policy switches are kept and
// reported with nothing to act on.
#include <pugixml.hpp>

#include "api/s3/adapter.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {

using tablemere::s3::S3Error;

namespace {

Result<objectstore::PublicAccessBlock> ParsePublicAccessBlock(pugi::xml_node root) {
  objectstore::PublicAccessBlock block;
  const std::pair<const char*, bool*> switches[] = {
      {"BlockPublicAcls", &block.block_public_acls},
      {"IgnorePublicAcls", &block.ignore_public_acls},
      {"BlockPublicPolicy", &block.block_public_policy},
      {"RestrictPublicBuckets", &block.restrict_public_buckets}};
  for (const auto& [name, value] : switches) {
    pugi::xml_node node = root.child(name);
    if (!node) continue;  // an absent switch is off
    const std::string text = ToLower(Trim(node.text().get()));
    if (text != "true" && text != "false") return Fail(tablemere::s3::MalformedXml());
    *value = text == "true";
  }
  return block;
}

}  // namespace

Result<http::Response> Adapter::GetPublicAccessBlock(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketAdmin));
  TM_ASSIGN(auto info, store_.HeadBucket(ctx.bucket));
  if (!info.public_access_block) {
    return Fail(S3Error(ErrorCode::kNotFound, "NoSuchPublicAccessBlockConfiguration",
                        "The public access block configuration was not found"));
  }
  const auto& b = *info.public_access_block;
  auto flag = [](bool on) { return on ? "true" : "false"; };
  XmlWriter x;
  x.Open("PublicAccessBlockConfiguration", true)
      .Element("BlockPublicAcls", flag(b.block_public_acls))
      .Element("IgnorePublicAcls", flag(b.ignore_public_acls))
      .Element("BlockPublicPolicy", flag(b.block_public_policy))
      .Element("RestrictPublicBuckets", flag(b.restrict_public_buckets))
      .Close("PublicAccessBlockConfiguration");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::PutPublicAccessBlock(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketAdmin));
  pugi::xml_document doc;
  TM_ASSIGN(pugi::xml_node root, ReadXmlBody(ctx, doc, "PublicAccessBlockConfiguration"));
  TM_ASSIGN(auto block, ParsePublicAccessBlock(root));
  objectstore::AttributeChange change;
  change.public_access_block = std::optional(block);
  TM_TRY(store_.SetBucketAttributes(ctx.bucket, change));
  return http::Response{};
}

Result<http::Response> Adapter::DeletePublicAccessBlock(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, "", Access::kBucketAdmin));
  objectstore::AttributeChange change;
  change.public_access_block = std::optional<objectstore::PublicAccessBlock>();
  TM_TRY(store_.SetBucketAttributes(ctx.bucket, change));
  http::Response r;
  r.status = 204;
  return r;
}

}  // namespace tablemere::api::s3
