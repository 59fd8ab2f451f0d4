// Receiving upload bodies (PutObject, UploadPart): aws-chunked framing, payload hashes,
// Content-MD5 and flexible checksums, streamed into an object-store writer.
#include <algorithm>
#include <memory>

#include "api/s3/adapter.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "s3/errors.h"
#include "storage/aws_chunked.h"

namespace tablemere::api::s3 {

using storage::ChecksumAlgorithm;
using tablemere::s3::kMaxObjectSize;
using tablemere::s3::S3Error;

namespace {

// Bytes read from the socket per step while streaming an upload.
constexpr size_t kUploadSlice = 1024 * 1024;
// Smallest such step, for bodies shorter than a slice (and the empty body).
constexpr size_t kMinUploadSlice = 4 * 1024;

// Request headers that are stored with an object and returned on GET/HEAD.
bool IsStoredHeader(const std::string& lower) {
  return lower == "content-type" || lower == "content-encoding" || lower == "cache-control" ||
         lower == "content-disposition" || lower == "content-language" || lower == "expires" ||
         lower.starts_with("x-amz-meta-");
}

// An x-amz-checksum-<alg> header naming an algorithm we cannot compute (newer SDKs
// offer xxhash64, sha512, …). Ignoring it would acknowledge an unverified upload.
bool IsUnsupportedChecksumHeader(const std::string& lower) {
  static constexpr char kPrefix[] = "x-amz-checksum-";
  if (!lower.starts_with(kPrefix)) return false;
  std::string alg = lower.substr(sizeof kPrefix - 1);
  if (alg == "mode" || alg == "type" || alg == "algorithm") return false;
  return !storage::ParseChecksumAlgorithm(alg);
}

std::optional<ChecksumAlgorithm> AlgorithmFromHeaderName(const std::string& lower) {
  static constexpr char kPrefix[] = "x-amz-checksum-";
  if (!lower.starts_with(kPrefix)) return std::nullopt;
  std::string alg = lower.substr(sizeof kPrefix - 1);
  if (alg == "mode" || alg == "type" || alg == "algorithm") return std::nullopt;
  return storage::ParseChecksumAlgorithm(alg);
}

}  // namespace

std::map<std::string, std::string> StoredHeaders(const http::Headers& headers) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : headers.entries()) {
    std::string lower = ToLower(k);
    if (!IsStoredHeader(lower)) continue;
    if (lower == "content-encoding") {
      // aws-chunked is transfer framing, not the object's encoding: it alone is dropped,
      // and a value without it is kept exactly as sent ("deflate, gzip" stays so).
      std::string kept;
      bool framing = false;
      for (const auto& part : Split(v, ',')) {
        std::string t = Trim(part);
        if (EqualsIgnoreCase(t, "aws-chunked")) {
          framing = true;
          continue;
        }
        if (!t.empty()) kept += (kept.empty() ? "" : ", ") + t;
      }
      if (!framing) kept = v;
      if (Trim(kept).empty()) continue;
      out["Content-Encoding"] = kept;
      continue;
    }
    std::string name = lower.starts_with("x-amz-meta-") ? lower : k;
    if (lower == "content-type") name = "Content-Type";
    out[name] = v;
  }
  return out;
}

// A Content-MD5 that is not the base64 of 16 bytes is InvalidDigest; BadDigest means a
// well-formed digest that does not match the body.
Result<void> CheckContentMd5Form(const std::string& header) {
  auto raw = crypto::Base64Decode(Trim(header));
  if (!raw || raw->size() != 16) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidDigest",
                        "The Content-MD5 you specified was invalid."));
  }
  return {};
}

http::Response UploadAnswer(const std::string& etag, const ReceivedBody& body, bool full_object) {
  http::Response r;
  r.headers.Set("ETag", Quote(etag));
  if (body.algorithm) {
    r.headers.Set(storage::ChecksumHeaderName(*body.algorithm),
                  crypto::Base64Encode(body.checksum_raw));
    if (full_object) r.headers.Set("x-amz-checksum-type", "FULL_OBJECT");
  }
  return r;
}

std::optional<uint64_t> Adapter::DeclaredBodySize(const Ctx& ctx) {
  if (ctx.auth.payload_hash.starts_with("STREAMING-")) {
    auto v = ctx.req.headers.Get("x-amz-decoded-content-length");
    if (!v) return std::nullopt;
    auto n = ParseInt(Trim(*v));
    if (!n || *n < 0) return std::nullopt;
    return static_cast<uint64_t>(*n);
  }
  return ctx.req.body->declared_length();
}

Result<ReceivedBody> Adapter::ReceiveBody(Ctx& ctx, objectstore::ObjectWriter& writer,
                                          std::optional<ChecksumAlgorithm> default_algorithm) {
  auto result = ReceiveBodyInner(ctx, writer, default_algorithm);
  if (!result) writer.Abort();
  return result;
}

Result<ReceivedBody> Adapter::ReceiveBodyInner(Ctx& ctx, objectstore::ObjectWriter& writer,
                                               std::optional<ChecksumAlgorithm> default_algorithm) {
  const http::Headers& h = ctx.req.headers;
  std::string payload = ctx.auth.payload_hash;
  if (payload.starts_with("STREAMING-AWS4-ECDSA")) {
    return Fail(S3Error(ErrorCode::kNotImplemented, "NotImplemented",
                        "SigV4a streaming signatures are not supported; use SigV4."));
  }
  bool chunked = payload.starts_with("STREAMING-");
  bool signed_chunks = payload.starts_with("STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
  bool verify_sha256 = payload.size() == 64 && payload != "UNSIGNED-PAYLOAD";

  // Which checksum to compute, and the expected value if one was sent in a header.
  std::optional<ChecksumAlgorithm> algorithm;
  std::string expected;
  int header_checksums = 0;
  for (const auto& [k, v] : h.entries()) {
    std::string lower = ToLower(k);
    if (IsUnsupportedChecksumHeader(lower)) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "The checksum algorithm of header " + lower + " is not supported."));
    }
    auto alg = AlgorithmFromHeaderName(lower);
    if (!alg) continue;
    header_checksums++;
    algorithm = alg;
    expected = Trim(v);
  }
  std::string trailer = ToLower(h.GetOr("x-amz-trailer", ""));
  std::optional<ChecksumAlgorithm> trailer_alg;
  if (!trailer.empty()) {
    trailer_alg = AlgorithmFromHeaderName(Trim(trailer));
    if (!trailer_alg) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "The value specified in the x-amz-trailer header is not supported"));
    }
    if (header_checksums > 0) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "Expecting a single x-amz-checksum- header"));
    }
    algorithm = trailer_alg;
  }
  if (header_checksums > 1) {
    return Fail(S3Error(
        ErrorCode::kInvalidInput, "InvalidRequest",
        "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."));
  }
  if (!algorithm) {
    if (auto sdk = h.Get("x-amz-sdk-checksum-algorithm")) {
      algorithm = storage::ParseChecksumAlgorithm(Trim(*sdk));
      if (!algorithm) {
        return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                            "Value for x-amz-sdk-checksum-algorithm header is invalid."));
      }
    }
  }
  if (!algorithm) algorithm = default_algorithm;

  std::optional<uint64_t> decoded_length;
  if (chunked) {
    auto v = h.Get("x-amz-decoded-content-length");
    if (v) {
      auto n = ParseInt(Trim(*v));
      if (!n)
        return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidArgument",
                            "Invalid x-amz-decoded-content-length"));
      decoded_length = static_cast<uint64_t>(*n);
    } else {
      return Fail(S3Error(ErrorCode::kInvalidInput, "MissingContentLength",
                          "You must provide the x-amz-decoded-content-length header."));
    }
  } else if (!ctx.req.body->declared_length() && !h.Has("Transfer-Encoding")) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "MissingContentLength",
                        "You must provide the Content-Length HTTP header."));
  }
  // A plain body sent with Transfer-Encoding: chunked declares no length; the HTTP
  // framing itself marks its end, so there is nothing to compare the total against.
  std::optional<uint64_t> declared =
      decoded_length ? decoded_length : ctx.req.body->declared_length();
  if (declared && *declared > kMaxObjectSize) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "EntityTooLarge",
                        "Your proposed upload exceeds the maximum allowed object size."));
  }

  std::optional<storage::AwsChunkedDecoder> decoder;
  if (chunked) {
    storage::ChunkSigningContext sc;
    sc.signed_chunks = signed_chunks;
    sc.has_trailer = trailer_alg.has_value();
    sc.signing_key = ctx.signing_key;
    sc.amz_date = ctx.auth.amz_date;
    sc.scope = storage::Scope(ctx.auth);
    sc.seed_signature = ctx.auth.signature;
    decoder.emplace(std::move(sc));
  }
  std::optional<storage::Checksummer> checksummer;
  if (algorithm) checksummer.emplace(*algorithm);
  std::optional<crypto::Digest> sha256;
  if (verify_sha256) sha256.emplace(crypto::DigestAlgorithm::kSha256);
  std::optional<std::string> content_md5 = h.Get("Content-MD5");
  std::optional<crypto::Digest> md5;
  if (content_md5) {
    TM_TRY(CheckContentMd5Form(*content_md5));
    md5.emplace(crypto::DigestAlgorithm::kMd5);
  }

  // Sized to the body when it is smaller than a slice, and never zero-filled: clearing
  // a whole slice for every 4 KiB PUT cost more CPU than the rest of the request.
  const size_t slice = static_cast<size_t>(std::clamp<uint64_t>(
      ctx.req.body->declared_length().value_or(kUploadSlice), kMinUploadSlice, kUploadSlice));
  auto raw = std::make_unique_for_overwrite<char[]>(slice);
  std::string decoded;
  uint64_t total = 0;
  while (true) {
    auto got = ctx.req.body->Read(raw.get(), slice);
    if (!got) {
      // The client stopped sending (or broke the framing) before the declared end.
      return Fail(
          S3Error(ErrorCode::kInvalidInput, "IncompleteBody",
                  "The request body ended before the declared length: " + got.error().message));
    }
    size_t n = *got;
    if (n == 0) break;
    if (sha256) sha256->Update(raw.get(), n);
    const char* data = raw.get();
    size_t size = n;
    if (decoder) {
      decoded.clear();
      TM_TRY(decoder->Feed(std::string_view(raw.get(), n), decoded));
      data = decoded.data();
      size = decoded.size();
    }
    total += size;
    if (declared && total > *declared) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "IncompleteBody",
                          "The request body is longer than its declared length."));
    }
    if (total > kMaxObjectSize) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "EntityTooLarge",
                          "Your proposed upload exceeds the maximum allowed object size."));
    }
    if (size == 0) continue;
    if (checksummer) checksummer->Update(data, size);
    if (md5) md5->Update(data, size);
    TM_TRY(writer.Write(data, size));
  }
  if (decoder) {
    TM_TRY(decoder->Finish());
    if (trailer_alg) {
      auto it = decoder->trailers().find(storage::ChecksumHeaderName(*trailer_alg));
      if (it == decoder->trailers().end()) {
        return Fail(S3Error(ErrorCode::kInvalidInput, "IncompleteBody",
                            "The request body is missing the declared checksum trailer."));
      }
      expected = Trim(it->second);
    }
  }
  if (declared && total != *declared) {
    return Fail(S3Error(
        ErrorCode::kInvalidInput, "IncompleteBody",
        "You did not provide the number of bytes specified by the Content-Length HTTP header."));
  }
  if (sha256 && crypto::HexEncode(sha256->Finish()) != ToLower(payload)) {
    return Fail(
        S3Error(ErrorCode::kInvalidInput, "XAmzContentSHA256Mismatch",
                "The provided 'x-amz-content-sha256' header does not match what was computed."));
  }
  if (md5 && crypto::Base64Encode(md5->Finish()) != Trim(*content_md5)) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "BadDigest",
                        "The Content-MD5 you specified did not match what we received."));
  }
  ReceivedBody received;
  if (checksummer) {
    received.algorithm = algorithm;
    received.checksum_raw = checksummer->Finish();
    if (!expected.empty() && crypto::Base64Encode(received.checksum_raw) != expected) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "BadDigest",
                          std::string("The ") + storage::ChecksumAlgorithmName(*algorithm) +
                              " you specified did not match the calculated checksum."));
    }
  }
  return received;
}

Result<pugi::xml_node> ReadXmlBody(Ctx& ctx, pugi::xml_document& doc, const char* root) {
  TM_ASSIGN(std::string body, http::ReadAll(*ctx.req.body, kMaxXmlBody));
  if (auto md5 = ctx.req.headers.Get("Content-MD5")) TM_TRY(CheckContentMd5Form(*md5));
  if (!doc.load_buffer(body.data(), body.size())) return Fail(tablemere::s3::MalformedXml());
  pugi::xml_node node = doc.child(root);
  if (!node) return Fail(tablemere::s3::MalformedXml());
  return node;
}

}  // namespace tablemere::api::s3
