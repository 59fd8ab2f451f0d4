// S3 request handling. Phases per request: parse (bucket, key, query), authenticate
// (signature over the raw request), then the route table picks the handler, which asks
// the S3 service (src/s3) and renders XML; errors become S3 XML in ErrorResponse only.
#include "api/s3/s3_api.h"

#include <array>
#include <exception>

#include "api/s3/adapter.h"
#include "api/s3/errors.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {

using tablemere::s3::AccessDenied;
using tablemere::s3::S3Error;

namespace {

// S3's limit on key length (UTF-8 bytes).
constexpr size_t kMaxKeyLength = 1024;

// ------------------------------------------------------------------ routes
// One row per operation, first match wins: method, what the path names, and a test of
// the query and headers.
enum class Target { kService, kBucket, kObject };
using Handler = Result<http::Response> (Adapter::*)(Ctx&);
using Matcher = bool (*)(const Ctx&);

struct Route {
  const char* method;
  Target target;
  Matcher matches;
  Handler handler;
};

bool Always(const Ctx&) { return true; }
bool NoQuery(const Ctx& c) { return c.query.empty(); }
bool Location(const Ctx& c) { return c.Has("location"); }
bool Versioning(const Ctx& c) { return c.Has("versioning"); }
bool Uploads(const Ctx& c) { return c.Has("uploads"); }
bool Versions(const Ctx& c) { return c.Has("versions"); }
bool Delete(const Ctx& c) { return c.Has("delete"); }
bool UploadId(const Ctx& c) { return c.Has("uploadId"); }
bool Attributes(const Ctx& c) { return c.Has("attributes"); }
bool Tagging(const Ctx& c) { return c.Has("tagging"); }
bool Acl(const Ctx& c) { return c.Has("acl"); }
bool Cors(const Ctx& c) { return c.Has("cors"); }
bool PublicAccessBlock(const Ctx& c) { return c.Has("publicAccessBlock"); }
bool ObjectLock(const Ctx& c) { return c.Has("object-lock"); }
bool Retention(const Ctx& c) { return c.Has("retention"); }
bool LegalHold(const Ctx& c) { return c.Has("legal-hold"); }
bool FormUpload(const Ctx& c) {
  return c.query.empty() &&
         ToLower(c.req.headers.GetOr("Content-Type", "")).starts_with("multipart/form-data");
}
bool CopiedPart(const Ctx& c) {
  return c.Has("partNumber") && c.Has("uploadId") && c.req.headers.Has("x-amz-copy-source");
}
bool Part(const Ctx& c) { return c.Has("partNumber") && c.Has("uploadId"); }
bool CopySource(const Ctx& c) { return c.req.headers.Has("x-amz-copy-source"); }

// Subresources S3 offers that this server does not (bucket policies, lifecycle, website,
// replication, encryption, object lock, logging, notifications, retention, legal hold,
// torrents, restore): answered 501 naming the subresource, never served as the plain
// operation they would otherwise look like (a GET ?policy is not a listing).
constexpr const char* kUnsupportedBucketSubresources[] = {
    "policy",         "lifecycle",    "website",      "replication",       "encryption",
    "logging",        "notification", "policyStatus", "ownershipControls", "accelerate",
    "requestPayment", "analytics",    "metrics",      "inventory",         "intelligent-tiering"};
constexpr const char* kUnsupportedObjectSubresources[] = {"torrent", "restore"};

template <size_t N>
const char* FirstPresent(const Ctx& c, const char* const (&names)[N]) {
  for (const char* name : names) {
    if (c.Has(name)) return name;
  }
  return nullptr;
}
bool UnsupportedBucketSubresource(const Ctx& c) {
  return FirstPresent(c, kUnsupportedBucketSubresources) != nullptr;
}
bool UnsupportedObjectSubresource(const Ctx& c) {
  return FirstPresent(c, kUnsupportedObjectSubresources) != nullptr;
}

Result<http::Response> NotImplemented(const Ctx& c) {
  const char* name = FirstPresent(c, kUnsupportedBucketSubresources);
  if (!name) name = FirstPresent(c, kUnsupportedObjectSubresources);
  return Fail(
      S3Error(ErrorCode::kNotImplemented, "NotImplemented",
              name ? std::string("The subresource '") + name + "' is not offered by this server."
                   : std::string("This operation is not offered by this server: ") + c.req.method +
                         " on a " + (c.has_key ? "key" : "bucket") + " with this query."));
}

constexpr Route kRoutes[] = {
    {"GET", Target::kService, Always, &Adapter::ListBuckets},
    // buckets
    {"PUT", Target::kBucket, NoQuery, &Adapter::CreateBucket},
    {"DELETE", Target::kBucket, NoQuery, &Adapter::DeleteBucket},
    {"HEAD", Target::kBucket, Always, &Adapter::HeadBucket},
    {"GET", Target::kBucket, Location, &Adapter::GetBucketLocation},
    {"GET", Target::kBucket, Versioning, &Adapter::GetBucketVersioning},
    {"PUT", Target::kBucket, Versioning, &Adapter::PutBucketVersioning},
    {"GET", Target::kBucket, Uploads, &Adapter::ListUploads},
    {"GET", Target::kBucket, Versions, &Adapter::ListVersions},
    {"POST", Target::kBucket, FormUpload, &Adapter::PostObject},
    {"POST", Target::kBucket, Delete, &Adapter::DeleteObjects},
    {"GET", Target::kBucket, Cors, &Adapter::GetBucketCors},
    {"PUT", Target::kBucket, Cors, &Adapter::PutBucketCors},
    {"DELETE", Target::kBucket, Cors, &Adapter::DeleteBucketCors},
    {"GET", Target::kBucket, PublicAccessBlock, &Adapter::GetPublicAccessBlock},
    {"PUT", Target::kBucket, PublicAccessBlock, &Adapter::PutPublicAccessBlock},
    {"DELETE", Target::kBucket, PublicAccessBlock, &Adapter::DeletePublicAccessBlock},
    {"GET", Target::kBucket, ObjectLock, &Adapter::GetObjectLockConfiguration},
    {"PUT", Target::kBucket, ObjectLock, &Adapter::PutObjectLockConfiguration},
    {"GET", Target::kBucket, Acl, &Adapter::GetBucketAcl},
    {"PUT", Target::kBucket, Acl, &Adapter::PutBucketAcl},
    {"GET", Target::kBucket, Tagging, &Adapter::GetBucketTagging},
    {"PUT", Target::kBucket, Tagging, &Adapter::PutBucketTagging},
    {"DELETE", Target::kBucket, Tagging, &Adapter::DeleteBucketTagging},
    {"GET", Target::kBucket, UnsupportedBucketSubresource, nullptr},
    {"GET", Target::kBucket, Always, &Adapter::ListObjects},
    // objects
    {"GET", Target::kObject, UploadId, &Adapter::ListParts},
    {"GET", Target::kObject, Attributes, &Adapter::GetObjectAttributes},
    {"GET", Target::kObject, Retention, &Adapter::GetObjectRetention},
    {"PUT", Target::kObject, Retention, &Adapter::PutObjectRetention},
    {"GET", Target::kObject, LegalHold, &Adapter::GetObjectLegalHold},
    {"PUT", Target::kObject, LegalHold, &Adapter::PutObjectLegalHold},
    {"GET", Target::kObject, Acl, &Adapter::GetObjectAcl},
    {"PUT", Target::kObject, Acl, &Adapter::PutObjectAcl},
    {"GET", Target::kObject, Tagging, &Adapter::GetObjectTagging},
    {"PUT", Target::kObject, Tagging, &Adapter::PutObjectTagging},
    {"DELETE", Target::kObject, Tagging, &Adapter::DeleteObjectTagging},
    {"GET", Target::kObject, UnsupportedObjectSubresource, nullptr},
    {"HEAD", Target::kObject, UnsupportedObjectSubresource, nullptr},
    {"GET", Target::kObject, Always, &Adapter::GetObject},
    {"HEAD", Target::kObject, Always, &Adapter::HeadObject},
    // Without this row an UploadPartCopy would store its empty body as the part.
    {"PUT", Target::kObject, CopiedPart, &Adapter::UploadPartCopy},
    {"PUT", Target::kObject, Part, &Adapter::UploadPart},
    {"PUT", Target::kObject, UnsupportedObjectSubresource, nullptr},
    {"PUT", Target::kObject, CopySource, &Adapter::CopyObject},
    {"PUT", Target::kObject, Always, &Adapter::PutObject},
    {"POST", Target::kObject, Uploads, &Adapter::CreateUpload},
    {"POST", Target::kObject, UploadId, &Adapter::CompleteUpload},
    {"DELETE", Target::kObject, UploadId, &Adapter::AbortUpload},
    {"DELETE", Target::kObject, Always, &Adapter::DeleteObject},
};

}  // namespace

// ------------------------------------------------------------------ entry

http::Response Adapter::Handle(http::Request& req) {
  Ctx ctx{req};
  Result<http::Response> result = Fail(ErrorCode::kInternal, "internal error");
  try {
    if (http::IsPreflight(req)) {
      // Preflights are never signed: browsers send them without credentials.
      auto parsed = Parse(ctx);
      if (parsed) {
        http::Response resp = Preflight(ctx);
        resp.headers.Set("x-amz-request-id", req.request_id);
        resp.headers.Set("Server", "Tablemere");
        return resp;
      }
      result = Fail(parsed.error());
    } else {
      result = Dispatch(ctx);
    }
  } catch (const std::exception&) {
    // A bug, not a client error: answered as S3's InternalError (XML, with the request
    // id), never in another protocol's format and never echoing the exception text.
    result = Fail(S3Error(ErrorCode::kInternal, "InternalError",
                          "We encountered an internal error. Please try again."));
  }
  http::Response resp;
  if (result) {
    resp = std::move(*result);
  } else {
    const Error& e = result.error();
    std::string code;
    resp.status = StatusFor(e, &code);
    if (resp.status == 503) resp.headers.Set("Retry-After", "1");
    AddErrorHeaders(e, resp.status, resp.headers);
    if (req.method != "HEAD") {  // HEAD errors carry no body
      XmlWriter x;
      x.Open("Error").Element("Code", code).Element("Message", e.message);
      std::string resource = e.Detail("resource");
      x.Element("Resource", resource.empty() ? req.path : resource);
      if (!ctx.bucket.empty()) x.Element("BucketName", ctx.bucket);
      x.Element("RequestId", req.request_id).Close("Error");
      resp.headers.Set("Content-Type", "application/xml");
      resp.body = x.Take();
    }
  }
  resp.headers.Set("x-amz-request-id", req.request_id);
  resp.headers.Set("Server", "Tablemere");
  AddCors(ctx, resp);
  return resp;
}

Result<void> Adapter::Parse(Ctx& ctx) {
  auto path = UrlDecode(ctx.req.path);
  if (!path || path->empty() || (*path)[0] != '/') {
    return Fail(
        S3Error(ErrorCode::kInvalidInput, "InvalidURI", "Couldn't parse the specified URI."));
  }
  std::string p = path->substr(1);
  size_t slash = p.find('/');
  ctx.bucket = p.substr(0, slash);
  if (slash != std::string::npos) {
    ctx.key = p.substr(slash + 1);
    ctx.has_key = !ctx.key.empty();
    if (ctx.key.size() > std::min(kMaxKeyLength, store_.MaxKeyBytes(ctx.bucket))) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "KeyTooLongError", "Your key is too long"));
    }
  }
  auto query = ParseQuery(ctx.req.query);
  if (!query) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidURI", "Malformed query string."));
  }
  ctx.query = std::move(*query);
  for (const auto& [k, v] : ctx.query) ctx.q.emplace(k, v);
  return {};
}

Result<http::Response> Adapter::Dispatch(Ctx& ctx) {
  TM_TRY(Parse(ctx));
  // A CORS preflight names its Origin and the method it asks for; an OPTIONS without
  // them is not a preflight.
  if (ctx.req.method == "OPTIONS") {
    if (!ctx.req.headers.Get("Origin")) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "BadRequest",
                          "Insufficient information. Origin request header needed."));
    }
    return Fail(S3Error(ErrorCode::kInvalidInput, "BadRequest",
                        "Invalid Access-Control-Request-Method: null"));
  }

  // ---- authenticate
  TM_TRY(Authenticate(ctx));
  if (auto expected = ctx.req.headers.Get("x-amz-expected-bucket-owner");
      expected && !ctx.bucket.empty()) {
    TM_ASSIGN(std::string owner_id, service_.OwnerIdOf(ctx.bucket));
    if (owner_id != Trim(*expected)) return Fail(AccessDenied());
  }

  if (ctx.req.method == "PUT" || ctx.req.method == "POST" || ctx.req.method == "DELETE") {
    // PutObject and CopyObject (PUT on a key, no query), CreateMultipartUpload, and
    // CreateBucket read the object lock headers; POST forms are checked field by field.
    WriteKind kind = WriteKind::kOther;
    if (ctx.req.method == "PUT" && ctx.query.empty()) {
      kind = ctx.has_key ? WriteKind::kNewVersion : WriteKind::kNewBucket;
    } else if (ctx.req.method == "POST" && ctx.has_key && ctx.Has("uploads")) {
      kind = WriteKind::kNewVersion;
    }
    TM_TRY(RefuseUnofferedHeaders(ctx.req.headers, kind));
  }

  // ---- route
  const Target target = ctx.bucket.empty() ? Target::kService
                        : ctx.has_key      ? Target::kObject
                                           : Target::kBucket;
  bool method_known = false;
  for (const Route& route : kRoutes) {
    if (route.target != target || ctx.req.method != route.method) continue;
    method_known = true;
    if (!route.matches(ctx)) continue;
    if (!route.handler) return NotImplemented(ctx);
    return (this->*route.handler)(ctx);
  }
  if (method_known || target == Target::kBucket) return NotImplemented(ctx);
  return Fail(S3Error(ErrorCode::kInvalidInput, "MethodNotAllowed",
                      "The specified method is not allowed against this resource."));
}

Result<void> Adapter::Authenticate(Ctx& ctx) {
  storage::SignedRequest signed_request{ctx.req.method, ctx.req.path, ctx.req.query, {}};
  for (const auto& [k, v] : ctx.req.headers.entries()) {
    signed_request.headers.emplace_back(ToLower(k), v);
  }
  TM_ASSIGN(auto parsed, storage::ParseAuth(signed_request));
  if (!parsed) {
    // Unsigned: the service lets it read what is public-read, and nothing else.
    ctx.identity = storage::S3Identity{};
    ctx.identity.kind = storage::S3Identity::Kind::kAnonymous;
    return {};
  }
  ctx.auth = std::move(*parsed);
  auto identity = identities_.Resolve(ctx.auth.access_key, ctx.auth.security_token);
  if (!identity) return Fail(identity.error());
  ctx.identity = std::move(*identity);
  TM_ASSIGN(ctx.signing_key, storage::VerifySignature(signed_request, ctx.auth, ctx.identity.secret,
                                                      clock_.NowMillis()));
  return {};
}

// ------------------------------------------------------------------ shared helpers

std::string Quote(const std::string& etag) { return "\"" + etag + "\""; }

http::Response Xml(int status, std::string body) {
  return http::Response::Text(status, "application/xml", std::move(body));
}

void WriteOwner(XmlWriter& x, const std::string& owner_id) {
  x.Open("Owner").Element("ID", owner_id).Element("DisplayName", owner_id).Close("Owner");
}

tablemere::s3::Conditions ConditionsFrom(const http::Headers& headers, const std::string& prefix) {
  tablemere::s3::Conditions c;
  c.if_match = headers.Get(prefix + "If-Match");
  c.if_none_match = headers.Get(prefix + "If-None-Match");
  auto date = [&](const char* name) -> std::optional<int64_t> {
    auto v = headers.Get(prefix + name);
    if (!v) return std::nullopt;
    int64_t t = ParseHttpDate(*v);
    return t >= 0 ? std::optional<int64_t>(t) : std::nullopt;
  };
  c.if_modified_since_ms = date("If-Modified-Since");
  c.if_unmodified_since_ms = date("If-Unmodified-Since");
  return c;
}

// ------------------------------------------------------------------ S3Api

struct S3Api::Impl {
  Adapter adapter;
};

S3Api::S3Api(objectstore::RegisteredStore& store, storage::IdentityResolver& identities,
             const Clock& clock, S3ApiOptions options)
    : impl_(std::make_unique<Impl>(Impl{Adapter(store, identities, clock, std::move(options))})) {}
S3Api::~S3Api() = default;

http::Response S3Api::Handle(http::Request& request) { return impl_->adapter.Handle(request); }

}  // namespace tablemere::api::s3
