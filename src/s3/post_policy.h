// POST object uploads (browser forms, boto3's generate_presigned_post): the signed policy
// document and its conditions. Pure: the adapter parses the form and supplies the clock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace tablemere::s3 {

struct PolicyCondition {
  enum class Kind { kEq, kStartsWith, kContentLengthRange };
  Kind kind = Kind::kEq;
  std::string field;         // lower-case form field name, without "$" ("key", "x-amz-meta-a")
  std::string value;         // kEq / kStartsWith
  int64_t min = 0, max = 0;  // kContentLengthRange, inclusive
};

struct PostPolicy {
  int64_t expiration_ms = 0;
  std::vector<PolicyCondition> conditions;
};

// Parses the base64 policy document (the "policy" form field). Malformed: InvalidPolicyDocument.
Result<PostPolicy> ParsePostPolicy(const std::string& policy_base64);

// Checks the policy against the form fields (names lower-cased; "key" with ${filename}
// already substituted) at `now_ms`: not expired, every condition holds, and every field
// the client sent is named by a condition (S3's rule; x-amz-signature, policy, file and
// x-ignore-* fields excepted). Failures: AccessDenied "Invalid according to Policy: …".
Result<void> CheckPolicyFields(const PostPolicy& policy,
                               const std::map<std::string, std::string>& fields, int64_t now_ms);

// The content-length-range the policy allows, if it names one: {min, max}.
std::optional<std::pair<int64_t, int64_t>> LengthRange(const PostPolicy& policy);

// Parses an ISO-8601 UTC time as policies carry it ("2026-12-03T12:00:00Z", with or without
// milliseconds); -1 when malformed.
int64_t ParseIso8601(const std::string& text);

}  // namespace tablemere::s3
