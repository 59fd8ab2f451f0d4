// S3 request handling. Phases per request: parse (bucket, key, query), authenticate
// (signature over the raw request), authorise (identity × bucket × key × access),
// then one operation against the object store, with errors mapped to S3 XML in
// ErrorResponse only.
#include "api/s3/s3_api.h"

#include <pugixml.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "api/s3/xml.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "storage/aws_chunked.h"
#include "storage/checksum.h"
#include "storage/sigv4.h"

namespace tablemere::api::s3 {
namespace {

using objectstore::ObjectInfo;
using storage::ChecksumAlgorithm;

// S3 refuses single PUTs and parts over 5 GiB; so do we.
constexpr uint64_t kMaxObjectSize = 5ull * 1024 * 1024 * 1024;
// Every part but the last must be at least 5 MiB (S3's rule; clients size parts for it).
constexpr uint64_t kMinPartSize = 5ull * 1024 * 1024;
constexpr int kMaxPartNumber = 10000;
// S3's limit on key length (UTF-8 bytes).
constexpr size_t kMaxKeyLength = 1024;
// XML request bodies (DeleteObjects of 1000 keys, CompleteMultipartUpload of 10000 parts).
constexpr size_t kMaxXmlBody = 4 * 1024 * 1024;
// Bytes read from the socket per step while streaming an upload.
constexpr size_t kUploadSlice = 1024 * 1024;
// Smallest such step, for bodies shorter than a slice (and the empty body).
constexpr size_t kMinUploadSlice = 4 * 1024;

Error S3Error(ErrorCode code, const std::string& s3_code, const std::string& message) {
  return Error{code, message, {}}.With("s3_code", s3_code);
}
Error AccessDenied(const std::string& message = "Access Denied") {
  return S3Error(ErrorCode::kPermissionDenied, "AccessDenied", message);
}

int StatusFor(const Error& e, std::string* code) {
  static const std::map<std::string, int> kStatus = {
      {"NoSuchBucket", 404},
      {"NoSuchKey", 404},
      {"NoSuchUpload", 404},
      {"AccessDenied", 403},
      {"SignatureDoesNotMatch", 403},
      {"InvalidAccessKeyId", 403},
      {"InvalidToken", 400},
      {"ExpiredToken", 400},
      {"RequestTimeTooSkewed", 403},
      {"BucketAlreadyOwnedByYou", 409},
      {"BucketAlreadyExists", 409},
      {"BucketNotEmpty", 409},
      {"InvalidPart", 400},
      {"InvalidPartOrder", 400},
      {"EntityTooSmall", 400},
      {"EntityTooLarge", 400},
      {"InvalidRange", 416},
      {"InvalidPartNumber", 416},
      {"PreconditionFailed", 412},
      {"BadDigest", 400},
      {"XAmzContentSHA256Mismatch", 400},
      {"IncompleteBody", 400},
      {"InvalidArgument", 400},
      {"InvalidRequest", 400},
      {"MalformedXML", 400},
      {"NotImplemented", 501},
      {"MethodNotAllowed", 405},
      {"InvalidBucketName", 400},
      {"AuthorizationHeaderMalformed", 400},
      {"AuthorizationQueryParametersError", 400},
      {"MissingContentLength", 411},
      {"InvalidDigest", 400},
      {"InternalError", 500},
      {"ServiceUnavailable", 503},
      {"TooManyBuckets", 400},
      {"KeyTooLongError", 400},
      {"InvalidObjectState", 403},
  };
  std::string s3_code = e.Detail("s3_code");
  if (!s3_code.empty()) {
    auto it = kStatus.find(s3_code);
    *code = s3_code;
    return it == kStatus.end() ? 400 : it->second;
  }
  switch (e.code) {
    case ErrorCode::kNotFound:
      *code = "NoSuchKey";
      return 404;
    case ErrorCode::kPermissionDenied:
    case ErrorCode::kUnauthenticated:
      *code = "AccessDenied";
      return 403;
    case ErrorCode::kInvalidInput:
      *code = "InvalidArgument";
      return 400;
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kConflict:
      *code = "OperationAborted";
      return 409;
    case ErrorCode::kNotImplemented:
      *code = "NotImplemented";
      return 501;
    case ErrorCode::kUnavailable:
      *code = "ServiceUnavailable";
      return 503;
    case ErrorCode::kQuotaExceeded:
      *code = "QuotaExceeded";
      return 403;
    case ErrorCode::kRateLimited:
      *code = "SlowDown";
      return 503;
    case ErrorCode::kInternal:
      *code = "InternalError";
      return 500;
  }
  *code = "InternalError";
  return 500;
}

std::string Quote(const std::string& etag) { return "\"" + etag + "\""; }
std::string Unquote(std::string s) {
  s = Trim(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

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

enum class Access { kListBuckets, kBucketRead, kList, kRead, kWrite, kDelete, kBucketAdmin };

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
  std::optional<ChecksumAlgorithm> algorithm;
  std::string checksum_raw;  // raw digest of `algorithm`
};

}  // namespace

struct S3Api::Impl {
  objectstore::ObjectStore& store;
  storage::IdentityResolver& identities;
  const Clock& clock;
  S3ApiOptions options;

  // ---------------------------------------------------------------- entry
  http::Response Handle(http::Request& req) {
    Ctx ctx{req};
    Result<http::Response> result = Fail(ErrorCode::kInternal, "internal error");
    try {
      result = Dispatch(ctx);
    } catch (const std::exception&) {
      // A bug, not a client error: answered as S3's InternalError (XML, with the request
      // id), never in another protocol's format and never echoing the exception text.
      result = Fail(S3Error(ErrorCode::kInternal, "InternalError",
                            "We encountered an internal error. Please try again."));
    }
    if (!result) return ErrorResponse(ctx, result.error());
    http::Response resp = std::move(*result);
    resp.headers.Set("x-amz-request-id", req.request_id);
    resp.headers.Set("Server", "Tablemere");
    return resp;
  }

  http::Response ErrorResponse(Ctx& ctx, const Error& e) {
    std::string code;
    int status = StatusFor(e, &code);
    http::Response resp;
    resp.status = status;
    resp.headers.Set("x-amz-request-id", ctx.req.request_id);
    resp.headers.Set("Server", "Tablemere");
    if (ctx.req.method == "HEAD") return resp;  // HEAD errors carry no body
    XmlWriter x;
    x.Open("Error").Element("Code", code).Element("Message", e.message);
    std::string resource = e.Detail("resource");
    if (resource.empty()) resource = ctx.req.path;
    x.Element("Resource", resource);
    if (!ctx.bucket.empty()) x.Element("BucketName", ctx.bucket);
    x.Element("RequestId", ctx.req.request_id).Close("Error");
    resp.headers.Set("Content-Type", "application/xml");
    resp.body = x.Take();
    return resp;
  }

  Result<http::Response> Dispatch(Ctx& ctx) {
    // ---- parse
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
      if (ctx.key.size() > kMaxKeyLength) {
        return Fail(S3Error(ErrorCode::kInvalidInput, "KeyTooLongError", "Your key is too long"));
      }
    }
    auto query = ParseQuery(ctx.req.query);
    if (!query)
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidURI", "Malformed query string."));
    ctx.query = std::move(*query);
    for (const auto& [k, v] : ctx.query) ctx.q.emplace(k, v);

    // A CORS preflight names its Origin; an OPTIONS without one is not a preflight.
    if (ctx.req.method == "OPTIONS" && !ctx.req.headers.Get("Origin")) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "BadRequest",
                          "Insufficient information. Origin request header needed."));
    }

    // ---- authenticate
    TM_TRY(Authenticate(ctx));
    if (auto expected = ctx.req.headers.Get("x-amz-expected-bucket-owner");
        expected && !ctx.bucket.empty()) {
      TM_ASSIGN(std::string owner_id, OwnerIdOf(ctx.bucket));
      if (owner_id != Trim(*expected)) return Fail(AccessDenied());
    }

    // ---- dispatch
    const std::string& m = ctx.req.method;
    if (ctx.bucket.empty()) {
      if (m == "GET") return ListBuckets(ctx);
      return Fail(S3Error(ErrorCode::kInvalidInput, "MethodNotAllowed",
                          "The specified method is not allowed against this resource."));
    }
    if (!ctx.has_key) return BucketOperation(ctx);
    return ObjectOperation(ctx);
  }

  Result<void> Authenticate(Ctx& ctx) {
    storage::SignedRequest signed_request{ctx.req.method, ctx.req.path, ctx.req.query, {}};
    for (const auto& [k, v] : ctx.req.headers.entries()) {
      signed_request.headers.emplace_back(ToLower(k), v);
    }
    TM_ASSIGN(auto parsed, storage::ParseAuth(signed_request));
    if (!parsed) return Fail(AccessDenied("Anonymous access is not allowed; sign the request."));
    ctx.auth = std::move(*parsed);
    auto identity = identities.Resolve(ctx.auth.access_key, ctx.auth.security_token);
    if (!identity) return Fail(identity.error());
    ctx.identity = std::move(*identity);
    TM_ASSIGN(ctx.signing_key, storage::VerifySignature(signed_request, ctx.auth,
                                                        ctx.identity.secret, clock.NowMillis()));
    return {};
  }

  // ---------------------------------------------------------------- authorisation
  Result<void> Authorize(const Ctx& ctx, const std::string& bucket, const std::string& key,
                         Access access) {
    const storage::S3Identity& id = ctx.identity;
    using Kind = storage::S3Identity::Kind;
    bool writes = access == Access::kWrite || access == Access::kDelete;
    switch (id.kind) {
      case Kind::kOperator: {
        if (access == Access::kListBuckets) return {};
        TM_ASSIGN(std::string owner, identities.OperatorBucketOwner(bucket));
        if (owner.empty()) {
          // Unknown to the operator: answer as S3 does for a bucket you cannot see.
          auto head = store.HeadBucket(bucket);
          if (!head) return Fail(head.error());
          return Fail(AccessDenied());
        }
        if (owner != id.access_key) return Fail(AccessDenied());
        return {};
      }
      case Kind::kWarehouse: {
        if (access == Access::kListBuckets) return {};
        if (access == Access::kBucketAdmin) {
          return Fail(AccessDenied("Warehouse credentials cannot create or delete buckets."));
        }
        if (storage::WarehouseOfBucket(bucket) != id.warehouse_id) return Fail(AccessDenied());
        if (writes && id.read_only) {
          return Fail(
              AccessDenied("This is the warehouse's read-only identity; writes are refused."));
        }
        return {};
      }
      case Kind::kSession: {
        if (access == Access::kListBuckets || access == Access::kBucketAdmin) {
          return Fail(AccessDenied("A table session may only access its table's objects."));
        }
        if (bucket != storage::TableBucketName(id.warehouse_id)) return Fail(AccessDenied());
        if (access == Access::kBucketRead) return {};
        std::string scope = id.prefix;
        bool inside = key.starts_with(scope);
        // Listing the table's own prefix without its trailing slash is fine too.
        if (!inside && access == Access::kList && scope.ends_with("/") &&
            key == scope.substr(0, scope.size() - 1)) {
          inside = true;
        }
        if (!inside) {
          return Fail(AccessDenied("This storage session is scoped to " + bucket + "/" + scope));
        }
        if (writes && id.read_only) {
          return Fail(AccessDenied("This storage session is read-only."));
        }
        return {};
      }
    }
    return Fail(AccessDenied());
  }

  static bool OutsideSession(const Ctx& ctx, const std::string& key) {
    return ctx.identity.kind == storage::S3Identity::Kind::kSession &&
           !key.starts_with(ctx.identity.prefix);
  }

  // Authorize lets a session list its table's prefix without the trailing slash ("ns/t",
  // as Iceberg's S3FileIO.listPrefix sends a table location). That prefix also matches
  // sibling tables ("ns/t2/…", "ns/t-x/…"), so the store is asked for the session's own
  // scope instead: their keys are never read, not even as a paging marker.
  Result<objectstore::ListResult> ListFor(const Ctx& ctx, objectstore::ListOptions opts) {
    const storage::S3Identity& id = ctx.identity;
    if (id.kind != storage::S3Identity::Kind::kSession || opts.prefix.starts_with(id.prefix)) {
      return store.List(ctx.bucket, opts);
    }
    // Here opts.prefix + "/" == id.prefix.
    if (opts.delimiter == "/") {
      // Every key in scope is cut right after the requested prefix: the scope is the one
      // common prefix, listed unless an earlier page (the marker) already reported it.
      objectstore::ListResult result;
      if (opts.max_keys <= 0 || opts.continuation == id.prefix) return result;
      objectstore::ListOptions probe;
      probe.prefix = id.prefix;
      probe.start_after = std::max(opts.start_after, opts.continuation);
      probe.max_keys = 1;
      TM_ASSIGN(auto any, store.List(ctx.bucket, probe));
      if (!any.objects.empty()) result.common_prefixes.push_back(id.prefix);
      return result;
    }
    if (!opts.delimiter.empty() && opts.delimiter.front() == '/') {
      return Fail(AccessDenied("List this storage session's objects with prefix " + id.prefix));
    }
    // Any other delimiter first occurs after the scope's "/", as it would for the
    // requested prefix.
    opts.prefix = id.prefix;
    return store.List(ctx.bucket, opts);
  }

  // Table buckets take only table files: a generic table's session is held to its format
  // (sealed in the session, no lookup); other writers are checked against the generic
  // tables' locations, then Iceberg's layout.
  Result<void> CheckWritableKey(const Ctx& ctx, const std::string& bucket, const std::string& key) {
    if (!storage::IsTableBucket(bucket)) return {};
    std::string warehouse = storage::WarehouseOfBucket(bucket);
    std::string blob_bucket = storage::BlobBucketName(warehouse);
    const storage::S3Identity& id = ctx.identity;
    if (id.kind == storage::S3Identity::Kind::kSession && !id.format.empty()) {
      return storage::CheckGenericTableKey(key.substr(std::min(key.size(), id.prefix.size())),
                                           id.format, blob_bucket);
    }
    TM_ASSIGN(auto generic, identities.GenericLocations(warehouse));
    return storage::CheckWarehouseKey(key, blob_bucket, generic);
  }

  // ---------------------------------------------------------------- buckets
  Result<http::Response> ListBuckets(Ctx& ctx) {
    TM_TRY(Authorize(ctx, "", "", Access::kListBuckets));
    TM_ASSIGN(auto buckets, store.ListBuckets());
    XmlWriter x;
    x.Open("ListAllMyBucketsResult", true);
    x.Open("Owner")
        .Element("ID", ctx.identity.access_key)
        .Element("DisplayName", ctx.identity.access_key)
        .Close("Owner");
    x.Open("Buckets");
    for (const auto& b : buckets) {
      if (!Authorize(ctx, b.name, "", Access::kBucketRead)) continue;
      x.Open("Bucket")
          .Element("Name", b.name)
          .Element("CreationDate", FormatIso8601(b.created_ms))
          .Close("Bucket");
    }
    x.Close("Buckets").Close("ListAllMyBucketsResult");
    return Xml(200, x.Take());
  }

  Result<http::Response> BucketOperation(Ctx& ctx) {
    const std::string& m = ctx.req.method;
    if (m == "PUT" && ctx.query.empty()) return CreateBucket(ctx);
    if (m == "DELETE" && ctx.query.empty()) return DeleteBucket(ctx);
    if (m == "HEAD") {
      TM_TRY(Authorize(ctx, ctx.bucket, "", Access::kBucketRead));
      TM_TRY(store.HeadBucket(ctx.bucket));
      http::Response r;
      r.headers.Set("x-amz-bucket-region", options.region);
      return r;
    }
    if (m == "GET" && ctx.Has("location")) {
      TM_TRY(Authorize(ctx, ctx.bucket, "", Access::kBucketRead));
      TM_TRY(store.HeadBucket(ctx.bucket));
      XmlWriter x;
      // us-east-1 is reported as an empty constraint, as S3 does.
      x.Open("LocationConstraint", true).Close("LocationConstraint");
      return Xml(200, x.Take());
    }
    if (m == "GET" && ctx.Has("versioning")) {
      TM_TRY(Authorize(ctx, ctx.bucket, "", Access::kBucketRead));
      TM_TRY(store.HeadBucket(ctx.bucket));
      XmlWriter x;
      x.Open("VersioningConfiguration", true).Close("VersioningConfiguration");
      return Xml(200, x.Take());
    }
    if (m == "GET" && ctx.Has("uploads")) return ListUploads(ctx);
    if (m == "GET" && ctx.Has("versions")) return ListVersions(ctx);
    if (m == "POST" && ctx.Has("delete")) return DeleteObjects(ctx);
    if (m == "GET") {
      for (const char* unsupported :
           {"acl", "policy", "cors", "lifecycle", "tagging", "website", "replication", "encryption",
            "object-lock", "logging", "notification", "policyStatus", "ownershipControls"}) {
        if (ctx.Has(unsupported)) return NotImplemented(unsupported);
      }
      return ListObjects(ctx);
    }
    return Fail(S3Error(ErrorCode::kNotImplemented, "NotImplemented",
                        "This bucket operation is not implemented."));
  }

  Result<http::Response> NotImplemented(const std::string& what) {
    return Fail(S3Error(ErrorCode::kNotImplemented, "NotImplemented",
                        "The bucket subresource '" + what + "' is not implemented."));
  }

  static bool ValidBucketName(const std::string& name) {
    if (name.size() < 3 || name.size() > 63) return false;
    for (char c : name) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
    }
    return std::isalnum(static_cast<unsigned char>(name.front())) &&
           std::isalnum(static_cast<unsigned char>(name.back()));
  }

  Result<http::Response> CreateBucket(Ctx& ctx) {
    if (ctx.identity.kind != storage::S3Identity::Kind::kOperator) {
      TM_TRY(Authorize(ctx, ctx.bucket, "", Access::kBucketAdmin));
    }
    if (!ValidBucketName(ctx.bucket)) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidBucketName",
                          "The specified bucket is not valid."));
    }
    if (!storage::WarehouseOfBucket(ctx.bucket).empty()) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidBucketName",
                          "Bucket names starting with w- or b- are reserved for warehouses."));
    }
    // Drain and ignore a CreateBucketConfiguration body (LocationConstraint).
    TM_TRY(http::ReadAll(*ctx.req.body, kMaxXmlBody));
    auto created = store.CreateBucket(ctx.bucket);
    if (!created) {
      if (created.error().code == ErrorCode::kAlreadyExists) {
        TM_ASSIGN(std::string owner, identities.OperatorBucketOwner(ctx.bucket));
        if (owner != ctx.identity.access_key) {
          return Fail(S3Error(ErrorCode::kAlreadyExists, "BucketAlreadyExists",
                              "The requested bucket name is not available."));
        }
      }
      return Fail(created.error());
    }
    TM_TRY(identities.RecordOperatorBucket(ctx.bucket, ctx.identity.access_key, true));
    http::Response r;
    r.headers.Set("Location", "/" + ctx.bucket);
    return r;
  }

  Result<http::Response> DeleteBucket(Ctx& ctx) {
    if (ctx.identity.kind != storage::S3Identity::Kind::kOperator) {
      TM_TRY(Authorize(ctx, ctx.bucket, "", Access::kBucketAdmin));
    }
    TM_TRY(Authorize(ctx, ctx.bucket, "", Access::kDelete));
    TM_TRY(store.DeleteBucket(ctx.bucket));
    TM_TRY(identities.RecordOperatorBucket(ctx.bucket, ctx.identity.access_key, false));
    http::Response r;
    r.status = 204;
    return r;
  }

  // ---------------------------------------------------------------- listing
  struct ListParams {
    std::string prefix, delimiter, start_after, continuation;
    int max_keys = 1000;
    bool url_encode = false;
  };

  Result<ListParams> ParseListParams(Ctx& ctx) {
    ListParams p;
    p.prefix = ctx.Q("prefix");
    p.delimiter = ctx.Q("delimiter");
    if (ctx.Has("max-keys")) {
      auto n = ParseInt(ctx.Q("max-keys"));
      if (!n) {
        return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidArgument",
                            "max-keys must be a non-negative integer"));
      }
      p.max_keys = static_cast<int>(std::min<int64_t>(*n, 1000));
    }
    if (ctx.Has("encoding-type")) {
      if (ctx.Q("encoding-type") != "url") {
        return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidArgument",
                            "Invalid Encoding Method specified in Request"));
      }
      p.url_encode = true;
    }
    TM_TRY(Authorize(ctx, ctx.bucket, p.prefix, Access::kList));
    return p;
  }

  std::string Enc(const ListParams& p, const std::string& s) {
    return p.url_encode ? UrlEncode(s, true) : s;
  }

  // The bucket owner's canonical id: the operator user who created it, or the identity of
  // the warehouse whose table or blob bucket it is.
  Result<std::string> OwnerIdOf(const std::string& bucket) {
    TM_ASSIGN(std::string owner, identities.OperatorBucketOwner(bucket));
    if (!owner.empty()) return owner;
    std::string warehouse = storage::WarehouseOfBucket(bucket);
    if (!warehouse.empty()) return "t-" + warehouse;
    return std::string();
  }

  static void WriteOwner(XmlWriter& x, const std::string& owner_id) {
    x.Open("Owner").Element("ID", owner_id).Element("DisplayName", owner_id).Close("Owner");
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

  Result<http::Response> ListObjects(Ctx& ctx) {
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
          return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidArgument",
                              "The continuation token provided is incorrect"));
        }
        opts.continuation = *marker;
      }
    } else {
      opts.continuation = ctx.Q("marker");
    }
    TM_ASSIGN(auto list, ListFor(ctx, opts));
    XmlWriter x;
    x.Open("ListBucketResult", true)
        .Element("Name", ctx.bucket)
        .Element("Prefix", Enc(p, p.prefix));
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
      TM_ASSIGN(owner_id, OwnerIdOf(ctx.bucket));
    }
    for (const auto& o : list.objects) WriteContents(x, p, o, with_owner ? &owner_id : nullptr);
    for (const auto& cp : list.common_prefixes) {
      x.Open("CommonPrefixes").Element("Prefix", Enc(p, cp)).Close("CommonPrefixes");
    }
    x.Close("ListBucketResult");
    return Xml(200, x.Take());
  }

  Result<http::Response> ListVersions(Ctx& ctx) {
    TM_ASSIGN(ListParams p, ParseListParams(ctx));
    objectstore::ListOptions opts;
    opts.prefix = p.prefix;
    opts.delimiter = p.delimiter;
    opts.max_keys = p.max_keys;
    opts.continuation = ctx.Q("key-marker");
    TM_ASSIGN(auto list, ListFor(ctx, opts));
    XmlWriter x;
    x.Open("ListVersionsResult", true)
        .Element("Name", ctx.bucket)
        .Element("Prefix", Enc(p, p.prefix))
        .Element("KeyMarker", Enc(p, ctx.Q("key-marker")))
        .Element("VersionIdMarker", ctx.Q("version-id-marker"))
        .Element("MaxKeys", std::to_string(p.max_keys));
    if (!p.delimiter.empty()) x.Element("Delimiter", Enc(p, p.delimiter));
    if (p.url_encode) x.Element("EncodingType", "url");
    x.Element("IsTruncated", list.truncated ? "true" : "false");
    if (list.truncated) {
      x.Element("NextKeyMarker", Enc(p, list.next_marker)).Element("NextVersionIdMarker", "null");
    }
    TM_ASSIGN(std::string owner_id, OwnerIdOf(ctx.bucket));
    for (const auto& o : list.objects) {
      x.Open("Version")
          .Element("Key", Enc(p, o.key))
          .Element("VersionId", "null")
          .Element("IsLatest", "true")
          .Element("LastModified", FormatIso8601(o.last_modified_ms))
          .Element("ETag", Quote(o.etag))
          .Element("Size", std::to_string(o.size))
          .Element("StorageClass", "STANDARD");
      WriteOwner(x, owner_id);
      x.Close("Version");
    }
    for (const auto& cp : list.common_prefixes) {
      x.Open("CommonPrefixes").Element("Prefix", Enc(p, cp)).Close("CommonPrefixes");
    }
    x.Close("ListVersionsResult");
    return Xml(200, x.Take());
  }

  Result<http::Response> ListUploads(Ctx& ctx) {
    std::string prefix = ctx.Q("prefix");
    TM_TRY(Authorize(ctx, ctx.bucket, prefix, Access::kList));
    TM_ASSIGN(auto uploads, store.ListUploads(ctx.bucket, prefix));
    // As in ListFor: the prefix "ns/t" a session may use also matches sibling tables.
    std::erase_if(uploads,
                  [&](const objectstore::UploadInfo& u) { return OutsideSession(ctx, u.key); });
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

  Result<http::Response> DeleteObjects(Ctx& ctx) {
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
      if (key.empty()) {
        x.Open("Error")
            .Element("Key", key)
            .Element("Code", "InvalidArgument")
            .Element("Message", "An object key must not be empty.")
            .Close("Error");
        continue;
      }
      auto allowed = Authorize(ctx, ctx.bucket, key, Access::kDelete);
      Result<void> result =
          allowed ? store.Delete(ctx.bucket, key) : Result<void>(std::unexpected(allowed.error()));
      if (result) {
        if (!quiet) x.Open("Deleted").Element("Key", key).Close("Deleted");
      } else {
        std::string code;
        StatusFor(result.error(), &code);
        x.Open("Error")
            .Element("Key", key)
            .Element("Code", code)
            .Element("Message", result.error().message)
            .Close("Error");
      }
    }
    x.Close("DeleteResult");
    return Xml(200, x.Take());
  }

  // A Content-MD5 that is not the base64 of 16 bytes is InvalidDigest; BadDigest means a
  // well-formed digest that does not match the body.
  static Result<void> CheckContentMd5Form(const std::string& header) {
    auto raw = crypto::Base64Decode(Trim(header));
    if (!raw || raw->size() != 16) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidDigest",
                          "The Content-MD5 you specified was invalid."));
    }
    return {};
  }

  static Error MalformedXml() {
    return S3Error(ErrorCode::kInvalidInput, "MalformedXML",
                   "The XML you provided was not well-formed or did not validate against our "
                   "published schema.");
  }

  // ---------------------------------------------------------------- objects
  Result<http::Response> ObjectOperation(Ctx& ctx) {
    const std::string& m = ctx.req.method;
    if (m == "GET" || m == "HEAD") {
      if (ctx.Has("uploadId") && m == "GET") return ListParts(ctx);
      for (const char* unsupported :
           {"acl", "tagging", "attributes", "retention", "legal-hold", "torrent"}) {
        if (ctx.Has(unsupported)) return NotImplemented(unsupported);
      }
      return GetObject(ctx, m == "HEAD");
    }
    if (m == "PUT") {
      if (ctx.Has("partNumber") && ctx.Has("uploadId")) {
        // Without this branch an UploadPartCopy would store its empty body as the part.
        if (ctx.req.headers.Has("x-amz-copy-source")) return UploadPartCopy(ctx);
        return UploadPart(ctx);
      }
      if (ctx.Has("acl") || ctx.Has("tagging") || ctx.Has("retention") || ctx.Has("legal-hold")) {
        return NotImplemented("acl/tagging");
      }
      if (ctx.req.headers.Has("x-amz-copy-source")) return CopyObject(ctx);
      return PutObject(ctx);
    }
    if (m == "POST" && ctx.Has("uploads")) return CreateUpload(ctx);
    if (m == "POST" && ctx.Has("uploadId")) return CompleteUpload(ctx);
    if (m == "DELETE" && ctx.Has("uploadId")) {
      TM_TRY(Authorize(ctx, ctx.bucket, ctx.key, Access::kWrite));
      TM_TRY(store.AbortUpload(ctx.bucket, ctx.Q("uploadId")));
      http::Response r;
      r.status = 204;
      return r;
    }
    if (m == "DELETE") {
      TM_TRY(Authorize(ctx, ctx.bucket, ctx.key, Access::kDelete));
      TM_TRY(store.Delete(ctx.bucket, ctx.key));
      http::Response r;
      r.status = 204;
      return r;
    }
    return Fail(S3Error(ErrorCode::kInvalidInput, "MethodNotAllowed",
                        "The specified method is not allowed against this resource."));
  }

  // Evaluates If-Match / If-None-Match / If-(Un)Modified-Since. Returns a status to
  // answer with (304 or 412), or 0 to proceed.
  static int Preconditions(const http::Headers& h, const ObjectInfo& info, bool read) {
    auto matches = [&](const std::string& list) {
      for (const auto& tag : Split(list, ',')) {
        std::string t = Unquote(tag);
        if (t == "*" || t == info.etag) return true;
      }
      return false;
    };
    int64_t modified_s = info.last_modified_ms / 1000;
    auto if_match = h.Get("If-Match");
    if (if_match && !matches(*if_match)) return 412;
    if (!if_match) {
      if (auto since = h.Get("If-Unmodified-Since")) {
        int64_t t = ParseHttpDate(*since);
        if (t >= 0 && modified_s > t / 1000) return 412;
      }
    }
    auto if_none = h.Get("If-None-Match");
    if (if_none && matches(*if_none)) return read ? 304 : 412;
    if (!if_none && read) {
      if (auto since = h.Get("If-Modified-Since")) {
        int64_t t = ParseHttpDate(*since);
        if (t >= 0 && modified_s <= t / 1000) return 304;
      }
    }
    return 0;
  }

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

  Result<http::Response> GetObject(Ctx& ctx, bool head) {
    TM_TRY(Authorize(ctx, ctx.bucket, ctx.key, Access::kRead));
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
    TM_ASSIGN(ObjectInfo info, store.Head(ctx.bucket, ctx.key));
    int pre = Preconditions(ctx.req.headers, info, true);
    if (pre == 412) {
      return Fail(S3Error(ErrorCode::kConflict, "PreconditionFailed",
                          "At least one of the pre-conditions you specified did not hold"));
    }
    if (pre == 304) {
      http::Response r;
      r.status = 304;
      r.headers.Set("ETag", Quote(info.etag));
      r.headers.Set("Last-Modified", FormatHttpDate(info.last_modified_ms));
      return r;
    }
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
    if (ranged) {
      r.status = 206;
      r.headers.Set("Content-Range", "bytes " + std::to_string(offset) + "-" +
                                         std::to_string(offset + length - 1) + "/" +
                                         std::to_string(info.size));
    }
    // Whole-object checksums are sent only on request.
    if (whole_object &&
        EqualsIgnoreCase(ctx.req.headers.GetOr("x-amz-checksum-mode", ""), "ENABLED")) {
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
    ObjectInfo again;
    TM_ASSIGN(auto reader, store.Get(ctx.bucket, ctx.key, offset, length, &again));
    if (again.etag != info.etag) {
      // Overwritten between HEAD and open: serve the new version consistently.
      return GetObject(ctx, head);
    }
    r.stream = std::move(reader);
    r.stream_length = length;
    return r;
  }

  // Parses "bytes=a-b", "bytes=a-", "bytes=-n". nullopt: ignore the header (as S3 does
  // for unparseable ranges); InvalidRange when unsatisfiable.
  static Result<std::optional<std::pair<uint64_t, uint64_t>>> ParseRange(const std::string& header,
                                                                         uint64_t size) {
    std::string h = Trim(header);
    if (!h.starts_with("bytes=") || h.find(',') != std::string::npos) return std::nullopt;
    std::string spec = h.substr(6);
    size_t dash = spec.find('-');
    if (dash == std::string::npos) return std::nullopt;
    std::string a = spec.substr(0, dash);
    std::string b = spec.substr(dash + 1);
    auto invalid = [&]() {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRange",
                          "The requested range is not satisfiable")
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

  // Headers given on PUT / CreateMultipartUpload that are stored with the object.
  static std::map<std::string, std::string> StoredHeaders(const http::Headers& headers) {
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

  // Streams the request body into `writer`, decoding aws-chunked framing and verifying
  // the payload hash, Content-MD5 and any flexible checksum. On failure the writer is
  // aborted and nothing becomes visible.
  Result<ReceivedBody> ReceiveBody(Ctx& ctx, objectstore::ObjectWriter& writer,
                                   std::optional<ChecksumAlgorithm> default_algorithm) {
    auto result = ReceiveBodyInner(ctx, writer, default_algorithm);
    if (!result) writer.Abort();
    return result;
  }

  Result<ReceivedBody> ReceiveBodyInner(Ctx& ctx, objectstore::ObjectWriter& writer,
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

  Result<void> CheckWritePreconditions(Ctx& ctx) {
    const http::Headers& h = ctx.req.headers;
    if (!h.Has("If-None-Match") && !h.Has("If-Match")) return {};
    auto existing = store.Head(ctx.bucket, ctx.key);
    if (!existing) {
      if (existing.error().code != ErrorCode::kNotFound) return Fail(existing.error());
      if (h.Has("If-Match")) {
        return Fail(
            S3Error(ErrorCode::kNotFound, "NoSuchKey", "The specified key does not exist."));
      }
      return {};
    }
    if (Preconditions(h, *existing, false) != 0) {
      return Fail(S3Error(ErrorCode::kConflict, "PreconditionFailed",
                          "At least one of the pre-conditions you specified did not hold"));
    }
    return {};
  }

  Result<http::Response> PutObject(Ctx& ctx) {
    TM_TRY(Authorize(ctx, ctx.bucket, ctx.key, Access::kWrite));
    TM_TRY(CheckWritableKey(ctx, ctx.bucket, ctx.key));
    // Checked before the body is received (a cheap early answer) and again atomically when
    // the object is published (so two conditional writers cannot both succeed).
    TM_TRY(CheckWritePreconditions(ctx));
    objectstore::PutConditions conditions;
    if (auto none = ctx.req.headers.Get("If-None-Match"))
      conditions.if_none_match = Trim(*none) == "*";
    if (auto match = ctx.req.headers.Get("If-Match")) conditions.if_match = Unquote(*match);
    TM_ASSIGN(auto writer, store.BeginPut(ctx.bucket, ctx.key, conditions));
    TM_ASSIGN(ReceivedBody body, ReceiveBody(ctx, *writer, std::nullopt));
    ObjectInfo info;
    info.headers = StoredHeaders(ctx.req.headers);
    if (body.algorithm) {
      info.checksums[storage::ChecksumAlgorithmName(*body.algorithm)] =
          crypto::Base64Encode(body.checksum_raw);
      info.checksums["type"] = "FULL_OBJECT";
      info.checksums["algorithm"] = storage::ChecksumAlgorithmName(*body.algorithm);
    }
    TM_ASSIGN(ObjectInfo stored, writer->Commit(std::move(info)));
    http::Response r;
    r.headers.Set("ETag", Quote(stored.etag));
    if (body.algorithm) {
      r.headers.Set(storage::ChecksumHeaderName(*body.algorithm),
                    crypto::Base64Encode(body.checksum_raw));
      r.headers.Set("x-amz-checksum-type", "FULL_OBJECT");
    }
    return r;
  }

  // "x-amz-copy-source: [/]bucket/key[?versionId=…]" → (bucket, key).
  static Result<std::pair<std::string, std::string>> CopySource(const Ctx& ctx) {
    std::string source = *ctx.req.headers.Get("x-amz-copy-source");
    size_t q = source.find('?');
    if (q != std::string::npos) source = source.substr(0, q);
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
    return std::pair{src.substr(0, slash), src.substr(slash + 1)};
  }

  // x-amz-copy-source-if-(none-)match / -if-(un)modified-since against the source.
  static Result<void> CheckCopySourceConditions(const Ctx& ctx, const ObjectInfo& src_info) {
    http::Headers conditions;
    for (const auto& [hk, hv] : ctx.req.headers.entries()) {
      std::string lower = ToLower(hk);
      static constexpr char kPrefix[] = "x-amz-copy-source-";
      if (lower.starts_with(kPrefix)) conditions.Add(lower.substr(sizeof kPrefix - 1), hv);
    }
    if (Preconditions(conditions, src_info, false) != 0) {
      return Fail(S3Error(ErrorCode::kConflict, "PreconditionFailed",
                          "At least one of the pre-conditions you specified did not hold"));
    }
    return {};
  }

  Result<http::Response> CopyObject(Ctx& ctx) {
    TM_ASSIGN(auto source, CopySource(ctx));
    const auto& [src_bucket, src_key] = source;
    TM_TRY(Authorize(ctx, src_bucket, src_key, Access::kRead));
    TM_TRY(Authorize(ctx, ctx.bucket, ctx.key, Access::kWrite));
    TM_TRY(CheckWritableKey(ctx, ctx.bucket, ctx.key));
    TM_ASSIGN(ObjectInfo src_info, store.Head(src_bucket, src_key));
    TM_TRY(CheckCopySourceConditions(ctx, src_info));
    std::optional<ObjectInfo> replace;
    bool replace_meta =
        EqualsIgnoreCase(ctx.req.headers.GetOr("x-amz-metadata-directive", "COPY"), "REPLACE");
    if (replace_meta) {
      ObjectInfo info;
      info.headers = StoredHeaders(ctx.req.headers);
      info.checksums = src_info.checksums;
      replace = info;
    } else if (src_bucket == ctx.bucket && src_key == ctx.key) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "This copy request is illegal because it is trying to copy an object to "
                          "itself without changing the object's metadata."));
    }
    TM_ASSIGN(ObjectInfo copied, store.Copy(src_bucket, src_key, ctx.bucket, ctx.key, replace));
    XmlWriter x;
    x.Open("CopyObjectResult", true)
        .Element("LastModified", FormatIso8601(copied.last_modified_ms))
        .Element("ETag", Quote(copied.etag))
        .Close("CopyObjectResult");
    return Xml(200, x.Take());
  }

  // ---------------------------------------------------------------- multipart
  Result<http::Response> CreateUpload(Ctx& ctx) {
    TM_TRY(Authorize(ctx, ctx.bucket, ctx.key, Access::kWrite));
    TM_TRY(CheckWritableKey(ctx, ctx.bucket, ctx.key));
    ObjectInfo pending;
    pending.headers = StoredHeaders(ctx.req.headers);
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
    TM_ASSIGN(auto upload, store.CreateUpload(ctx.bucket, ctx.key, pending));
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

  Result<objectstore::UploadInfo> UploadFor(Ctx& ctx) {
    TM_ASSIGN(auto upload, store.GetUpload(ctx.bucket, ctx.Q("uploadId")));
    if (upload.key != ctx.key) {
      return Fail(S3Error(ErrorCode::kNotFound, "NoSuchUpload",
                          "The specified multipart upload does not exist."));
    }
    return upload;
  }

  static Result<int> PartNumber(const Ctx& ctx) {
    auto number = ParseInt(ctx.Q("partNumber"));
    if (!number || *number < 1 || *number > kMaxPartNumber) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidArgument",
                          "Part number must be an integer between 1 and 10000, inclusive"));
    }
    return static_cast<int>(*number);
  }

  static std::optional<ChecksumAlgorithm> UploadAlgorithm(const objectstore::UploadInfo& upload) {
    auto it = upload.pending.checksums.find("algorithm");
    if (it == upload.pending.checksums.end()) return std::nullopt;
    return storage::ParseChecksumAlgorithm(it->second);
  }

  // A part copied from (a byte range of) an existing object; boto3's managed copy()
  // and `aws s3 cp s3://… s3://…` use it for large objects.
  Result<http::Response> UploadPartCopy(Ctx& ctx) {
    TM_ASSIGN(auto source, CopySource(ctx));
    const auto& [src_bucket, src_key] = source;
    TM_TRY(Authorize(ctx, src_bucket, src_key, Access::kRead));
    TM_TRY(Authorize(ctx, ctx.bucket, ctx.key, Access::kWrite));
    TM_ASSIGN(int number, PartNumber(ctx));
    TM_ASSIGN(auto upload, UploadFor(ctx));
    TM_ASSIGN(ObjectInfo src_info, store.Head(src_bucket, src_key));
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
        return Fail(
            S3Error(ErrorCode::kInvalidInput, "InvalidArgument",
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
    TM_ASSIGN(auto reader, store.Get(src_bucket, src_key, offset, length, &opened));
    if (opened.etag != src_info.etag) {
      return Fail(S3Error(ErrorCode::kConflict, "PreconditionFailed",
                          "The source object changed during the copy; retry."));
    }
    std::optional<ChecksumAlgorithm> upload_alg = UploadAlgorithm(upload);
    std::optional<storage::Checksummer> checksummer;
    if (upload_alg) checksummer.emplace(*upload_alg);
    TM_ASSIGN(auto writer, store.BeginPart(ctx.bucket, upload.upload_id, number));
    std::string buffer(kUploadSlice, '\0');
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

  Result<http::Response> UploadPart(Ctx& ctx) {
    TM_TRY(Authorize(ctx, ctx.bucket, ctx.key, Access::kWrite));
    TM_ASSIGN(int number, PartNumber(ctx));
    TM_ASSIGN(auto upload, UploadFor(ctx));
    std::optional<ChecksumAlgorithm> upload_alg = UploadAlgorithm(upload);
    TM_ASSIGN(auto writer, store.BeginPart(ctx.bucket, upload.upload_id, number));
    TM_ASSIGN(ReceivedBody body, ReceiveBody(ctx, *writer, upload_alg));
    ObjectInfo info;
    if (body.algorithm) {
      info.checksums[storage::ChecksumAlgorithmName(*body.algorithm)] =
          crypto::Base64Encode(body.checksum_raw);
    }
    TM_ASSIGN(ObjectInfo stored, writer->Commit(std::move(info)));
    http::Response r;
    r.headers.Set("ETag", Quote(stored.etag));
    if (body.algorithm) {
      r.headers.Set(storage::ChecksumHeaderName(*body.algorithm),
                    crypto::Base64Encode(body.checksum_raw));
    }
    return r;
  }

  Result<http::Response> ListParts(Ctx& ctx) {
    TM_TRY(Authorize(ctx, ctx.bucket, ctx.key, Access::kRead));
    TM_ASSIGN(auto upload, UploadFor(ctx));
    TM_ASSIGN(auto parts, store.ListParts(ctx.bucket, upload.upload_id));
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

  Result<http::Response> CompleteUpload(Ctx& ctx) {
    TM_TRY(Authorize(ctx, ctx.bucket, ctx.key, Access::kWrite));
    TM_ASSIGN(std::string body, http::ReadAll(*ctx.req.body, kMaxXmlBody));
    auto found = UploadFor(ctx);
    if (!found) {
      // SDKs retry a complete that timed out; if the first one went through, the upload is
      // gone but the object is there with the ETag these parts make: answer as S3 does.
      if (found.error().Detail("s3_code") == "NoSuchUpload") {
        if (auto done = RepeatedComplete(ctx, body)) return std::move(*done);
      }
      return Fail(found.error());
    }
    objectstore::UploadInfo upload = std::move(*found);
    pugi::xml_document doc;
    if (!doc.load_buffer(body.data(), body.size())) return Fail(MalformedXml());
    pugi::xml_node root = doc.child("CompleteMultipartUpload");
    if (!root) return Fail(MalformedXml());
    TM_ASSIGN(auto stored_parts, store.ListParts(ctx.bucket, upload.upload_id));
    std::map<int, objectstore::PartInfo> by_number;
    for (auto& p : stored_parts) by_number[p.part_number] = p;

    std::vector<int> numbers;
    std::vector<const objectstore::PartInfo*> chosen;
    for (pugi::xml_node part : root.children("Part")) {
      auto n = ParseInt(Trim(part.child_value("PartNumber")));
      if (!n) return Fail(MalformedXml());
      int number = static_cast<int>(*n);
      if (!numbers.empty() && number <= numbers.back()) {
        return Fail(S3Error(
            ErrorCode::kInvalidInput, "InvalidPartOrder",
            "The list of parts was not in ascending order. Parts must be ordered by part number."));
      }
      auto it = by_number.find(number);
      std::string etag = Unquote(part.child_value("ETag"));
      if (it == by_number.end() || (!etag.empty() && etag != it->second.etag)) {
        return Fail(
            S3Error(ErrorCode::kInvalidInput, "InvalidPart",
                    "One or more of the specified parts could not be found. The part may not "
                    "have been uploaded, or the specified entity tag may not match the part's "
                    "entity tag."));
      }
      for (pugi::xml_node child : part.children()) {
        std::string name = child.name();
        if (!name.starts_with("Checksum")) continue;
        auto alg = storage::ParseChecksumAlgorithm(name.substr(8));
        if (!alg) continue;
        auto have = it->second.checksums.find(storage::ChecksumAlgorithmName(*alg));
        if (have == it->second.checksums.end() || have->second != Trim(child.child_value())) {
          return Fail(
              S3Error(ErrorCode::kInvalidInput, "InvalidPart",
                      "The checksum of part " + std::to_string(number) + " does not match."));
        }
      }
      numbers.push_back(number);
      chosen.push_back(&it->second);
    }
    if (numbers.empty()) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "MalformedXML",
                          "The XML you provided was not well-formed or did not validate against "
                          "our published schema."));
    }
    for (size_t i = 0; i + 1 < chosen.size(); i++) {
      if (chosen[i]->size < kMinPartSize) {
        return Fail(
            S3Error(ErrorCode::kInvalidInput, "EntityTooSmall",
                    "Your proposed upload is smaller than the minimum allowed object size."));
      }
    }
    std::vector<std::string> part_etags;
    for (const auto* p : chosen) part_etags.push_back(p->etag);
    ObjectInfo final_info = upload.pending;
    final_info.key = ctx.key;
    final_info.etag = MultipartEtag(part_etags);
    std::string checksum_value;
    std::optional<ChecksumAlgorithm> alg;
    std::string type;
    if (auto a = upload.pending.checksums.find("algorithm"); a != upload.pending.checksums.end()) {
      alg = storage::ParseChecksumAlgorithm(a->second);
      type = upload.pending.checksums["type"];
    }
    if (alg) {
      std::string name = storage::ChecksumAlgorithmName(*alg);
      std::string combined;
      storage::Checksummer composite(*alg);
      bool ok = true;
      for (size_t i = 0; i < chosen.size(); i++) {
        auto c = chosen[i]->checksums.find(name);
        std::optional<std::string> raw;
        if (c != chosen[i]->checksums.end()) raw = crypto::Base64Decode(c->second);
        if (!raw) {
          ok = false;
          break;
        }
        if (type == "FULL_OBJECT") {
          combined = i == 0 ? *raw : storage::CombineCrc(*alg, combined, *raw, chosen[i]->size);
        } else {
          composite.Update(*raw);
        }
      }
      if (ok) {
        checksum_value = type == "FULL_OBJECT" ? crypto::Base64Encode(combined)
                                               : crypto::Base64Encode(composite.Finish()) + "-" +
                                                     std::to_string(chosen.size());
        final_info.checksums[name] = checksum_value;
      } else {
        final_info.checksums.clear();
      }
    }
    TM_ASSIGN(ObjectInfo done,
              store.CompleteUpload(ctx.bucket, upload.upload_id, numbers, final_info));
    std::string checksum_element;
    if (alg && !checksum_value.empty()) {
      checksum_element = std::string("Checksum") + storage::ChecksumAlgorithmName(*alg);
    }
    return CompleteResult(ctx, done.etag, checksum_element, checksum_value, type);
  }

  // ETag of a multipart object: MD5 over the parts' binary MD5s, then "-<count>".
  static std::string MultipartEtag(const std::vector<std::string>& part_etags) {
    crypto::Digest etag_md5(crypto::DigestAlgorithm::kMd5);
    for (const auto& e : part_etags) etag_md5.Update(crypto::HexDecode(e).value_or(""));
    return crypto::HexEncode(etag_md5.Finish()) + "-" + std::to_string(part_etags.size());
  }

  Result<http::Response> CompleteResult(const Ctx& ctx, const std::string& etag,
                                        const std::string& checksum_element,
                                        const std::string& checksum_value,
                                        const std::string& checksum_type) {
    XmlWriter x;
    x.Open("CompleteMultipartUploadResult", true)
        .Element("Location", "/" + ctx.bucket + "/" + ctx.key)
        .Element("Bucket", ctx.bucket)
        .Element("Key", ctx.key)
        .Element("ETag", Quote(etag));
    if (!checksum_element.empty()) {
      x.Element(checksum_element, checksum_value).Element("ChecksumType", checksum_type);
    }
    x.Close("CompleteMultipartUploadResult");
    return Xml(200, x.Take());
  }

  // A complete repeated after it succeeded: the object under the key must be the one these
  // parts (every ETag given, as SDKs send them) produced. Anything else stays NoSuchUpload.
  std::optional<Result<http::Response>> RepeatedComplete(const Ctx& ctx, const std::string& body) {
    pugi::xml_document doc;
    if (!doc.load_buffer(body.data(), body.size())) return std::nullopt;
    std::vector<std::string> part_etags;
    for (pugi::xml_node part : doc.child("CompleteMultipartUpload").children("Part")) {
      std::string etag = Unquote(part.child_value("ETag"));
      if (etag.empty()) return std::nullopt;
      part_etags.push_back(ToLower(etag));
    }
    if (part_etags.empty()) return std::nullopt;
    auto head = store.Head(ctx.bucket, ctx.key);
    if (!head || head->etag != MultipartEtag(part_etags) ||
        head->part_sizes.size() != part_etags.size()) {
      return std::nullopt;
    }
    return CompleteResult(ctx, head->etag, "", "", "");
  }

  static http::Response Xml(int status, std::string body) {
    return http::Response::Text(status, "application/xml", std::move(body));
  }
};

S3Api::S3Api(objectstore::ObjectStore& store, storage::IdentityResolver& identities,
             const Clock& clock, S3ApiOptions options)
    : impl_(std::make_unique<Impl>(Impl{store, identities, clock, std::move(options)})) {}
S3Api::~S3Api() = default;

http::Response S3Api::Handle(http::Request& request) { return impl_->Handle(request); }

}  // namespace tablemere::api::s3
