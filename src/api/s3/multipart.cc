// Multipart uploads: create, upload a part (or copy one), list parts, complete, abort.
#include <pugixml.hpp>

#include "api/s3/adapter.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {

using objectstore::ObjectInfo;
using storage::ChecksumAlgorithm;
using tablemere::s3::MalformedXml;
using tablemere::s3::S3Error;

namespace {

// Bytes copied per step by UploadPartCopy.
constexpr size_t kCopySlice = 1024 * 1024;

Result<int> PartNumber(const Ctx& ctx) {
  auto number = ParseInt(ctx.Q("partNumber"));
  if (!number || *number < 1 || *number > tablemere::s3::kMaxPartNumber) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidArgument",
                        "Part number must be an integer between 1 and 10000, inclusive"));
  }
  return static_cast<int>(*number);
}

std::optional<ChecksumAlgorithm> UploadAlgorithm(const objectstore::UploadInfo& upload) {
  auto it = upload.pending.checksums.find("algorithm");
  if (it == upload.pending.checksums.end()) return std::nullopt;
  return storage::ParseChecksumAlgorithm(it->second);
}

}  // namespace

Result<http::Response> Adapter::CreateUpload(Ctx& ctx) {
  TM_TRY(service_.CheckWritable(ctx.identity, ctx.bucket, ctx.key));
  ObjectInfo pending;
  pending.headers = StoredHeaders(ctx.req.headers);
  TM_ASSIGN(auto tags, TaggingFromHeader(ctx.req.headers));
  if (tags) pending.tags = std::move(*tags);
  TM_ASSIGN(pending.acl,
            service_.CannedAclForWrite(ctx.identity, ctx.bucket, ctx.req.headers.Get("x-amz-acl")));
  const http::Headers& h = ctx.req.headers;
  std::string alg_name = Trim(h.GetOr("x-amz-checksum-algorithm", ""));
  std::string type = ToLower(Trim(h.GetOr("x-amz-checksum-type", "")));
  if (!alg_name.empty()) {
    auto alg = storage::ParseChecksumAlgorithm(alg_name);
    if (!alg) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "Checksum algorithm provided is unsupported."));
    }
    std::string t = type.empty()
                        ? (*alg == ChecksumAlgorithm::kCrc64Nvme ? "FULL_OBJECT" : "COMPOSITE")
                        : (type == "full_object" ? "FULL_OBJECT"
                           : type == "composite" ? "COMPOSITE"
                                                 : "");
    if (t.empty() || (t == "FULL_OBJECT" && !storage::IsCrc(*alg)) ||
        (t == "COMPOSITE" && *alg == ChecksumAlgorithm::kCrc64Nvme)) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "The " + alg_name + " checksum algorithm does not support the " + type +
                              " checksum type."));
    }
    pending.checksums["algorithm"] = storage::ChecksumAlgorithmName(*alg);
    pending.checksums["type"] = t;
  }
  TM_ASSIGN(auto lock, LockRequestOf(ctx.req.headers));
  TM_TRY(service_.LockForWrite(ctx.bucket, lock, pending));
  TM_ASSIGN(auto upload, store_.CreateUpload(ctx.bucket, ctx.key, pending));
  XmlWriter x;
  x.Open("InitiateMultipartUploadResult", true)
      .Element("Bucket", ctx.bucket)
      .Element("Key", ctx.key)
      .Element("UploadId", upload.upload_id)
      .Close("InitiateMultipartUploadResult");
  http::Response r = Xml(200, x.Take());
  if (!alg_name.empty()) {
    r.headers.Set("x-amz-checksum-algorithm", pending.checksums["algorithm"]);
    r.headers.Set("x-amz-checksum-type", pending.checksums["type"]);
  }
  return r;
}

// A part copied from (a byte range of) an existing object; boto3's managed copy()
// and `aws s3 cp s3://… s3://…` use it for large objects.
Result<http::Response> Adapter::UploadPartCopy(Ctx& ctx) {
  TM_ASSIGN(CopySource source, CopySourceOf(ctx));
  const std::string& src_bucket = source.bucket;
  TM_TRY(service_.Authorize(ctx.identity, src_bucket, source.key, Access::kRead));
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kWrite));
  TM_ASSIGN(int number, PartNumber(ctx));
  TM_ASSIGN(auto upload, service_.Upload(ctx.bucket, ctx.key, ctx.Q("uploadId")));
  TM_ASSIGN(auto from, service_.ReadVersion(src_bucket, source.key, source.version_id));
  const std::string& src_key = from.stored_key;
  TM_ASSIGN(ObjectInfo src_info, store_.Head(src_bucket, src_key));
  const std::string src_etag = src_info.etag;  // the stored copy's, which the read checks
  from.ApplyTo(src_info);
  TM_TRY(CheckCopySourceConditions(ctx, src_info));
  uint64_t offset = 0;
  uint64_t length = src_info.size;
  if (auto range = ctx.req.headers.Get("x-amz-copy-source-range")) {
    // S3 accepts only the explicit form "bytes=first-last" here.
    std::string spec = Trim(*range);
    size_t dash = spec.find('-');
    std::optional<int64_t> first, last;
    if (spec.starts_with("bytes=") && dash != std::string::npos) {
      first = ParseInt(spec.substr(6, dash - 6));
      last = ParseInt(spec.substr(dash + 1));
    }
    if (!first || !last || *last < *first) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidArgument",
                          "The x-amz-copy-source-range value must be of the form bytes=first-last "
                          "where first and last are the zero-based offsets of the first and last "
                          "bytes to copy"));
    }
    if (static_cast<uint64_t>(*last) >= src_info.size) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRange",
                          "The requested range is not satisfiable"));
    }
    offset = static_cast<uint64_t>(*first);
    length = static_cast<uint64_t>(*last - *first + 1);
  }
  ObjectInfo opened;
  TM_ASSIGN(auto reader, store_.Get(src_bucket, src_key, offset, length, &opened));
  if (opened.etag != src_etag) {
    return Fail(S3Error(ErrorCode::kConflict, "PreconditionFailed",
                        "The source object changed during the copy; retry."));
  }
  std::optional<ChecksumAlgorithm> upload_alg = UploadAlgorithm(upload);
  std::optional<storage::Checksummer> checksummer;
  if (upload_alg) checksummer.emplace(*upload_alg);
  TM_ASSIGN(auto writer, store_.BeginPart(ctx.bucket, upload.upload_id, number, length));
  std::string buffer(kCopySlice, '\0');
  uint64_t copied = 0;
  while (true) {
    auto n = reader->Read(buffer.data(), buffer.size());
    if (!n) {
      writer->Abort();
      return Fail(n.error());
    }
    if (*n == 0) break;
    if (checksummer) checksummer->Update(buffer.data(), *n);
    if (auto wrote = writer->Write(buffer.data(), *n); !wrote) {
      writer->Abort();
      return Fail(wrote.error());
    }
    copied += *n;
  }
  if (copied != length) {
    writer->Abort();
    return Fail(Error{ErrorCode::kUnavailable, "copy source ended early", {}});
  }
  ObjectInfo info;
  std::string checksum;
  if (checksummer) {
    checksum = crypto::Base64Encode(checksummer->Finish());
    info.checksums[storage::ChecksumAlgorithmName(*upload_alg)] = checksum;
  }
  TM_ASSIGN(ObjectInfo stored, writer->Commit(std::move(info)));
  XmlWriter x;
  x.Open("CopyPartResult", true)
      .Element("LastModified", FormatIso8601(stored.last_modified_ms))
      .Element("ETag", Quote(stored.etag));
  if (checksummer) {
    x.Element(std::string("Checksum") + storage::ChecksumAlgorithmName(*upload_alg), checksum);
  }
  x.Close("CopyPartResult");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::UploadPart(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kWrite));
  TM_ASSIGN(int number, PartNumber(ctx));
  TM_ASSIGN(auto upload, service_.Upload(ctx.bucket, ctx.key, ctx.Q("uploadId")));
  std::optional<ChecksumAlgorithm> upload_alg = UploadAlgorithm(upload);
  TM_ASSIGN(auto writer,
            store_.BeginPart(ctx.bucket, upload.upload_id, number, DeclaredBodySize(ctx)));
  TM_ASSIGN(ReceivedBody body, ReceiveBody(ctx, *writer, upload_alg));
  ObjectInfo info;
  if (body.algorithm) {
    info.checksums[storage::ChecksumAlgorithmName(*body.algorithm)] =
        crypto::Base64Encode(body.checksum_raw);
  }
  TM_ASSIGN(ObjectInfo stored, writer->Commit(std::move(info)));
  return UploadAnswer(stored.etag, body, false);
}

Result<http::Response> Adapter::ListParts(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kRead));
  TM_ASSIGN(auto upload, service_.Upload(ctx.bucket, ctx.key, ctx.Q("uploadId")));
  TM_ASSIGN(auto parts, store_.ListParts(ctx.bucket, upload.upload_id));
  int64_t marker = ParseInt(ctx.Q("part-number-marker")).value_or(0);
  int64_t max_parts = ctx.Has("max-parts") ? ParseInt(ctx.Q("max-parts")).value_or(1000) : 1000;
  XmlWriter x;
  x.Open("ListPartsResult", true)
      .Element("Bucket", ctx.bucket)
      .Element("Key", ctx.key)
      .Element("UploadId", upload.upload_id)
      .Element("PartNumberMarker", std::to_string(marker))
      .Element("MaxParts", std::to_string(max_parts))
      .Element("StorageClass", "STANDARD");
  int64_t shown = 0;
  bool truncated = false;
  int last = 0;
  std::string body;
  XmlWriter parts_xml;
  for (const auto& p : parts) {
    if (p.part_number <= marker) continue;
    if (shown == max_parts) {
      truncated = true;
      break;
    }
    shown++;
    last = p.part_number;
    x.Open("Part")
        .Element("PartNumber", std::to_string(p.part_number))
        .Element("LastModified", FormatIso8601(p.last_modified_ms))
        .Element("ETag", Quote(p.etag))
        .Element("Size", std::to_string(p.size));
    for (const auto& [alg, value] : p.checksums) {
      if (auto a = storage::ParseChecksumAlgorithm(alg)) {
        x.Element(std::string("Checksum") + storage::ChecksumAlgorithmName(*a), value);
      }
    }
    x.Close("Part");
  }
  x.Element("NextPartNumberMarker", std::to_string(last))
      .Element("IsTruncated", truncated ? "true" : "false")
      .Close("ListPartsResult");
  return Xml(200, x.Take());
}

Result<http::Response> Adapter::CompleteUpload(Ctx& ctx) {
  TM_ASSIGN(std::string body, http::ReadAll(*ctx.req.body, kMaxXmlBody));
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size())) return Fail(MalformedXml());
  pugi::xml_node root = doc.child("CompleteMultipartUpload");
  if (!root) return Fail(MalformedXml());
  std::vector<tablemere::s3::RequestedPart> parts;
  for (pugi::xml_node node : root.children("Part")) {
    auto n = ParseInt(Trim(node.child_value("PartNumber")));
    if (!n || *n < 1 || *n > tablemere::s3::kMaxPartNumber) return Fail(MalformedXml());
    tablemere::s3::RequestedPart part;
    part.number = static_cast<int>(*n);
    part.etag = tablemere::s3::UnquoteEtag(node.child_value("ETag"));
    for (pugi::xml_node child : node.children()) {
      std::string name = child.name();
      if (!name.starts_with("Checksum")) continue;
      auto alg = storage::ParseChecksumAlgorithm(name.substr(8));
      if (!alg) continue;
      part.checksums[storage::ChecksumAlgorithmName(*alg)] = Trim(child.child_value());
    }
    parts.push_back(std::move(part));
  }
  // x-amz-checksum-<alg> here is the client's checksum of the whole object.
  std::optional<tablemere::s3::NamedChecksum> whole;
  for (const auto& [name, value] : ctx.req.headers.entries()) {
    const std::string lower = ToLower(name);
    if (!lower.starts_with("x-amz-checksum-") || lower == "x-amz-checksum-type" ||
        lower == "x-amz-checksum-algorithm") {
      continue;
    }
    auto alg = storage::ParseChecksumAlgorithm(lower.substr(15));
    if (alg) whole = tablemere::s3::NamedChecksum{storage::ChecksumAlgorithmName(*alg), value};
  }
  // If-None-Match: * / If-Match make a complete conditional, as they do a PutObject.
  TM_ASSIGN(auto done, service_.Complete(ctx.identity, ctx.bucket, ctx.key, ctx.Q("uploadId"),
                                         parts, ConditionsFrom(ctx.req.headers), whole));
  XmlWriter x;
  x.Open("CompleteMultipartUploadResult", true)
      .Element("Location", "/" + ctx.bucket + "/" + ctx.key)
      .Element("Bucket", ctx.bucket)
      .Element("Key", ctx.key)
      .Element("ETag", Quote(done.object.etag));
  if (!done.checksum_algorithm.empty()) {
    x.Element("Checksum" + done.checksum_algorithm, done.checksum_value)
        .Element("ChecksumType", done.checksum_type);
  }
  x.Close("CompleteMultipartUploadResult");
  http::Response r = Xml(200, x.Take());
  SetVersionHeader(r, done.object.version_id);
  return r;
}

Result<http::Response> Adapter::AbortUpload(Ctx& ctx) {
  TM_TRY(service_.Authorize(ctx.identity, ctx.bucket, ctx.key, Access::kWrite));
  TM_TRY(store_.AbortUpload(ctx.bucket, ctx.Q("uploadId")));
  http::Response r;
  r.status = 204;
  return r;
}

}  // namespace tablemere::api::s3
