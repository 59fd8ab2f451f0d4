// The gate every write passes before anything is stored: a header that asks for
// semantics this server does not offer (object lock, server-side encryption, another
// storage class, website redirects, appends, unknown x-amz-* settings) is refused with the
// error a client can act on, instead of being accepted and dropped. A client told its
// data is write-protected or encrypted must be able to rely on it.
#include <array>
#include <string_view>

#include "api/s3/adapter.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {
namespace {

using tablemere::s3::InvalidRequest;
using tablemere::s3::S3Error;

// x-amz-* names a write may carry: signing and transport (SigV4, aws-chunked, trailers),
// integrity (checksums), what is stored with the object (metadata, tags, canned ACL),
// copies, conditions, and owner checks. Lower case.
constexpr std::array<std::string_view, 28> kKnown = {
    "x-amz-date",
    "x-amz-api-version",  // the AWS C++ SDK's (PyArrow's) "2006-03-01"
    "x-amz-content-sha256",
    "x-amz-security-token",
    "x-amz-user-agent",
    "x-amz-decoded-content-length",
    "x-amz-trailer",
    "x-amz-sdk-checksum-algorithm",
    "x-amz-checksum-algorithm",
    "x-amz-checksum-type",
    "x-amz-acl",
    "x-amz-tagging",
    "x-amz-tagging-directive",
    "x-amz-metadata-directive",
    "x-amz-copy-source",
    "x-amz-copy-source-range",
    "x-amz-expected-bucket-owner",
    "x-amz-source-expected-bucket-owner",
    "x-amz-request-payer",
    "x-amz-storage-class",
    "x-amz-mp-object-size",
    "x-amz-bucket-object-lock-enabled",
    "x-amz-object-ownership",
    // POST form fields, checked as headers (post_object.cc).
    "x-amz-algorithm",
    "x-amz-credential",
    "x-amz-signature",
    // Deletes: no version is retained or MFA-protected here, so these change nothing.
    "x-amz-bypass-governance-retention",
    "x-amz-mfa",
};

constexpr std::array<std::string_view, 5> kKnownPrefixes = {
    "x-amz-meta-", "x-amz-checksum-", "x-amz-copy-source-if-", "x-amz-grant-",
    "x-amz-copy-source-server-side-encryption-customer-"};

Error NotOffered(const std::string& header, const std::string& why) {
  return S3Error(ErrorCode::kNotImplemented, "NotImplemented",
                 "The header " + header + " is not offered here: " + why);
}

}  // namespace

Result<void> RefuseUnofferedHeaders(const http::Headers& headers, WriteKind kind) {
  for (const auto& [raw_name, raw_value] : headers.entries()) {
    const std::string name = ToLower(raw_name);
    if (!name.starts_with("x-amz-")) continue;
    const std::string value = Trim(raw_value);
    if (name.starts_with("x-amz-object-lock-")) {
      // Only a new version takes a lock, which its handler checks against the bucket
      // (LockRequestOf, S3Service::LockForWrite); anywhere else it would be dropped.
      if (kind == WriteKind::kNewVersion) continue;
      return Fail(InvalidRequest(raw_name +
                                 " sets object lock, which only a write of a new object "
                                 "version (PUT, copy, CreateMultipartUpload, POST) takes"));
    }
    if (name == "x-amz-bucket-object-lock-enabled") {
      if (kind == WriteKind::kNewBucket) continue;  // CreateBucket reads it
      if (ToLower(value) != "false") {
        return Fail(InvalidRequest(raw_name + " is read only when a bucket is created"));
      }
      continue;
    }
    if (name.starts_with("x-amz-server-side-encryption") ||
        name.starts_with("x-amz-copy-source-server-side-encryption")) {
      return Fail(NotOffered(raw_name,
                             "objects are not encrypted at rest by the server on "
                             "request; encrypt before upload, or send no "
                             "server-side-encryption headers"));
    }
    if (name == "x-amz-storage-class") {
      if (value != "STANDARD") {
        return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidStorageClass",
                            "The storage class you specified is not offered: only STANDARD is."));
      }
      continue;
    }
    if (name == "x-amz-object-ownership") {
      // Objects always belong to the bucket's owner and canned ACLs apply: that is
      // BucketOwnerPreferred; the other two settings would mean something else.
      if (value != "BucketOwnerPreferred") {
        return Fail(NotOffered(raw_name,
                               "objects always belong to the bucket owner "
                               "(BucketOwnerPreferred)"));
      }
      continue;
    }
    bool known = false;
    for (auto k : kKnown) known = known || name == k;
    for (auto p : kKnownPrefixes) known = known || name.starts_with(p);
    if (!known) {
      return Fail(NotOffered(raw_name,
                             "it asks for something this server does not do; send "
                             "the request without it"));
    }
  }
  return {};
}

}  // namespace tablemere::api::s3
