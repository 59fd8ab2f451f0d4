// Internal to the S3 wire adapter: the per-request context and the handlers, one file per
// resource (buckets.cc, listing.cc, objects.cc, multipart.cc; body.cc receives upload
// bodies). s3_api.cc parses, authenticates and dispatches through its route table;
// errors.cc maps every Error to S3's status and code. Decisions are the S3 service's
// (src/s3); handlers parse the request, call it, and render XML.
#pragma once

#include <pugixml.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/s3/s3_api.h"
#include "api/s3/xml.h"
#include "common/clock.h"
#include "http/cors.h"
#include "http/message.h"
#include "s3/conditions.h"
#include "s3/service.h"
#include "storage/checksum.h"
#include "storage/sigv4.h"

namespace tablemere::api::s3 {

using tablemere::s3::Access;

struct Ctx {
  http::Request& req;
  std::string bucket;
  std::string key;
  bool has_key = false;
  std::vector<std::pair<std::string, std::string>> query;
  std::map<std::string, std::string> q;  // first value of each parameter
  storage::S3Identity identity;
  storage::ParsedAuth auth;
  std::string signing_key;

  bool Has(const std::string& name) const { return q.count(name) > 0; }
  std::string Q(const std::string& name) const {
    auto it = q.find(name);
    return it == q.end() ? std::string() : it->second;
  }
};

struct ReceivedBody {
  std::optional<storage::ChecksumAlgorithm> algorithm;
  std::string checksum_raw;  // raw digest of `algorithm`
};

// XML request bodies (DeleteObjects of 1000 keys, CompleteMultipartUpload of 10000 parts).
inline constexpr size_t kMaxXmlBody = 4 * 1024 * 1024;

std::string Quote(const std::string& etag);
http::Response Xml(int status, std::string body);
void WriteOwner(XmlWriter& x, const std::string& owner_id);
// If-Match / If-None-Match / If-(Un)Modified-Since from `headers`, whose names may carry
// a prefix (x-amz-copy-source-…).
tablemere::s3::Conditions ConditionsFrom(const http::Headers& headers,
                                         const std::string& prefix = "");
// Headers given on PUT / CreateMultipartUpload that are stored with the object.
std::map<std::string, std::string> StoredHeaders(const http::Headers& headers);
// "x-amz-copy-source: [/]bucket/key[?versionId=…]".
struct CopySource {
  std::string bucket, key;
  std::optional<std::string> version_id;
};
Result<CopySource> CopySourceOf(const Ctx& ctx);
// The ?versionId a request names, if any.
std::optional<std::string> VersionIdOf(const Ctx& ctx);
// x-amz-bypass-governance-retention: true.
bool BypassesGovernance(const Ctx& ctx);
// Sets x-amz-version-id when `version_id` is one ("" in buckets that never had versioning).
void SetVersionHeader(http::Response& r, const std::string& version_id);
// x-amz-copy-source-if-(none-)match / -if-(un)modified-since against the source.
Result<void> CheckCopySourceConditions(const Ctx& ctx, const objectstore::ObjectInfo& src_info);
// An object's tags as a Tagging XML document gives them (a POST form's tagging field),
// validated.
Result<std::map<std::string, std::string>> TaggingFromXml(const std::string& xml);
// Tags given on an upload (x-amz-tagging), validated; nullopt when none were given.
Result<std::optional<std::map<std::string, std::string>>> TaggingFromHeader(
    const http::Headers& headers);
// What a write makes, for the headers only some writes read.
enum class WriteKind { kOther, kNewVersion, kNewBucket };
// Refuses a write whose x-amz-* headers ask for semantics not offered (server-side
// encryption, other storage classes, unknown settings) or not read by this kind of
// write (object lock outside a write of a new version): never accepted and dropped
// (write_headers.cc).
Result<void> RefuseUnofferedHeaders(const http::Headers& headers,
                                    WriteKind kind = WriteKind::kOther);
// The object lock a write's x-amz-object-lock-* headers (or a POST form's fields) ask
// for; InvalidArgument for a date that does not parse.
Result<tablemere::s3::LockRequest> LockRequestOf(const http::Headers& headers);
// x-amz-object-lock-* headers describing an object's lock, on GET and HEAD.
void SetLockHeaders(http::Response& r, const objectstore::ObjectInfo& info);
// x-amz-grant-* headers ask for ACL grants, which are not offered (501).
Result<void> CheckNoGrants(const http::Headers& headers);
// The answer to a stored upload (PutObject, UploadPart): its ETag and the checksum it was
// verified against; `full_object` says the checksum is the whole object's.
http::Response UploadAnswer(const std::string& etag, const ReceivedBody& body, bool full_object);
// A Content-MD5 that is not the base64 of 16 bytes is InvalidDigest.
Result<void> CheckContentMd5Form(const std::string& header);
// A configuration a request's body carries as XML (PUT ?versioning, ?object-lock,
// ?publicAccessBlock…): read into `doc`, answered as its `root` element; MalformedXML
// when it does not parse or has another root.
Result<pugi::xml_node> ReadXmlBody(Ctx& ctx, pugi::xml_document& doc, const char* root);

class Adapter {
 public:
  Adapter(objectstore::RegisteredStore& store, storage::IdentityResolver& identities,
          const Clock& clock, S3ApiOptions options)
      : service_(store, identities),
        store_(store),
        identities_(identities),
        clock_(clock),
        options_(std::move(options)) {}

  http::Response Handle(http::Request& req);
  // The region a bucket reports: its LocationConstraint, else the server's.
  std::string RegionOf(const objectstore::BucketInfo& bucket) const;

  // ---- buckets.cc
  Result<http::Response> ListBuckets(Ctx& ctx);
  Result<http::Response> CreateBucket(Ctx& ctx);
  Result<http::Response> DeleteBucket(Ctx& ctx);
  Result<http::Response> HeadBucket(Ctx& ctx);
  Result<http::Response> GetBucketLocation(Ctx& ctx);
  Result<http::Response> GetBucketVersioning(Ctx& ctx);
  Result<http::Response> PutBucketVersioning(Ctx& ctx);
  // ---- listing.cc
  Result<http::Response> ListObjects(Ctx& ctx);
  Result<http::Response> ListVersions(Ctx& ctx);
  Result<http::Response> ListUploads(Ctx& ctx);
  // ---- objects.cc
  Result<http::Response> GetObject(Ctx& ctx);
  Result<http::Response> HeadObject(Ctx& ctx);
  Result<http::Response> GetObjectAttributes(Ctx& ctx);
  Result<http::Response> PutObject(Ctx& ctx);
  Result<http::Response> CopyObject(Ctx& ctx);
  Result<http::Response> DeleteObject(Ctx& ctx);
  Result<http::Response> DeleteObjects(Ctx& ctx);
  // ---- tagging.cc
  Result<http::Response> GetObjectTagging(Ctx& ctx);
  Result<http::Response> PutObjectTagging(Ctx& ctx);
  Result<http::Response> DeleteObjectTagging(Ctx& ctx);
  Result<http::Response> GetBucketTagging(Ctx& ctx);
  Result<http::Response> PutBucketTagging(Ctx& ctx);
  Result<http::Response> DeleteBucketTagging(Ctx& ctx);
  Result<http::Response> ChangeObjectTags(Ctx& ctx, std::map<std::string, std::string> tags);
  // ---- acl.cc
  Result<http::Response> GetBucketAcl(Ctx& ctx);
  Result<http::Response> PutBucketAcl(Ctx& ctx);
  Result<http::Response> GetObjectAcl(Ctx& ctx);
  Result<http::Response> PutObjectAcl(Ctx& ctx);
  // ---- post_object.cc
  Result<http::Response> PostObject(Ctx& ctx);
  Result<storage::S3Identity> FormSigner(std::map<std::string, std::string>& fields);
  // ---- object_lock.cc
  Result<http::Response> GetObjectLockConfiguration(Ctx& ctx);
  Result<http::Response> PutObjectLockConfiguration(Ctx& ctx);
  Result<http::Response> GetObjectRetention(Ctx& ctx);
  Result<http::Response> PutObjectRetention(Ctx& ctx);
  Result<http::Response> GetObjectLegalHold(Ctx& ctx);
  Result<http::Response> PutObjectLegalHold(Ctx& ctx);
  // ---- public_access_block.cc
  Result<http::Response> GetPublicAccessBlock(Ctx& ctx);
  Result<http::Response> PutPublicAccessBlock(Ctx& ctx);
  Result<http::Response> DeletePublicAccessBlock(Ctx& ctx);
  // ---- cors.cc
  Result<http::Response> GetBucketCors(Ctx& ctx);
  Result<http::Response> PutBucketCors(Ctx& ctx);
  Result<http::Response> DeleteBucketCors(Ctx& ctx);
  // ---- multipart.cc
  Result<http::Response> CreateUpload(Ctx& ctx);
  Result<http::Response> UploadPart(Ctx& ctx);
  Result<http::Response> UploadPartCopy(Ctx& ctx);
  Result<http::Response> ListParts(Ctx& ctx);
  Result<http::Response> CompleteUpload(Ctx& ctx);
  Result<http::Response> AbortUpload(Ctx& ctx);

 private:
  Result<http::Response> Dispatch(Ctx& ctx);
  Result<void> Parse(Ctx& ctx);
  // CORS (cors.cc): the rules of `bucket` (its configuration, else the server's default),
  // a preflight's answer, and the headers an allowed cross-origin response carries.
  std::vector<http::CorsRule> CorsRulesFor(const std::string& bucket);
  http::Response Preflight(Ctx& ctx);
  void AddCors(const Ctx& ctx, http::Response& response);
  Result<void> Authenticate(Ctx& ctx);
  Result<http::Response> ReadObject(Ctx& ctx, bool head);
  Error WithDeleteMarker(const Ctx& ctx, Error error);
  // Streams the request body into `writer`, decoding aws-chunked framing and verifying
  // the payload hash, Content-MD5 and any flexible checksum (body.cc). On failure the
  // writer is aborted and nothing becomes visible.
  Result<ReceivedBody> ReceiveBody(Ctx& ctx, objectstore::ObjectWriter& writer,
                                   std::optional<storage::ChecksumAlgorithm> default_algorithm);
  // The length of the object a request's body carries, when its headers declare it:
  // x-amz-decoded-content-length for aws-chunked bodies, else Content-Length. Lets the
  // store stream the body on (ReceiveBody still checks the body against it).
  static std::optional<uint64_t> DeclaredBodySize(const Ctx& ctx);
  Result<ReceivedBody> ReceiveBodyInner(
      Ctx& ctx, objectstore::ObjectWriter& writer,
      std::optional<storage::ChecksumAlgorithm> default_algorithm);

  tablemere::s3::S3Service service_;
  objectstore::RegisteredStore& store_;
  storage::IdentityResolver& identities_;
  const Clock& clock_;
  S3ApiOptions options_;
};

}  // namespace tablemere::api::s3
