// S3's conditional requests: If-Match / If-None-Match / If-(Un)Modified-Since, evaluated
// against an object's ETag and modification time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "objectstore/object_store.h"

namespace tablemere::s3 {

// As sent; the adapter parses the dates (milliseconds, nullopt when absent or unparsable,
// which S3 ignores).
struct Conditions {
  std::optional<std::string> if_match;       // a list of (quoted) ETags, or "*"
  std::optional<std::string> if_none_match;  // likewise
  std::optional<int64_t> if_modified_since_ms;
  std::optional<int64_t> if_unmodified_since_ms;

  bool AnyWriteCondition() const { return if_match || if_none_match; }
};

enum class ConditionOutcome { kProceed, kNotModified, kFailed };

// For a read (GET/HEAD) a matching If-None-Match or an unmodified If-Modified-Since is
// kNotModified; for a write or a copy source they fail.
ConditionOutcome Evaluate(const Conditions& c, const objectstore::ObjectInfo& object, bool read);

// The part of `c` the store re-checks atomically when it publishes a write.
objectstore::PutConditions PublishConditions(const Conditions& c);

std::string UnquoteEtag(std::string s);

}  // namespace tablemere::s3
