// Object operations: GetObject, HeadObject, PutObject, CopyObject, DeleteObject and
// DeleteObjects.
#include <pugixml.hpp>

#include <algorithm>
#include <set>

#include "api/s3/adapter.h"
#include "api/s3/errors.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {

using objectstore::ObjectInfo;
using storage::ChecksumAlgorithm;
using tablemere::s3::MalformedXml;
using tablemere::s3::PreconditionFailed;
using tablemere::s3::S3Error;

namespace {

void ObjectHeaders(const Ctx& ctx, const ObjectInfo& info, http::Response& r) {
  r.headers.Set("ETag", Quote(info.etag));
  r.headers.Set("Last-Modified", FormatHttpDate(info.last_modified_ms));
  r.headers.Set("Accept-Ranges", "bytes");
  bool has_type = false;
  for (const auto& [k, v] : info.headers) {
    if (EqualsIgnoreCase(k, "content-type")) has_type = true;
    r.headers.Set(k, v);
  }
  if (!has_type) r.headers.Set("Content-Type", "binary/octet-stream");
  if (!info.tags.empty()) r.headers.Set("x-amz-tagging-count", std::to_string(info.tags.size()));
  static const std::pair<const char*, const char*> kOverrides[] = {
      {"response-content-type", "Content-Type"},
      {"response-content-language", "Content-Language"},
      {"response-expires", "Expires"},
      {"response-cache-control", "Cache-Control"},
      {"response-content-disposition", "Content-Disposition"},
      {"response-content-encoding", "Content-Encoding"}};
  for (const auto& [param, header] : kOverrides) {
    if (ctx.Has(param)) r.headers.Set(header, ctx.Q(param));
  }
}

// Parses "bytes=a-b", "bytes=a-", "bytes=-n". nullopt: ignore the header (as S3 does
// for unparseable ranges); InvalidRange when unsatisfiable.
Result<std::optional<std::pair<uint64_t, uint64_t>>> ParseRange(const std::string& header,
                                                                uint64_t size) {
  std::string h = Trim(header);
  if (!h.starts_with("bytes=") || h.find(',') != std::string::npos) return std::nullopt;
  std::string spec = h.substr(6);
  size_t dash = spec.find('-');
  if (dash == std::string::npos) return std::nullopt;
  std::string a = spec.substr(0, dash);
  std::string b = spec.substr(dash + 1);
  auto invalid = [&]() {
    return Fail(
        S3Error(ErrorCode::kInvalidInput, "InvalidRange", "The requested range is not satisfiable")
            .With("resource", "bytes */" + std::to_string(size)));
  };
  if (a.empty()) {
    auto n = ParseInt(b);
    if (!n) return std::nullopt;
    if (*n == 0) return invalid();
    uint64_t len = std::min<uint64_t>(static_cast<uint64_t>(*n), size);
    if (len == 0) return invalid();
    return std::optional<std::pair<uint64_t, uint64_t>>({size - len, len});
  }
  auto start = ParseInt(a);
  if (!start) return std::nullopt;
  uint64_t s = static_cast<uint64_t>(*start);
  if (s >= size) return invalid();
  uint64_t end = size - 1;
  if (!b.empty()) {
    auto e = ParseInt(b);
    if (!e || static_cast<uint64_t>(*e) < s) return std::nullopt;
    end = std::min<uint64_t>(static_cast<uint64_t>(*e), size - 1);
  }
  return std::optional<std::pair<uint64_t, uint64_t>>({s, end - s + 1});
}

// A read's conditions: a 304 to answer, nothing to proceed, or PreconditionFailed.
Result<std::optional<http::Response>> ReadConditions(const Ctx& ctx, const ObjectInfo& info) {
  auto outcome = tablemere::s3::Evaluate(ConditionsFrom(ctx.req.headers), info, true);
  if (outcome == tablemere::s3::ConditionOutcome::kFailed) return Fail(PreconditionFailed());
  if (outcome == tablemere::s3::ConditionOutcome::kProceed) return std::nullopt;
  http::Response r;
  r.status = 304;
  r.headers.Set("ETag", Quote(info.etag));
  r.headers.Set("Last-Modified", FormatHttpDate(info.last_modified_ms));
  return std::optional(std::move(r));
}

}  // namespace

// A current read that found no object, where a delete marker is the key's newest
// version, says so (x-amz-delete-marker and the marker's version id), as S3 does.
Error Adapter::WithDeleteMarker(const Ctx& ctx, Error error) {
  if (ctx.Has("versionId") ||
      objectstore::FailureOf(error) != objectstore::StoreFailure::kNoSuchKey) {
    return error;
  }
  auto marker = service_.CurrentDeleteMarker(ctx.bucket, ctx.key);
  if (marker && *marker) {
    error.With(tablemere::s3::kDeleteMarkerDetail, **marker);
  }
  return error;
}

Result<http::Response> Adapter::GetObject(Ctx& ctx) { return ReadObject(ctx, false); }
Result<http::Response> Adapter::HeadObject(Ctx& ctx) { return ReadObject(ctx, true); }

Result<http::Response> Adapter::ReadObject(Ctx& ctx, bool head) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kRead));
  std::optional<size_t> part;  // 1-based, from ?partNumber=
  if (ctx.Has("partNumber")) {
    auto n = ParseInt(ctx.Q("partNumber"));
    if (!n || *n < 1 || *n > 10000) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidArgument",
                          "Part number must be an integer between 1 and 10000, inclusive"));
    }
    if (ctx.req.headers.Has("Range")) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "Cannot specify both Range header and partNumber query parameter"));
    }
    part = static_cast<size_t>(*n);
  }
  // The version asked for: the object under the key unless a versionId names another.
  TM_ASSIGN(auto where, service_.ReadVersion(ctx.bucket, ctx.key, VersionIdOf(ctx)));
  // A plain GET opens the object once (its metadata comes with the bytes): on a remote
  // backend a HEAD first would double the round trips of every small read.
  std::unique_ptr<objectstore::ObjectReader> opened;
  ObjectInfo stored;
  if (!head && !part && !ctx.req.headers.Has("Range")) {
    auto found = store_.Get(ctx.bucket, where.stored_key, 0, std::nullopt, &stored);
    if (!found) return Fail(WithDeleteMarker(ctx, std::move(found).error()));
    opened = std::move(*found);
  } else {
    auto found = store_.Head(ctx.bucket, where.stored_key);
    if (!found) return Fail(WithDeleteMarker(ctx, std::move(found).error()));
    stored = std::move(*found);
  }
  // A noncurrent version answers with its own ETag and time, not its kept copy's.
  ObjectInfo info = stored;
  where.ApplyTo(info);
  TM_ASSIGN(auto not_modified, ReadConditions(ctx, info));
  if (not_modified) return std::move(*not_modified);
  uint64_t offset = 0;
  uint64_t length = info.size;
  bool ranged = false;
  if (auto range = ctx.req.headers.Get("Range")) {
    TM_ASSIGN(auto span, ParseRange(*range, info.size));
    if (span) {
      ranged = true;
      offset = span->first;
      length = span->second;
    }
  }
  http::Response r;
  if (part) {
    // A part is a range: that part of a completed multipart upload, or the whole of an
    // object written in one piece (its only part).
    const size_t count = info.part_sizes.empty() ? 1 : info.part_sizes.size();
    if (*part > count) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidPartNumber",
                          "The requested partnumber is not satisfiable"));
    }
    if (!info.part_sizes.empty()) {
      for (size_t i = 0; i + 1 < *part; i++) offset += info.part_sizes[i];
      length = info.part_sizes[*part - 1];
      r.headers.Set("x-amz-mp-parts-count", std::to_string(count));
    }
    ranged = length > 0;
  }
  // Whole-object checksums never describe a range or a part: a client would check the
  // bytes it received against them.
  const bool whole_object = !ranged && !part;
  ObjectHeaders(ctx, info, r);
  SetVersionHeader(r, info.version_id);
  SetLockHeaders(r, info);
  if (ranged) {
    r.status = 206;
    r.headers.Set("Content-Range", "bytes " + std::to_string(offset) + "-" +
                                       std::to_string(offset + length - 1) + "/" +
                                       std::to_string(info.size));
  }
  const bool checksum_mode =
      EqualsIgnoreCase(ctx.req.headers.GetOr("x-amz-checksum-mode", ""), "ENABLED");
  // A part's own checksum, kept at completion, describes exactly the bytes of that part.
  if (part && checksum_mode && *part <= info.part_checksums.size() &&
      !info.part_checksums[*part - 1].empty()) {
    auto a = info.checksums.find("algorithm");
    auto parsed =
        a == info.checksums.end() ? std::nullopt : storage::ParseChecksumAlgorithm(a->second);
    if (parsed) {
      r.headers.Set(storage::ChecksumHeaderName(*parsed), info.part_checksums[*part - 1]);
      auto t = info.checksums.find("type");
      r.headers.Set("x-amz-checksum-type", t == info.checksums.end() ? "COMPOSITE" : t->second);
    }
  }
  // Whole-object checksums are sent only on request.
  if (whole_object && checksum_mode) {
    for (const auto& [alg, value] : info.checksums) {
      auto parsed = storage::ParseChecksumAlgorithm(alg);
      if (parsed) r.headers.Set(storage::ChecksumHeaderName(*parsed), value);
    }
    if (auto type = info.checksums.find("type"); type != info.checksums.end()) {
      r.headers.Set("x-amz-checksum-type", type->second);
    }
  }
  if (head) {
    r.head_length = length;
    return r;
  }
  if (opened) {
    r.stream = std::move(opened);
    r.stream_length = length;
    return r;
  }
  ObjectInfo again;
  TM_ASSIGN(auto reader, store_.Get(ctx.bucket, where.stored_key, offset, length, &again));
  if (again.etag != stored.etag) {
    // Overwritten between HEAD and open: serve the new version consistently.
    return ReadObject(ctx, head);
  }
  r.stream = std::move(reader);
  r.stream_length = length;
  return r;
}

Result<http::Response> Adapter::PutObject(Ctx& ctx) {
  TM_TRY(service_.CheckWritable(ctx.identity, ctx.bucket, ctx.key));
  TM_TRY(CheckNoGrants(ctx.req.headers));
  TM_ASSIGN(auto tags, TaggingFromHeader(ctx.req.headers));
  TM_ASSIGN(std::string acl,
            service_.CannedAclForWrite(ctx.identity, ctx.bucket, ctx.req.headers.Get("x-amz-acl")));
  // The object lock the new version gets, refused before its body when the bucket has none.
  TM_ASSIGN(auto asked_lock, LockRequestOf(ctx.req.headers));
  ObjectInfo locked;
  TM_TRY(service_.LockForWrite(ctx.bucket, asked_lock, locked));
  // Checked before the body is received (a cheap early answer) and again atomically when
  // the object is published (so two conditional writers cannot both succeed).
  tablemere::s3::Conditions conditions = ConditionsFrom(ctx.req.headers);
  TM_TRY(service_.CheckWriteConditions(ctx.bucket, ctx.key, conditions));
  std::map<std::string, std::string> headers = StoredHeaders(ctx.req.headers);
  TM_ASSIGN(auto writer,
            store_.BeginPut(ctx.bucket, ctx.key, tablemere::s3::PublishConditions(conditions),
                            DeclaredBodySize(ctx), headers));
  TM_ASSIGN(ReceivedBody body, ReceiveBody(ctx, *writer, std::nullopt));
  ObjectInfo info = std::move(locked);
  info.headers = std::move(headers);
  if (tags) info.tags = std::move(*tags);
  info.acl = std::move(acl);
  if (body.algorithm) {
    info.checksums[storage::ChecksumAlgorithmName(*body.algorithm)] =
        crypto::Base64Encode(body.checksum_raw);
    info.checksums["type"] = "FULL_OBJECT";
    info.checksums["algorithm"] = storage::ChecksumAlgorithmName(*body.algorithm);
  }
  std::string version_id;
  TM_ASSIGN(ObjectInfo stored,
            service_.PublishWrite(ctx.bucket, ctx.key, [&](const std::string& id) {
              info.version_id = version_id = id;
              return writer->Commit(std::move(info));
            }));
  http::Response r = UploadAnswer(stored.etag, body, true);
  SetVersionHeader(r, version_id);
  return r;
}

bool BypassesGovernance(const Ctx& ctx) {
  return EqualsIgnoreCase(Trim(ctx.req.headers.GetOr("x-amz-bypass-governance-retention", "")),
                          "true");
}

std::optional<std::string> VersionIdOf(const Ctx& ctx) {
  if (!ctx.Has("versionId")) return std::nullopt;
  return ctx.Q("versionId");
}

void SetVersionHeader(http::Response& r, const std::string& version_id) {
  if (!version_id.empty()) r.headers.Set("x-amz-version-id", version_id);
}

Result<CopySource> CopySourceOf(const Ctx& ctx) {
  std::string source = *ctx.req.headers.Get("x-amz-copy-source");
  std::optional<std::string> version_id;
  size_t q = source.find('?');
  if (q != std::string::npos) {
    auto query = ParseQuery(source.substr(q + 1));
    if (query) {
      for (const auto& [name, value] : *query) {
        if (name == "versionId") version_id = value;
      }
    }
    source = source.substr(0, q);
  }
  auto decoded = UrlDecode(source);
  if (!decoded)
    return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidArgument", "Invalid copy source"));
  std::string src = *decoded;
  if (src.starts_with("/")) src = src.substr(1);
  size_t slash = src.find('/');
  if (slash == std::string::npos || slash + 1 >= src.size()) {
    return Fail(
        S3Error(ErrorCode::kInvalidInput, "InvalidArgument",
                "Copy Source must mention the source bucket and key: sourcebucket/sourcekey"));
  }
  return CopySource{src.substr(0, slash), src.substr(slash + 1), std::move(version_id)};
}

// x-amz-copy-source-if-(none-)match / -if-(un)modified-since against the source.
Result<void> CheckCopySourceConditions(const Ctx& ctx, const ObjectInfo& src_info) {
  auto conditions = ConditionsFrom(ctx.req.headers, "x-amz-copy-source-");
  if (tablemere::s3::Evaluate(conditions, src_info, false) !=
      tablemere::s3::ConditionOutcome::kProceed) {
    return Fail(PreconditionFailed());
  }
  return {};
}

Result<http::Response> Adapter::CopyObject(Ctx& ctx) {
  TM_ASSIGN(CopySource source, CopySourceOf(ctx));
  const std::string& src_bucket = source.bucket;
  TM_TRY(service_.Authorize(ctx.identity, src_bucket, source.key, Access::kRead));
  TM_TRY(service_.CheckWritable(ctx.identity, ctx.bucket, ctx.key));
  TM_ASSIGN(auto from, service_.ReadVersion(src_bucket, source.key, source.version_id));
  TM_ASSIGN(ObjectInfo src_info, store_.Head(src_bucket, from.stored_key));
  from.ApplyTo(src_info);
  TM_TRY(CheckCopySourceConditions(ctx, src_info));
  TM_ASSIGN(std::string acl,
            service_.CannedAclForWrite(ctx.identity, ctx.bucket, ctx.req.headers.Get("x-amz-acl")));
  // The copy's metadata and tags come from the source unless the directives say REPLACE;
  // its ACL is never copied (private unless x-amz-acl says otherwise), as in S3.
  const bool replace_meta =
      EqualsIgnoreCase(ctx.req.headers.GetOr("x-amz-metadata-directive", "COPY"), "REPLACE");
  const bool replace_tags =
      EqualsIgnoreCase(ctx.req.headers.GetOr("x-amz-tagging-directive", "COPY"), "REPLACE");
  // A copy is a new version: its lock is what this request asks for (or the bucket's
  // default), never the source's.
  ObjectInfo meta;
  TM_ASSIGN(auto asked_lock, LockRequestOf(ctx.req.headers));
  TM_TRY(service_.LockForWrite(ctx.bucket, asked_lock, meta));
  meta.headers = replace_meta ? StoredHeaders(ctx.req.headers) : src_info.headers;
  meta.checksums = src_info.checksums;
  meta.tags = src_info.tags;
  if (replace_tags) {
    TM_ASSIGN(auto tags, TaggingFromHeader(ctx.req.headers));
    meta.tags = tags.value_or(std::map<std::string, std::string>{});
  }
  meta.acl = std::move(acl);
  // Copying an older version onto its own key is how one restores it.
  if (!replace_meta && !replace_tags && src_bucket == ctx.bucket && source.key == ctx.key &&
      from.stored_key == ctx.key) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                        "This copy request is illegal because it is trying to copy an object to "
                        "itself without changing the object's metadata."));
  }
  std::string version_id;
  TM_ASSIGN(ObjectInfo copied,
            service_.PublishWrite(ctx.bucket, ctx.key, [&](const std::string& id) {
              meta.version_id = version_id = id;
              return store_.Copy(src_bucket, from.stored_key, ctx.bucket, ctx.key, meta);
            }));
  XmlWriter x;
  x.Open("CopyObjectResult", true)
      .Element("LastModified", FormatIso8601(copied.last_modified_ms))
      .Element("ETag", Quote(copied.etag))
      .Close("CopyObjectResult");
  http::Response r = Xml(200, x.Take());
  SetVersionHeader(r, version_id);
  if (!src_info.version_id.empty()) {
    r.headers.Set("x-amz-copy-source-version-id", src_info.version_id);
  }
  return r;
}

// GetObjectAttributes: what SDKs and the AWS CLI ask to verify a (multipart) upload.
Result<http::Response> Adapter::GetObjectAttributes(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kRead));
  auto wanted_header = ctx.req.headers.Get("x-amz-object-attributes");
  if (!wanted_header || Trim(*wanted_header).empty()) {
    return Fail(tablemere::s3::InvalidArgument(
        "The x-amz-object-attributes header specifying the attributes to be retrieved is either "
        "missing or empty"));
  }
  std::set<std::string> wanted;
  for (const auto& a : Split(*wanted_header, ',')) {
    std::string name = Trim(a);
    if (name != "ETag" && name != "Checksum" && name != "ObjectParts" && name != "StorageClass" &&
        name != "ObjectSize") {
      return Fail(tablemere::s3::InvalidArgument("Invalid attribute name specified."));
    }
    wanted.insert(name);
  }
  int64_t max_parts = 1000;
  int64_t marker = 0;
  if (auto v = ctx.req.headers.Get("x-amz-max-parts")) {
    auto n = ParseInt(Trim(*v));
    if (!n || *n < 0) return Fail(tablemere::s3::InvalidArgument("Invalid x-amz-max-parts"));
    max_parts = std::min<int64_t>(*n, 1000);
  }
  if (auto v = ctx.req.headers.Get("x-amz-part-number-marker")) {
    auto n = ParseInt(Trim(*v));
    if (!n || *n < 0) {
      return Fail(tablemere::s3::InvalidArgument("Invalid x-amz-part-number-marker"));
    }
    marker = *n;
  }
  TM_ASSIGN(ObjectInfo info, service_.HeadVersion(ctx.bucket, ctx.key, VersionIdOf(ctx)));
  TM_ASSIGN(auto not_modified, ReadConditions(ctx, info));
  if (not_modified) return std::move(*not_modified);
  std::string algorithm;
  if (auto a = info.checksums.find("algorithm"); a != info.checksums.end()) algorithm = a->second;
  XmlWriter x;
  x.Open("GetObjectAttributesResponse", true);
  // S3 answers this ETag unquoted.
  if (wanted.count("ETag")) x.Element("ETag", info.etag);
  if (wanted.count("Checksum") && !algorithm.empty()) {
    auto value = info.checksums.find(algorithm);
    if (value != info.checksums.end()) {
      x.Open("Checksum").Element("Checksum" + algorithm, value->second);
      if (auto t = info.checksums.find("type"); t != info.checksums.end()) {
        x.Element("ChecksumType", t->second);
      }
      x.Close("Checksum");
    }
  }
  if (wanted.count("ObjectParts") && !info.part_sizes.empty()) {
    const int64_t total = static_cast<int64_t>(info.part_sizes.size());
    x.Open("ObjectParts")
        .Element("PartsCount", std::to_string(total))
        .Element("PartNumberMarker", std::to_string(marker))
        .Element("MaxParts", std::to_string(max_parts));
    int64_t last = marker;
    int64_t shown = 0;
    // Parts are listed with their checksums, which only uploads made with one have.
    if (!info.part_checksums.empty()) {
      for (int64_t n = marker + 1; n <= total && shown < max_parts; n++, shown++) {
        x.Open("Part")
            .Element("PartNumber", std::to_string(n))
            .Element("Size", std::to_string(info.part_sizes[n - 1]));
        const std::string& sum = info.part_checksums[n - 1];
        if (!sum.empty()) x.Element("Checksum" + algorithm, sum);
        x.Close("Part");
        last = n;
      }
    }
    bool truncated = !info.part_checksums.empty() && last < total;
    x.Element("NextPartNumberMarker", std::to_string(last))
        .Element("IsTruncated", truncated ? "true" : "false")
        .Close("ObjectParts");
  }
  if (wanted.count("StorageClass")) x.Element("StorageClass", "STANDARD");
  if (wanted.count("ObjectSize")) x.Element("ObjectSize", std::to_string(info.size));
  x.Close("GetObjectAttributesResponse");
  http::Response r = Xml(200, x.Take());
  r.headers.Set("Last-Modified", FormatHttpDate(info.last_modified_ms));
  SetVersionHeader(r, info.version_id);
  return r;
}

Result<http::Response> Adapter::DeleteObject(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kDelete));
  TM_ASSIGN(auto done, service_.DeleteObject(ctx.identity, ctx.bucket, ctx.key, VersionIdOf(ctx),
                                             BypassesGovernance(ctx)));
  http::Response r;
  r.status = 204;
  SetVersionHeader(r, done.version_id);
  if (done.delete_marker) r.headers.Set("x-amz-delete-marker", "true");
  return r;
}

Result<http::Response> Adapter::DeleteObjects(Ctx& ctx) {
  TM_ASSIGN(std::string body, http::ReadAll(*ctx.req.body, kMaxXmlBody));
  if (auto md5 = ctx.req.headers.Get("Content-MD5")) {
    TM_TRY(CheckContentMd5Form(*md5));
    if (crypto::Base64Encode(crypto::Md5(body)) != Trim(*md5)) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "BadDigest",
                          "The Content-MD5 you specified did not match what we received."));
    }
  }
  pugi::xml_document doc;
  // Keys are taken byte-exact: without parse_ws_pcdata pugixml drops a key that is all
  // whitespace (' '), and S3 keys may be exactly that.
  if (!doc.load_buffer(body.data(), body.size(), pugi::parse_default | pugi::parse_ws_pcdata)) {
    return Fail(MalformedXml());
  }
  pugi::xml_node root = doc.child("Delete");
  if (!root) return Fail(MalformedXml());
  bool quiet = std::string(root.child_value("Quiet")) == "true";
  XmlWriter x;
  x.Open("DeleteResult", true);
  int count = 0;
  for (pugi::xml_node obj : root.children("Object")) {
    if (++count > 1000) return Fail(MalformedXml());
    std::string key = obj.child_value("Key");
    std::optional<std::string> version_id;
    if (obj.child("VersionId")) version_id = obj.child_value("VersionId");
    if (key.empty()) {
      x.Open("Error")
          .Element("Key", key)
          .Element("Code", "InvalidArgument")
          .Element("Message", "An object key must not be empty.")
          .Close("Error");
      continue;
    }
    auto allowed = service_.Authorize(ctx.identity, ctx.bucket, key, Access::kDelete);
    auto result = allowed ? service_.DeleteObject(ctx.identity, ctx.bucket, key, version_id,
                                                  BypassesGovernance(ctx))
                          : Result<tablemere::s3::DeleteOutcome>(std::unexpected(allowed.error()));
    if (result) {
      if (!quiet) {
        x.Open("Deleted").Element("Key", key);
        // S3 names the version asked for, and the delete marker a plain delete made.
        if (version_id) x.Element("VersionId", *version_id);
        if (result->delete_marker) {
          x.Element("DeleteMarker", "true");
          if (!version_id) x.Element("DeleteMarkerVersionId", result->version_id);
        }
        x.Close("Deleted");
      }
    } else {
      std::string code;
      StatusFor(result.error(), &code);
      x.Open("Error").Element("Key", key);
      if (version_id) x.Element("VersionId", *version_id);
      x.Element("Code", code).Element("Message", result.error().message).Close("Error");
    }
  }
  x.Close("DeleteResult");
  return Xml(200, x.Take());
}

}  // namespace tablemere::api::s3
