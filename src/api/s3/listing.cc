// Listings: ListObjects (v1 and v2), ListObjectVersions, ListMultipartUploads.
#include "api/s3/adapter.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {

using objectstore::ObjectInfo;
using tablemere::s3::InvalidArgument;

namespace {

struct ListParams {
  std::string prefix, delimiter, start_after, continuation;
  int max_keys = 1000;
  bool url_encode = false;
};

Result<ListParams> ParseListParams(const Ctx& ctx) {
  ListParams p;
  p.prefix = ctx.Q("prefix");
  p.delimiter = ctx.Q("delimiter");
  if (ctx.Has("max-keys")) {
    auto n = ParseInt(ctx.Q("max-keys"));
    if (!n) {
      return Fail(InvalidArgument("max-keys must be a non-negative integer"));
    }
    p.max_keys = static_cast<int>(std::min<int64_t>(*n, 1000));
  }
  if (ctx.Has("encoding-type")) {
    if (ctx.Q("encoding-type") != "url") {
      return Fail(InvalidArgument("Invalid Encoding Method specified in Request"));
    }
    p.url_encode = true;
  }
  return p;
}

std::string Enc(const ListParams& p, const std::string& s) {
  return p.url_encode ? UrlEncode(s, true) : s;
}

void WriteContents(XmlWriter& x, const ListParams& p, const ObjectInfo& o,
                   const std::string* owner_id) {
  x.Open("Contents")
      .Element("Key", Enc(p, o.key))
      .Element("LastModified", FormatIso8601(o.last_modified_ms))
      .Element("ETag", Quote(o.etag))
      .Element("Size", std::to_string(o.size));
  auto alg = o.checksums.find("algorithm");
  if (alg != o.checksums.end()) {
    x.Element("ChecksumAlgorithm", alg->second);
  }
  if (owner_id) WriteOwner(x, *owner_id);
  x.Element("StorageClass", "STANDARD").Close("Contents");
}

}  // namespace

Result<http::Response> Adapter::ListObjects(Ctx& ctx) {
  TM_ASSIGN(ListParams p, ParseListParams(ctx));
  bool v2 = ctx.Q("list-type") == "2";
  objectstore::ListOptions opts;
  opts.prefix = p.prefix;
  opts.delimiter = p.delimiter;
  opts.max_keys = p.max_keys;
  std::string token;
  if (v2) {
    opts.start_after = ctx.Q("start-after");
    if (ctx.Has("continuation-token")) {
      token = ctx.Q("continuation-token");
      auto marker = crypto::Base64UrlDecode(token);
      if (!marker) {
        return Fail(InvalidArgument("The continuation token provided is incorrect"));
      }
      opts.continuation = *marker;
    }
  } else {
    opts.continuation = ctx.Q("marker");
  }
  TM_ASSIGN(auto list, service_.List(ctx.identity, ctx.bucket, opts));
  XmlWriter x;
  x.Open("ListBucketResult", true).Element("Name", ctx.bucket).Element("Prefix", Enc(p, p.prefix));
  if (v2) {
    if (ctx.Has("start-after")) x.Element("StartAfter", Enc(p, ctx.Q("start-after")));
    // Echoed whenever it was sent, even empty, as S3 does.
    if (ctx.Has("continuation-token")) x.Element("ContinuationToken", token);
    x.Element("KeyCount", std::to_string(list.objects.size() + list.common_prefixes.size()));
  } else {
    x.Element("Marker", Enc(p, ctx.Q("marker")));
  }
  x.Element("MaxKeys", std::to_string(p.max_keys));
  if (!p.delimiter.empty()) x.Element("Delimiter", Enc(p, p.delimiter));
  if (p.url_encode) x.Element("EncodingType", "url");
  x.Element("IsTruncated", list.truncated ? "true" : "false");
  if (list.truncated) {
    if (v2) {
      x.Element("NextContinuationToken", crypto::Base64UrlEncode(list.next_marker));
    } else {
      x.Element("NextMarker", Enc(p, list.next_marker));
    }
  }
  bool with_owner = !v2 || ctx.Q("fetch-owner") == "true";
  std::string owner_id;
  if (with_owner) {
    TM_ASSIGN(owner_id, service_.OwnerIdOf(ctx.bucket));
  }
  for (const auto& o : list.objects) WriteContents(x, p, o, with_owner ? &owner_id : nullptr);
  for (const auto& cp : list.common_prefixes) {
    x.Open("CommonPrefixes").Element("Prefix", Enc(p, cp)).Close("CommonPrefixes");
  }
  x.Close("ListBucketResult");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::ListVersions(Ctx& ctx) {
  TM_ASSIGN(ListParams p, ParseListParams(ctx));
  tablemere::s3::VersionListing q;
  q.prefix = p.prefix;
  q.delimiter = p.delimiter;
  q.max_keys = p.max_keys;
  q.key_marker = ctx.Q("key-marker");
  q.version_id_marker = ctx.Q("version-id-marker");
  if (!q.version_id_marker.empty() && q.key_marker.empty()) {
    return Fail(tablemere::s3::InvalidArgument(
        "A version-id marker cannot be specified without a key marker."));
  }
  TM_ASSIGN(auto page, service_.ListVersions(ctx.identity, ctx.bucket, q));
  XmlWriter x;
  x.Open("ListVersionsResult", true)
      .Element("Name", ctx.bucket)
      .Element("Prefix", Enc(p, p.prefix))
      .Element("KeyMarker", Enc(p, q.key_marker))
      .Element("VersionIdMarker", q.version_id_marker)
      .Element("MaxKeys", std::to_string(p.max_keys));
  if (!p.delimiter.empty()) x.Element("Delimiter", Enc(p, p.delimiter));
  if (p.url_encode) x.Element("EncodingType", "url");
  x.Element("IsTruncated", page.truncated ? "true" : "false");
  if (page.truncated) {
    x.Element("NextKeyMarker", Enc(p, page.next_key_marker));
    if (!page.next_version_id_marker.empty()) {
      x.Element("NextVersionIdMarker", page.next_version_id_marker);
    }
  }
  TM_ASSIGN(std::string owner_id, service_.OwnerIdOf(ctx.bucket));
  for (const auto& v : page.versions) {
    x.Open(v.delete_marker ? "DeleteMarker" : "Version")
        .Element("Key", Enc(p, v.key))
        .Element("VersionId", v.version_id)
        .Element("IsLatest", v.latest ? "true" : "false")
        .Element("LastModified", FormatIso8601(v.modified_ms));
    if (!v.delete_marker) {
      x.Element("ETag", Quote(v.etag))
          .Element("Size", std::to_string(v.size))
          .Element("StorageClass", "STANDARD");
    }
    WriteOwner(x, owner_id);
    x.Close(v.delete_marker ? "DeleteMarker" : "Version");
  }
  for (const auto& cp : page.common_prefixes) {
    x.Open("CommonPrefixes").Element("Prefix", Enc(p, cp)).Close("CommonPrefixes");
  }
  x.Close("ListVersionsResult");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::ListUploads(Ctx& ctx) {
  std::string prefix = ctx.Q("prefix");
  TM_ASSIGN(auto uploads, service_.ListUploads(ctx.identity, ctx.bucket, prefix));
  bool url = ctx.Q("encoding-type") == "url";
  XmlWriter x;
  x.Open("ListMultipartUploadsResult", true)
      .Element("Bucket", ctx.bucket)
      .Element("KeyMarker", "")
      .Element("UploadIdMarker", "")
      .Element("Prefix", url ? UrlEncode(prefix, true) : prefix)
      .Element("MaxUploads", "1000")
      .Element("IsTruncated", "false");
  if (url) x.Element("EncodingType", "url");
  for (const auto& u : uploads) {
    x.Open("Upload")
        .Element("Key", url ? UrlEncode(u.key, true) : u.key)
        .Element("UploadId", u.upload_id)
        .Element("Initiated", FormatIso8601(u.initiated_ms))
        .Element("StorageClass", "STANDARD")
        .Close("Upload");
  }
  x.Close("ListMultipartUploadsResult");
  return Xml(200, x.Take());
}

}  // namespace tablemere::api::s3
