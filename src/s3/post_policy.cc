#include "s3/post_policy.h"

#include <nlohmann/json.hpp>

#include <ctime>
#include <optional>

#include "common/crypto.h"
#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::s3 {
namespace {

using Json = nlohmann::json;

Error InvalidPolicy(const std::string& why) {
  return S3Error(ErrorCode::kInvalidInput, "InvalidPolicyDocument", "Invalid Policy: " + why);
}
Error PolicyFailed(const std::string& why) {
  return AccessDenied("Invalid according to Policy: " + why);
}

std::string FieldName(std::string name) {
  if (name.starts_with("$")) name = name.substr(1);
  return ToLower(name);
}

// Numbers in content-length-range may be sent as JSON numbers or strings.
std::optional<int64_t> AsInt(const Json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_string()) return ParseInt(j.get<std::string>());
  return std::nullopt;
}

bool Exempt(const std::string& field) {
  // "bucket" is the request's own, from its path.
  return field == "x-amz-signature" || field == "policy" || field == "file" || field == "bucket" ||
         field.starts_with("x-ignore-") || field == "signature" || field == "awsaccesskeyid";
}

}  // namespace

int64_t ParseIso8601(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return -1;
  int64_t millis = 0;
  if (*end == '.') {
    end++;
    int digits = 0;
    while (*end >= '0' && *end <= '9') {
      if (digits < 3) millis = millis * 10 + (*end - '0');
      digits++;
      end++;
    }
    if (digits == 0) return -1;
    for (; digits < 3; digits++) millis *= 10;
  }
  if (std::string(end) != "Z") return -1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + millis;
}

Result<PostPolicy> ParsePostPolicy(const std::string& policy_base64) {
  auto raw = crypto::Base64Decode(Trim(policy_base64));
  if (!raw) return Fail(InvalidPolicy("the policy is not base64"));
  Json doc = Json::parse(*raw, nullptr, false);
  if (!doc.is_object()) return Fail(InvalidPolicy("the policy is not a JSON object"));
  PostPolicy policy;
  auto exp = doc.find("expiration");
  if (exp == doc.end() || !exp->is_string()) {
    return Fail(InvalidPolicy("Policy missing expiration"));
  }
  policy.expiration_ms = ParseIso8601(exp->get<std::string>());
  if (policy.expiration_ms < 0) return Fail(InvalidPolicy("Invalid 'expiration' value"));
  auto conditions = doc.find("conditions");
  if (conditions == doc.end() || !conditions->is_array()) {
    return Fail(InvalidPolicy("Policy missing conditions"));
  }
  for (const Json& c : *conditions) {
    if (c.is_object()) {
      // {"field": "value"}: an exact match.
      if (c.size() != 1 || !c.begin().value().is_string()) {
        return Fail(InvalidPolicy("an object condition names one field and a string"));
      }
      policy.conditions.push_back({PolicyCondition::Kind::kEq, FieldName(c.begin().key()),
                                   c.begin().value().get<std::string>(), 0, 0});
      continue;
    }
    if (!c.is_array() || c.size() != 3 || !c[0].is_string()) {
      return Fail(InvalidPolicy("a condition is an object or a three-element array"));
    }
    std::string op = ToLower(c[0].get<std::string>());
    if (op == "content-length-range") {
      auto lo = AsInt(c[1]);
      auto hi = AsInt(c[2]);
      if (!lo || !hi || *lo < 0 || *hi < *lo) {
        return Fail(InvalidPolicy("Invalid content-length-range"));
      }
      policy.conditions.push_back(
          {PolicyCondition::Kind::kContentLengthRange, "content-length", "", *lo, *hi});
      continue;
    }
    if ((op != "eq" && op != "starts-with") || !c[1].is_string() || !c[2].is_string()) {
      return Fail(InvalidPolicy("unknown condition '" + op + "'"));
    }
    policy.conditions.push_back(
        {op == "eq" ? PolicyCondition::Kind::kEq : PolicyCondition::Kind::kStartsWith,
         FieldName(c[1].get<std::string>()), c[2].get<std::string>(), 0, 0});
  }
  return policy;
}

Result<void> CheckPolicyFields(const PostPolicy& policy,
                               const std::map<std::string, std::string>& fields, int64_t now_ms) {
  if (now_ms > policy.expiration_ms) return Fail(PolicyFailed("Policy expired."));
  for (const PolicyCondition& c : policy.conditions) {
    if (c.kind == PolicyCondition::Kind::kContentLengthRange) continue;  // checked on the body
    auto it = fields.find(c.field);
    const std::string value = it == fields.end() ? "" : it->second;
    bool ok = c.kind == PolicyCondition::Kind::kEq ? (it != fields.end() && value == c.value)
                                                   : value.starts_with(c.value);
    if (c.kind == PolicyCondition::Kind::kStartsWith && it == fields.end() && !c.value.empty()) {
      ok = false;
    }
    if (!ok) {
      return Fail(
          PolicyFailed("Policy Condition failed: [\"" +
                       std::string(c.kind == PolicyCondition::Kind::kEq ? "eq" : "starts-with") +
                       "\", \"$" + c.field + "\", \"" + c.value + "\"]"));
    }
  }
  for (const auto& [name, value] : fields) {
    if (Exempt(name)) continue;
    bool named = false;
    for (const PolicyCondition& c : policy.conditions) named = named || c.field == name;
    if (!named) {
      return Fail(PolicyFailed("Extra input fields: " + name));
    }
  }
  return {};
}

std::optional<std::pair<int64_t, int64_t>> LengthRange(const PostPolicy& policy) {
  for (const PolicyCondition& c : policy.conditions) {
    if (c.kind == PolicyCondition::Kind::kContentLengthRange) return std::pair{c.min, c.max};
  }
  return std::nullopt;
}

}  // namespace tablemere::s3
