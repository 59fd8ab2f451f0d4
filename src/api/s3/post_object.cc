// POST object uploads: an HTML form (or boto3's generate_presigned_post) with a policy
// document signed by the uploader's key. The form's fields are read first, the file
// streams into the store; nothing is visible unless every policy condition held.
#include "api/s3/adapter.h"
#include "api/s3/form_data.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "s3/errors.h"
#include "s3/post_policy.h"

namespace tablemere::api::s3 {

using tablemere::s3::S3Error;

namespace {

constexpr size_t kMaxFieldValue = 64 * 1024;  // a policy document is the largest field
constexpr size_t kMaxFields = 200;
constexpr size_t kCopySlice = 1024 * 1024;

Error MissingField(const std::string& name) {
  return tablemere::s3::InvalidArgument("Bucket POST must contain a field named '" + name + "'.");
}

std::string Field(const std::map<std::string, std::string>& fields, const std::string& name) {
  auto it = fields.find(name);
  return it == fields.end() ? std::string() : it->second;
}

// "AKID/20261203/us-east-1/s3/aws4_request"
struct Credential {
  std::string access_key, date, region, service;
};
Result<Credential> ParseCredential(const std::string& text) {
  auto parts = Split(text, '/');
  if (parts.size() != 5 || parts[4] != "aws4_request" || parts[0].empty()) {
    return Fail(tablemere::s3::InvalidArgument("Invalid x-amz-credential in the POST form."));
  }
  return Credential{parts[0], parts[1], parts[2], parts[3]};
}

// A checksum the form asks the file to have (an x-amz-checksum-<alg> field).
struct FormChecksum {
  storage::ChecksumAlgorithm algorithm;
  std::string raw;  // the digest's bytes; "" when only the algorithm was named
};

Result<std::optional<FormChecksum>> FormChecksumOf(
    const std::map<std::string, std::string>& fields) {
  std::optional<FormChecksum> found;
  for (const auto& [name, value] : fields) {
    if (!name.starts_with("x-amz-checksum-") || name == "x-amz-checksum-algorithm" ||
        name == "x-amz-checksum-type") {
      continue;
    }
    auto algorithm = storage::ParseChecksumAlgorithm(name.substr(15));
    if (!algorithm) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "The checksum algorithm of field " + name + " is not supported."));
    }
    if (found) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "Expecting a single x-amz-checksum- field."));
    }
    auto raw = crypto::Base64Decode(Trim(value));
    // The digest's length, as the algorithm's digest of nothing has it.
    if (!raw || raw->size() != storage::Checksummer(*algorithm).Finish().size()) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "Value for " + name + " is invalid."));
    }
    found = FormChecksum{*algorithm, std::move(*raw)};
  }
  if (auto named = fields.find("x-amz-checksum-algorithm"); named != fields.end()) {
    auto algorithm = storage::ParseChecksumAlgorithm(Trim(named->second));
    if (!algorithm || (found && found->algorithm != *algorithm)) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                          "Value for x-amz-checksum-algorithm is invalid."));
    }
    if (!found) found = FormChecksum{*algorithm, ""};  // computed and stored
  }
  return found;
}

}  // namespace

// Who signed the form: SigV4 (x-amz-algorithm, -credential, -signature: an HMAC-SHA256
// of the policy with the scope's signing key), Signature Version 2 (AWSAccessKeyId and
// signature: the base64 HMAC-SHA1 of the policy with the secret), or nobody: a form with
// neither writes as an anonymous caller, where AllUsers may write.
Result<storage::S3Identity> Adapter::FormSigner(std::map<std::string, std::string>& fields) {
  const bool v4 = fields.count("x-amz-algorithm") || fields.count("x-amz-credential") ||
                  fields.count("x-amz-signature");
  const bool v2 = fields.count("awsaccesskeyid") || fields.count("signature");
  if (!v4 && !v2) {
    if (!fields.count("key")) return Fail(MissingField("key"));
    storage::S3Identity anonymous;
    anonymous.kind = storage::S3Identity::Kind::kAnonymous;
    return anonymous;
  }
  if (v4 && v2) {
    return Fail(tablemere::s3::InvalidArgument(
        "A POST form is signed with SigV4 (x-amz-*) or Signature Version 2 (AWSAccessKeyId), "
        "not both."));
  }
  const std::vector<const char*> required =
      v4 ? std::vector<const char*>{"key",
                                    "policy",
                                    "x-amz-algorithm",
                                    "x-amz-credential",
                                    "x-amz-date",
                                    "x-amz-signature"}
         : std::vector<const char*>{"key", "awsaccesskeyid", "policy", "signature"};
  for (const char* name : required) {
    if (!fields.count(name)) {
      // S3 names the fields as the form spells them.
      static const std::map<std::string, std::string> kSpelled = {
          {"awsaccesskeyid", "AWSAccessKeyId"}, {"signature", "Signature"}, {"policy", "Policy"}};
      auto spelled = kSpelled.find(name);
      return Fail(MissingField(spelled == kSpelled.end() ? name : spelled->second));
    }
  }
  const std::string& policy = fields["policy"];
  bool matches = false;
  storage::S3Identity identity;
  if (v4) {
    if (fields["x-amz-algorithm"] != "AWS4-HMAC-SHA256") {
      return Fail(
          tablemere::s3::InvalidArgument("Only AWS4-HMAC-SHA256 POST signatures are accepted."));
    }
    TM_ASSIGN(Credential cred, ParseCredential(fields["x-amz-credential"]));
    TM_ASSIGN(identity,
              identities_.Resolve(cred.access_key, Field(fields, "x-amz-security-token")));
    std::string key = storage::SigningKey(identity.secret, cred.date, cred.region, cred.service);
    std::string expected = crypto::HexEncode(crypto::HmacSha256(key, policy));
    matches = crypto::ConstantTimeEquals(expected, ToLower(Trim(fields["x-amz-signature"])));
  } else {
    TM_ASSIGN(identity, identities_.Resolve(Trim(fields["awsaccesskeyid"]),
                                            Field(fields, "x-amz-security-token")));
    std::string expected = crypto::Base64Encode(crypto::HmacSha1(identity.secret, policy));
    matches = crypto::ConstantTimeEquals(expected, Trim(fields["signature"]));
  }
  if (!matches) {
    return Fail(S3Error(ErrorCode::kUnauthenticated, "SignatureDoesNotMatch",
                        "The request signature we calculated does not match the signature you "
                        "provided. Check your key and signing method."));
  }
  return identity;
}

Result<http::Response> Adapter::PostObject(Ctx& ctx) {
  std::string boundary = FormBoundary(ctx.req.headers.GetOr("Content-Type", ""));
  if (boundary.empty()) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "MalformedPOSTRequest",
                        "The body of your POST request is not well-formed multipart/form-data."));
  }
  FormDataReader form(*ctx.req.body, boundary);

  // ---- the fields, up to the file (S3 ignores fields after it)
  std::map<std::string, std::string> fields;  // lower-cased names
  FormPart part;
  bool have_file = false;
  std::string filename;
  while (true) {
    TM_ASSIGN(bool more, form.Next(&part));
    if (!more) break;
    std::string name = ToLower(part.name);
    if (name == "file") {
      have_file = true;
      filename = part.filename;
      break;
    }
    if (fields.size() >= kMaxFields) {
      return Fail(
          S3Error(ErrorCode::kInvalidInput, "MalformedPOSTRequest", "Too many form fields."));
    }
    TM_ASSIGN(std::string value, form.ReadValue(kMaxFieldValue));
    fields[name] = std::move(value);
  }
  if (!have_file) return Fail(MissingField("file"));
  TM_ASSIGN(storage::S3Identity identity, FormSigner(fields));

  // ---- what the policy allows
  std::string object_key = fields["key"];
  if (size_t at = object_key.find("${filename}"); at != std::string::npos) {
    object_key.replace(at, 11, filename);
  }
  fields["key"] = object_key;
  fields["bucket"] = ctx.bucket;
  // An anonymous form carries no policy: what it may do is what AllUsers may.
  std::optional<tablemere::s3::PostPolicy> policy;
  if (identity.kind != storage::S3Identity::Kind::kAnonymous) {
    TM_ASSIGN(policy, tablemere::s3::ParsePostPolicy(fields["policy"]));
    TM_TRY(tablemere::s3::CheckPolicyFields(*policy, fields, clock_.NowMillis()));
  }
  if (object_key.empty()) return Fail(tablemere::s3::InvalidArgument("The key must not be empty."));
  TM_TRY(service_.CheckWritable(identity, ctx.bucket, object_key));
  std::optional<std::map<std::string, std::string>> tags;
  if (fields.count("tagging")) {
    TM_ASSIGN(tags, TaggingFromXml(fields["tagging"]));
  }
  TM_ASSIGN(std::optional<FormChecksum> checksum, FormChecksumOf(fields));
  std::optional<std::string> acl_field;
  if (fields.count("acl")) acl_field = fields["acl"];
  TM_ASSIGN(std::string acl, service_.CannedAclForWrite(identity, ctx.bucket, acl_field));
  http::Headers as_headers;
  for (const auto& [name, value] : fields) as_headers.Add(name, value);
  TM_TRY(RefuseUnofferedHeaders(as_headers, WriteKind::kNewVersion));
  TM_ASSIGN(auto asked_lock, LockRequestOf(as_headers));
  objectstore::ObjectInfo locked;
  TM_TRY(service_.LockForWrite(ctx.bucket, asked_lock, locked));
  if (!part.content_type.empty() && !fields.count("content-type")) {
    as_headers.Add("Content-Type", part.content_type);
  }

  // ---- the file
  std::optional<std::pair<int64_t, int64_t>> range;
  if (policy) range = tablemere::s3::LengthRange(*policy);
  std::optional<storage::Checksummer> summer;
  if (checksum) summer.emplace(checksum->algorithm);
  TM_ASSIGN(auto writer, store_.BeginPut(ctx.bucket, object_key, {}));
  std::string buffer(kCopySlice, '\0');
  uint64_t size = 0;
  while (true) {
    auto n = form.Read(buffer.data(), buffer.size());
    if (!n) {
      writer->Abort();
      return Fail(n.error());
    }
    if (*n == 0) break;
    size += *n;
    if (size > tablemere::s3::kMaxObjectSize ||
        (range && size > static_cast<uint64_t>(range->second))) {
      writer->Abort();
      return Fail(S3Error(ErrorCode::kInvalidInput, "EntityTooLarge",
                          "Your proposed upload exceeds the maximum allowed size"));
    }
    if (summer) summer->Update(buffer.data(), *n);
    if (auto wrote = writer->Write(buffer.data(), *n); !wrote) {
      writer->Abort();
      return Fail(wrote.error());
    }
  }
  if (range && size < static_cast<uint64_t>(range->first)) {
    writer->Abort();
    return Fail(S3Error(ErrorCode::kInvalidInput, "EntityTooSmall",
                        "Your proposed upload is smaller than the minimum allowed size"));
  }
  objectstore::ObjectInfo info = std::move(locked);
  if (checksum) {
    std::string computed = summer->Finish();
    if (checksum->raw.empty()) checksum->raw = computed;
    if (!crypto::ConstantTimeEquals(computed, checksum->raw)) {
      writer->Abort();
      return Fail(S3Error(ErrorCode::kInvalidInput, "BadDigest",
                          std::string("The ") +
                              storage::ChecksumAlgorithmName(checksum->algorithm) +
                              " you specified did not match the calculated checksum."));
    }
    const char* name = storage::ChecksumAlgorithmName(checksum->algorithm);
    info.checksums[name] = crypto::Base64Encode(checksum->raw);
    info.checksums["type"] = "FULL_OBJECT";
    info.checksums["algorithm"] = name;
  }
  info.headers = StoredHeaders(as_headers);
  info.acl = acl;
  if (tags) info.tags = std::move(*tags);
  std::string version_id;
  TM_ASSIGN(objectstore::ObjectInfo stored,
            service_.PublishWrite(ctx.bucket, object_key, [&](const std::string& id) {
              info.version_id = version_id = id;
              return writer->Commit(std::move(info));
            }));

  // ---- the answer the form asked for
  const std::string etag = Quote(stored.etag);
  if (std::string redirect = Field(fields, "success_action_redirect"); !redirect.empty()) {
    http::Response r;
    r.status = 303;
    r.headers.Set("Location", redirect + (redirect.find('?') == std::string::npos ? "?" : "&") +
                                  "bucket=" + UrlEncode(ctx.bucket, true) + "&key=" +
                                  UrlEncode(object_key, true) + "&etag=" + UrlEncode(etag, true));
    r.headers.Set("ETag", etag);
    SetVersionHeader(r, version_id);
    return r;
  }
  std::string status = Field(fields, "success_action_status");
  http::Response r;
  if (status == "201") {
    XmlWriter x;
    x.Open("PostResponse")
        .Element("Location", "/" + ctx.bucket + "/" + object_key)
        .Element("Bucket", ctx.bucket)
        .Element("Key", object_key)
        .Element("ETag", etag)
        .Close("PostResponse");
    r = Xml(201, x.Take());
  } else {
    r.status = status == "200" ? 200 : 204;
  }
  r.headers.Set("ETag", etag);
  r.headers.Set("Location", "/" + ctx.bucket + "/" + object_key);
  SetVersionHeader(r, version_id);
  return r;
}

}  // namespace tablemere::api::s3
