// S3 tags on objects and buckets, with S3's limits: 10 tags per object and 50 per
// bucket, keys of 1–128 and values of 0–256 Unicode characters, each key once, and no
// key in the reserved "aws:" namespace.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace tablemere::s3 {

inline constexpr size_t kMaxObjectTags = 10;
inline constexpr size_t kMaxBucketTags = 50;
inline constexpr size_t kMaxTagKeyLength = 128;
inline constexpr size_t kMaxTagValueLength = 256;

enum class TagTarget { kObject, kBucket };

// Tags as sent, in order (duplicates kept so they can be refused).
using TagList = std::vector<std::pair<std::string, std::string>>;

// The tag set `tags` makes, or InvalidTag (400) naming the broken rule.
Result<std::map<std::string, std::string>> ValidateTags(const TagList& tags, TagTarget target);

// Parses the x-amz-tagging header's form ("k1=v1&k2=v2", URL-encoded).
Result<TagList> ParseTaggingHeader(const std::string& header);

}  // namespace tablemere::s3
