#include "s3/conditions.h"

#include "common/strings.h"

namespace tablemere::s3 {

std::string UnquoteEtag(std::string s) {
  s = Trim(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

ConditionOutcome Evaluate(const Conditions& c, const objectstore::ObjectInfo& object, bool read) {
  auto matches = [&](const std::string& list) {
    for (const auto& tag : Split(list, ',')) {
      std::string t = UnquoteEtag(tag);
      if (t == "*" || t == object.etag) return true;
    }
    return false;
  };
  // HTTP dates have whole seconds.
  const int64_t modified_s = object.last_modified_ms / 1000;
  if (c.if_match && !matches(*c.if_match)) return ConditionOutcome::kFailed;
  if (!c.if_match && c.if_unmodified_since_ms && modified_s > *c.if_unmodified_since_ms / 1000) {
    return ConditionOutcome::kFailed;
  }
  if (c.if_none_match && matches(*c.if_none_match)) {
    return read ? ConditionOutcome::kNotModified : ConditionOutcome::kFailed;
  }
  if (!c.if_none_match && read && c.if_modified_since_ms &&
      modified_s <= *c.if_modified_since_ms / 1000) {
    return ConditionOutcome::kNotModified;
  }
  return ConditionOutcome::kProceed;
}

objectstore::PutConditions PublishConditions(const Conditions& c) {
  objectstore::PutConditions out;
  if (c.if_none_match) out.if_none_match = Trim(*c.if_none_match) == "*";
  if (c.if_match) out.if_match = UnquoteEtag(*c.if_match);
  return out;
}

}  // namespace tablemere::s3
