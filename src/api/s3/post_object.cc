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

}  // namespace

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
  for (const char* required :
       {"key", "policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature"}) {
    if (!fields.count(required)) {
      if (std::string(required) == "x-amz-algorithm" && fields.count("awsaccesskeyid")) {
        return Fail(tablemere::s3::InvalidArgument(
            "POST uploads signed with Signature Version 2 are not accepted; sign with SigV4."));
      }
      return Fail(MissingField(required));
    }
  }
  if (fields["x-amz-algorithm"] != "AWS4-HMAC-SHA256") {
    return Fail(
        tablemere::s3::InvalidArgument("Only AWS4-HMAC-SHA256 POST signatures are accepted."));
  }

  // ---- who signed the policy
  TM_ASSIGN(Credential cred, ParseCredential(fields["x-amz-credential"]));
  TM_ASSIGN(storage::S3Identity identity,
            identities_.Resolve(cred.access_key, Field(fields, "x-amz-security-token")));
  std::string key = storage::SigningKey(identity.secret, cred.date, cred.region, cred.service);
  std::string expected = crypto::HexEncode(crypto::HmacSha256(key, fields["policy"]));
  if (!crypto::ConstantTimeEquals(expected, ToLower(Trim(fields["x-amz-signature"])))) {
    return Fail(S3Error(ErrorCode::kUnauthenticated, "SignatureDoesNotMatch",
                        "The request signature we calculated does not match the signature you "
                        "provided. Check your key and signing method."));
  }

  // ---- what the policy allows
  std::string object_key = fields["key"];
  if (size_t at = object_key.find("${filename}"); at != std::string::npos) {
    object_key.replace(at, 11, filename);
  }
  fields["key"] = object_key;
  fields["bucket"] = ctx.bucket;
  TM_ASSIGN(auto policy, tablemere::s3::ParsePostPolicy(fields["policy"]));
  TM_TRY(tablemere::s3::CheckPolicyFields(policy, fields, clock_.NowMillis()));
  if (object_key.empty()) return Fail(tablemere::s3::InvalidArgument("The key must not be empty."));
  TM_TRY(service_.CheckWritable(identity, ctx.bucket, object_key));
  if (fields.count("tagging")) {
    return Fail(S3Error(ErrorCode::kNotImplemented, "NotImplemented",
                        "Tags on POST uploads are not offered; tag the object afterwards."));
  }
  std::optional<std::string> acl_field;
  if (fields.count("acl")) acl_field = fields["acl"];
  TM_ASSIGN(std::string acl, service_.CannedAclForWrite(identity, ctx.bucket, acl_field));
  http::Headers as_headers;
  for (const auto& [name, value] : fields) as_headers.Add(name, value);
  TM_TRY(RefuseUnofferedHeaders(as_headers));
  if (!part.content_type.empty() && !fields.count("content-type")) {
    as_headers.Add("Content-Type", part.content_type);
  }

  // ---- the file
  auto range = tablemere::s3::LengthRange(policy);
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
  objectstore::ObjectInfo info;
  info.headers = StoredHeaders(as_headers);
  info.acl = acl;
  TM_ASSIGN(objectstore::ObjectInfo stored, writer->Commit(std::move(info)));

  // ---- the answer the form asked for
  const std::string etag = Quote(stored.etag);
  if (std::string redirect = Field(fields, "success_action_redirect"); !redirect.empty()) {
    http::Response r;
    r.status = 303;
    r.headers.Set("Location", redirect + (redirect.find('?') == std::string::npos ? "?" : "&") +
                                  "bucket=" + UrlEncode(ctx.bucket, true) + "&key=" +
                                  UrlEncode(object_key, true) + "&etag=" + UrlEncode(etag, true));
    r.headers.Set("ETag", etag);
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
  return r;
}

}  // namespace tablemere::api::s3
